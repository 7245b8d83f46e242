/*
 * uw_shift.c - recursions whose chain changes in the middle between two
 * allocations: the unwinder's previous walk matches the new one at some
 * frame, then differs further out, then matches again (test 20, check mode).
 *
 * Round r recurses through two mutually recursive functions to a depth that
 * changes with r; one of them calls the other from one of two call sites,
 * chosen by (level + r) % 7, so the return addresses on the way up differ
 * from the previous round's every few frames while the stack addresses
 * line up.  Allocations at the bottom and every 8 levels on the way down.
 * The last rounds go past 1024 frames (the monitor's depth limit), where
 * what is taken from the previous walk must stop at the limit.
 *
 * Usage: uw_shift [rounds]
 */
#include <stdio.h>
#include <stdlib.h>

static unsigned long sink;

__attribute__((noinline)) static unsigned long down_b(int n, unsigned long r);

__attribute__((noinline)) static unsigned long down_a(int n, unsigned long r)
{
	unsigned long s;
	char *p = NULL;

	if (n <= 0) {
		p = malloc(32 + r % 64);
		if (!p)
			abort();
		p[0] = (char)r;
		s = (unsigned char)p[0];
		free(p);
		return s;
	}
	if (n % 8 == 0 && !(p = malloc(16 + (unsigned)n % 24)))
		abort();
	if ((n + (int)r) % 7 == 0)
		s = down_b(n - 1, r) * 3; /* one call site */
	else
		s = down_b(n - 1, r) + 5; /* the other */
	free(p);
	__asm__ volatile("" ::: "memory"); /* no tail call */
	return s;
}

__attribute__((noinline)) static unsigned long down_b(int n, unsigned long r)
{
	unsigned long s = down_a(n - 1, r);

	__asm__ volatile("" ::: "memory");
	return s + 1;
}

int main(int argc, char **argv)
{
	unsigned long rounds = argc > 1 ? strtoul(argv[1], NULL, 10) : 400;

	for (unsigned long r = 0; r < rounds; r++)
		sink += down_a(40 + (int)(r % 37) * 3, r);
	/* Past the depth limit: the frames kept stop at it. */
	for (unsigned long r = 0; r < 20; r++)
		sink += down_a(1010 + (int)(r % 5) * 7, r);
	printf("%lu\n", sink);
	return 0;
}
