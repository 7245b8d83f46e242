/*
 * cp_mixres.c - CPU time, system calls and page faults in three functions
 * of their own (tests/e2e/53-cp-perf.t): 200 rounds of spin (about 2 ms
 * of arithmetic: no system call, no fault), calls (200 getppid system
 * calls) and touch (100 fresh pages, each one fault).  Under -e
 * cpu,syscalls,page-faults, spin must hold the CPU time and none of the
 * calls or faults, which the CPU clock's signals once took there.
 * Prints "ok".
 */
#include <stdio.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

static volatile unsigned long sink;

__attribute__((noinline)) static void spin(long n)
{
	for (long i = 0; i < n; i++)
		sink += (unsigned long)(i * i);
}

__attribute__((noinline)) static void calls(int n)
{
	for (int i = 0; i < n; i++)
		sink += (unsigned long)syscall(SYS_getppid);
}

__attribute__((noinline)) static void touch(int n)
{
	char *p = mmap(NULL, (size_t)n * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);

	if (p == MAP_FAILED)
		return;
	for (int i = 0; i < n; i++)
		p[(size_t)i * 4096] = 1;
	munmap(p, (size_t)n * 4096);
}

int main(void)
{
	for (int r = 0; r < 200; r++) {
		spin(2000000);
		calls(200);
		touch(100);
	}
	puts("ok");
	return 0;
}
