/*
 * deep.c - bench workload: allocation under deep recursion, like the mprof
 * paper's crystal benchmark (long call chains through a recursive solver).
 *
 * R rounds (default 2000); round r recurses to depth 200 + r % 61
 * (200..260 frames) through two mutually recursive functions, allocates at
 * the bottom and at every 16th level on the way down, and frees the lot on
 * the way back up, keeping one block in 64.
 *
 * Usage: deep [rounds]
 */
#include <stdio.h>
#include <stdlib.h>

static void *kept[1 << 16];
static unsigned long nkept, sink;

__attribute__((noinline)) static unsigned long odd_level(int n, unsigned long r);

__attribute__((noinline)) static unsigned long even_level(int n, unsigned long r)
{
	char *p = NULL;
	unsigned long s;

	if (n == 0) {
		p = malloc(64 + r % 192);
		if (!p)
			abort();
		p[0] = (char)r;
		s = (unsigned char)p[0];
		if (r % 64 == 0 && nkept < sizeof kept / sizeof kept[0])
			kept[nkept++] = p;
		else
			free(p);
		return s;
	}
	if (n % 16 == 0) {
		p = malloc(24 + n % 40);
		if (!p)
			abort();
		p[0] = (char)n;
	}
	s = odd_level(n - 1, r);
	if (p) {
		s += (unsigned char)p[0];
		free(p);
	}
	__asm__ volatile("" ::: "memory"); /* no tail call */
	return s + 1;
}

__attribute__((noinline)) static unsigned long odd_level(int n, unsigned long r)
{
	unsigned long s = even_level(n - 1 < 0 ? 0 : n - 1, r);

	__asm__ volatile("" ::: "memory");
	return s + 2;
}

int main(int argc, char **argv)
{
	unsigned long rounds = argc > 1 ? strtoul(argv[1], NULL, 10) : 2000;

	for (unsigned long r = 0; r < rounds; r++)
		sink += even_level(200 + (int)(r % 61), r);
	printf("%lu %lu\n", sink, nkept);
	return 0;
}
