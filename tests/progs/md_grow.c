/*
 * md_grow.c - allocations whose number follows the argument N, from
 * distinct functions, for `mprof diff` (tests/e2e/85-mprof-diff.t):
 *
 *   main > build > leaf_keep   N allocations of 48 bytes, kept
 *   main > churn               N allocations of 16 bytes, each freed
 *   main > shrink              500 - N allocations of 100 bytes, kept
 *   main > fixed               10 allocations of 512 bytes, freed (no change)
 *
 * No stdio: its buffer would be one more allocation.
 */
#include <stdlib.h>

static void *volatile sink;

__attribute__((noinline)) static void leaf_keep(int n)
{
	for (int i = 0; i < n; i++)
		sink = malloc(48);
}

__attribute__((noinline)) static void build(int n)
{
	leaf_keep(n);
}

__attribute__((noinline)) static void churn(int n)
{
	for (int i = 0; i < n; i++) {
		sink = malloc(16);
		free(sink);
	}
}

__attribute__((noinline)) static void shrink(int n)
{
	for (int i = 0; i < 500 - n; i++)
		sink = malloc(100);
}

__attribute__((noinline)) static void fixed(void)
{
	for (int i = 0; i < 10; i++) {
		sink = malloc(512);
		free(sink);
	}
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 100;

	build(n);
	churn(n);
	shrink(n);
	fixed();
	return 0;
}
