/*
 * two_sites.c - two calls of F on one line, a third on the next (cpprof's
 * `sites on`, tests/e2e/37-cpprof-mprof.t): the line's two call sites
 * are one site to a reader of file:line.  F allocates n bytes: 10 and 20
 * from line A, 40 from line B, 10 times each, each freed at once; with
 * an argument, none freed (mprof timeline: one stack as three sites).
 */
#include <stdlib.h>

static void *volatile keep;
static int kept;

__attribute__((noinline)) void *F(size_t n)
{
	return malloc(n);
}

static void done(void *p)
{
	if (!kept)
		free(p);
}

int main(int argc, char **argv)
{
	kept = argc > 1;
	(void)argv;
	for (int i = 0; i < 10; i++) {
		keep = F(10); done(keep); keep = F(20); done(keep); /* line A */
		keep = F(40); done(keep);                           /* line B */
	}
	return 0;
}
