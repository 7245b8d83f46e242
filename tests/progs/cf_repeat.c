/*
 * cf_repeat.c - direct recursion, which cfprof counts as repeats of the
 * recursion's first entry (runtime/cfprof/tree.h: reps), where the exit
 * hooks are hard to tell apart:
 *
 *   vrec    void, 2000 deep, 3 times, leafv at the bottom: gcc and clang
 *           jump to the exit hook after the epilogue (its stack pointer
 *           is then the caller's frame, the same for a repeat's exit as
 *           for the first entry's)
 *   vrec2   void, 300 deep, 3 times, calling inner before and after
 *   jr      1000 deep, twice, with a setjmp at depth 500 that a longjmp
 *           at depth 1000 lands on: the repeats from 500 up keep running
 *           (and the ones from 401 call mid on their way out)
 *   after   1000 calls from main, before the jumps and after
 *
 * Each function counts its own calls; prints "name count"
 * (tests/e2e/70-cf-calls.t).
 */
#include <setjmp.h>
#include <stdio.h>

static long n_vrec, n_vrec2, n_leafv, n_inner, n_jr, n_mid, n_after;
static jmp_buf jb;
static volatile long sink;

__attribute__((noinline)) void leafv(long d)
{
	n_leafv++;
	sink += d;
}

__attribute__((noinline)) void vrec(long d)
{
	n_vrec++;
	if (d)
		vrec(d - 1);
	else
		leafv(d);
}

__attribute__((noinline)) void inner(void)
{
	n_inner++;
}

__attribute__((noinline)) void vrec2(long d)
{
	n_vrec2++;
	inner();
	if (d)
		vrec2(d - 1);
	inner();
}

__attribute__((noinline)) void mid(long d)
{
	n_mid++;
	sink += d;
}

__attribute__((noinline)) long jr(long d)
{
	n_jr++;
	if (d == 500 && setjmp(jb))
		return 7;
	if (d == 1000)
		longjmp(jb, 1);
	long r = jr(d + 1) + 1;
	if (d > 400)
		mid(d);
	__asm__ volatile("" ::: "memory");
	return r;
}

__attribute__((noinline)) void after(long i)
{
	n_after++;
	sink += i;
}

int main(void)
{
	for (int k = 0; k < 3; k++)
		vrec(2000);
	for (int k = 0; k < 3; k++)
		vrec2(300);
	for (long i = 0; i < 1000; i++)
		after(i);
	for (int k = 0; k < 2; k++)
		sink += jr(0);
	for (long i = 0; i < 1000; i++)
		after(i);
	printf("vrec %ld\nvrec2 %ld\nleafv %ld\ninner %ld\njr %ld\nmid %ld\nafter %ld\n", n_vrec,
	       n_vrec2, n_leafv, n_inner, n_jr, n_mid, n_after);
	return 0;
}
