/*
 * loop.c - bench workload: malloc+free pairs under a moderately deep stack.
 *
 * N pairs (default 2,000,000), each made at call depth 8..11 below main
 * (depth i % 4 + 8, so four distinct stacks of each call site), sizes
 * 16..512 varying with i.  The chain is noinline functions that do work
 * after the call, so the compiler makes neither inlined frames nor tail
 * calls: every level is a real frame the unwinder must walk.  This is the
 * "allocation-heavy loop" of DESIGN.md (heaptrack ~15x there).
 *
 * Usage: loop [pairs]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned long sink;

__attribute__((noinline)) static unsigned long leaf(unsigned long i)
{
	size_t size = 16 + (i * 37) % 497; /* 16..512 */
	char *p = malloc(size);

	if (!p)
		abort();
	p[0] = (char)i;
	p[size - 1] = (char)(i >> 8);
	unsigned long r = (unsigned char)p[0] + (unsigned char)p[size - 1];
	free(p);
	return r;
}

/* One call level: recurse until depth is used up, then allocate. */
__attribute__((noinline)) static unsigned long level(int depth, unsigned long i)
{
	unsigned long r = depth > 1 ? level(depth - 1, i) : leaf(i);

	__asm__ volatile("" ::: "memory"); /* no tail call */
	return r + (unsigned long)depth;
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 2000000;

	for (unsigned long i = 0; i < n; i++)
		sink += level((int)(i % 4) + 7, i); /* main > level x7..10 > leaf: 8..11 */
	printf("%lu\n", sink);
	return 0;
}
