/*
 * uw_nocfi.c - allocations under a function with no CFI (no FDE covers
 * it), as every C function a Go program calls is under Go's assembly
 * runtime.asmcgocall: main calls nocfi_call (assembly, no .cfi_
 * directives), which calls work, whose N (argv[1], default 20000)
 * malloc+free pairs are made there.  libgcc's unwinder ends the stack at
 * nocfi_call's frame (tests/e2e/20-uw-check.t).
 */
#include <stdlib.h>

void nocfi_call(void (*fn)(long), long n);

__asm__(".text\n"
	".globl nocfi_call\n"
	".type nocfi_call, @function\n"
	"nocfi_call:\n"
	"\tpushq %rbx\n"
	"\tmovq %rdi, %rax\n"
	"\tmovq %rsi, %rdi\n"
	"\tcall *%rax\n"
	"\tpopq %rbx\n"
	"\tret\n"
	".size nocfi_call, .-nocfi_call\n");

static void *volatile sink;

__attribute__((noinline)) static void work(long n)
{
	for (long i = 0; i < n; i++) {
		sink = malloc(32);
		free(sink);
	}
}

int main(int argc, char **argv)
{
	nocfi_call(work, argc > 1 ? atol(argv[1]) : 20000);
	return 0;
}
