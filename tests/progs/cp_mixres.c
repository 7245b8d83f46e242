/*
 * cp_mixres.c - CPU time, system calls and page faults in functions of
 * their own (tests/e2e/53-cp-perf.t).
 *
 * With no argument: 200 rounds of spin (about 5 ms of arithmetic: no
 * system call, no fault), calls (200 getppid system calls) and touch (100
 * fresh pages, each one fault).  Under -e cpu,syscalls,page-faults, spin
 * must hold the CPU time and none of the calls or faults, which the CPU
 * clock's signals once took there.
 *
 * With "chains": 400 rounds of spin under a call chain 0 to 49 deep, then
 * touch of 10 pages.  The chains are many distinct stacks: under -e
 * cpu:100us the sampler's table grows as it runs, and its own first
 * touches of memory are page faults the kernel counts for the thread,
 * which must not show as the program's (in spin, or in the total).
 *
 * Prints "ok".
 */
#include <stdio.h>
#include <string.h>
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

__attribute__((noinline)) static void chain(int d, long n)
{
	if (d) {
		chain(d - 1, n);
		sink++;
	} else {
		spin(n);
	}
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "chains")) {
		for (int r = 0; r < 400; r++) {
			chain(r % 50, 200000);
			touch(10);
		}
	} else {
		for (int r = 0; r < 200; r++) {
			spin(5000000);
			calls(200);
			touch(100);
		}
	}
	puts("ok");
	return 0;
}
