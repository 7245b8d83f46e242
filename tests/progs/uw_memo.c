/*
 * uw_memo.c - stacks that a remembered walk must tell apart: the same
 * innermost frame at the same stack address, reached through different
 * callers (twin functions with identical frames, and one function called
 * from two sites), and the same chain with a different caller further out.
 * Run in check mode (tests/e2e/20-uw-check.t): a remembered walk that
 * answers for the wrong chain is a mismatch.
 *
 * Prints the number of allocations made.
 */
#include <stdio.h>
#include <stdlib.h>

static unsigned long sink, count;
static char *volatile seen; /* so -O2 keeps the malloc */

__attribute__((noinline)) static void leaf(unsigned long i)
{
	char *p = malloc(16 + i % 64);

	count++;
	seen = p;
	p[0] = (char)i;
	sink += (unsigned char)p[0];
	free(p);
}

/* Twins: identical code and frames, so leaf's sp and pc are the same. */
__attribute__((noinline)) static void twin_a(unsigned long i)
{
	leaf(i);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void twin_b(unsigned long i)
{
	leaf(i);
	__asm__ volatile("" ::: "memory");
}

/* One function, two call sites: only a return address further out differs. */
__attribute__((noinline)) static void mid(unsigned long i)
{
	if (i & 2)
		twin_a(i);
	else
		twin_b(i);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void outer(unsigned long i)
{
	if (i & 4)
		mid(i); /* site 1 */
	else
		mid(i + 1); /* site 2 */
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 20000;

	for (unsigned long i = 0; i < n; i++) {
		/* The pattern changes in runs, so a remembered walk meets a
		 * chain that differs from it only far out. */
		unsigned long j = i / 7;
		if (j % 3 == 0)
			outer(j);
		else if (j % 3 == 1)
			mid(j);
		else
			(j & 8 ? twin_a : twin_b)(j);
	}
	printf("%lu %lu\n", count, sink);
	return 0;
}
