/*
 * two_sites.c - two calls of F on one line, a third on the next (cpprof's
 * `sites on`, tests/e2e/37-cpprof-mprof.t): the line's two call sites
 * are one site to a reader of file:line.  F allocates n bytes: 10 and 20
 * from line A, 40 from line B, 10 times each.
 */
#include <stdlib.h>

static void *volatile keep;

__attribute__((noinline)) void *F(size_t n)
{
	return malloc(n);
}

int main(void)
{
	for (int i = 0; i < 10; i++) {
		keep = F(10); free(keep); keep = F(20); free(keep); /* line A */
		keep = F(40); free(keep);                           /* line B */
	}
	return 0;
}
