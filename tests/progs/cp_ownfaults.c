/*
 * cp_ownfaults.c - page faults in touch() only: 400 rounds of 10 fresh
 * pages, each round after arithmetic in spin() under a call chain 0 to 49
 * deep (tests/e2e/53-cp-perf.t).  The chains are many distinct stacks:
 * under -e cpu:100us the sampler's table grows as it runs, and its own
 * first touches of memory are page faults the kernel counts for the
 * thread, which must not show as the program's (in spin, or in the
 * total).  Prints "ok".
 */
#include <stdio.h>
#include <sys/mman.h>

static volatile unsigned long sink;

__attribute__((noinline)) static void spin(long n)
{
	for (long i = 0; i < n; i++)
		sink += (unsigned long)(i * i);
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

int main(void)
{
	for (int r = 0; r < 400; r++) {
		chain(r % 50, 200000);
		touch(10);
	}
	puts("ok");
	return 0;
}
