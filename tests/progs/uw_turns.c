/*
 * uw_turns.c - chains that take turns: the same innermost frame (one call
 * site of malloc) reached at four stack depths in rotation, 0 1 2 3 0 1 ...
 * Each chain's frame 0 has its own sp, so each is a walk worth remembering,
 * however the remembered walks' sets fall: tests/e2e/20-uw-check.t runs it
 * against a runtime whose walks all share one set, where chains must not
 * keep each other out.
 *
 * Usage: uw_turns [allocations]; prints the number made.
 */
#include <stdio.h>
#include <stdlib.h>

static unsigned long count;
static char *volatile seen; /* so -O2 keeps the malloc */

__attribute__((noinline)) static void leaf(unsigned long i)
{
	char *p = malloc(24);

	count++;
	seen = p;
	p[0] = (char)i;
	free(p);
}

/* depth more frames above leaf, each a real frame (no tail call). */
__attribute__((noinline)) static void down(int depth, unsigned long i)
{
	if (depth > 0)
		down(depth - 1, i);
	else
		leaf(i);
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 20000;

	for (unsigned long i = 0; i < n; i++)
		down((int)(i % 4), i);
	printf("%lu\n", count);
	return 0;
}
