/*
 * deep22.c - bench workload: every allocation from a stack of its own.
 *
 * N allocations (default 100,000), each malloc'd and freed by the
 * innermost of 21 nested calls of the noinline recursive function down()
 * below main: 22 frames, main's included.  At each of the innermost 17
 * levels that call, the next call is made from one of two call sites,
 * chosen by a bit of the allocation's number (bit k at level k+2), so the
 * first 2^17 = 131,072 allocations each come from a distinct stack: a
 * memory profiler meets a new stack at every allocation and can remember
 * nothing.  This is the worst case of issue 23's cost table ("1e5
 * distinct 22-deep stacks"), the opposite of loop.c's four stacks.
 *
 * Built -O2 -g without frame pointers, as users build.  The two sites of
 * a level do different work after the call and carry asm statements of
 * their own, so the compiler can neither merge them into one call nor
 * turn either into a tail call: each is a return address of its own.
 *
 * Built with -DCHOSEN=20 (bench/floor --callgrind), the first 2^20
 * allocations each have a stack of their own: the 1e6 distinct stacks of
 * the cost table's memory row.
 *
 * Usage: deep22 [allocations]
 */
#include <stdio.h>
#include <stdlib.h>

#define LEVELS 21 /* calls of down() below main */
#ifndef CHOSEN /* -DCHOSEN=20: 2^20 distinct stacks, for the memory row */
#define CHOSEN 17 /* innermost levels whose call site a bit chooses */
#endif

static unsigned long sink;

/* level counts down from LEVELS to 1; level 1 allocates and frees. */
__attribute__((noinline, noclone)) static unsigned long down(int level, unsigned long i)
{
	unsigned long r;

	if (level == 1) {
		size_t size = 16 + (i * 37) % 241; /* 16..256 */
		char *p = malloc(size);

		if (!p)
			abort();
		p[0] = (char)i;
		p[size - 1] = (char)(i >> 8);
		r = (unsigned char)p[0] + (unsigned char)p[size - 1];
		free(p);
		return r;
	}
	if (level <= CHOSEN + 1 && (i >> (level - 2) & 1)) {
		__asm__ volatile("# site b" ::: "memory");
		r = down(level - 1, i) * 3;
	} else {
		__asm__ volatile("# site a" ::: "memory");
		r = down(level - 1, i) + 7;
	}
	__asm__ volatile("" ::: "memory"); /* no tail call */
	return r ^ (unsigned long)level;
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 100000;

	for (unsigned long i = 0; i < n; i++)
		sink += down(LEVELS, i);
	printf("%lu\n", sink);
	return 0;
}
