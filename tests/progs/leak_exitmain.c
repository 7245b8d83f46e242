/*
 * leak_exitmain.c - with leak_exitlib.c's library: main keeps 500 bytes,
 * registers 70 exit functions of its own (blocks glibc frees before the
 * destructors run), the first of which allocates 1,040 bytes, a block's
 * size, as the exit functions run, most likely where one of those freed
 * blocks was, and keeps them (tests/e2e/90-leaks.t).
 */
#include <stdio.h>
#include <stdlib.h>

int exitlib_ran(void);

static void *volatile kept, *volatile late;

static void none(void)
{
}

static void keep_late(void)
{
	late = calloc(1, 1040);
}

int main(void)
{
	kept = malloc(500);
	atexit(keep_late);
	for (int i = 0; i < 69; i++)
		atexit(none);
	printf("%d\n", exitlib_ran());
	return 0;
}
