/*
 * cf_calls.c - call counts cfprof must get exactly, each kept by the
 * program itself and printed as "name count" (tests/e2e/70-cf-calls.t):
 *
 *   rec        a recursive function, called from main with depths 0..19
 *              (rec(d) makes d + 1 calls): rec_from_main calls from main,
 *              the rest from rec itself
 *   square     a static inline function that gcc inlines at -O2 into
 *              sum_squares (no call instruction to it: the test checks
 *              with objdump), yet -finstrument-functions still calls the
 *              hooks for each inlined copy
 *   cmp        a qsort comparator: called from libc, which is not
 *              instrumented, so the hooks see cmp entered from sort_then_work
 *   sort_then_work  after qsort returns, spins for about MS ms of CPU
 *              (argument 1, default 300) in its own body: cfprof must charge
 *              that time to sort_then_work, not to cmp (the paper's hazard
 *              of a profiled function called from unprofiled code, sec. 4)
 *
 * Built with -O2 -g -finstrument-functions.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static long n_rec, n_rec_from_main, n_square, n_sum_squares, n_cmp, n_sort;
static volatile uint64_t sink;

__attribute__((noinline)) static long rec(int depth)
{
	n_rec++;
	if (depth == 0)
		return 1;
	long r = rec(depth - 1) + depth;
	__asm__ volatile("" ::: "memory");
	return r;
}

static inline long square(long x)
{
	n_square++;
	return x * x;
}

__attribute__((noinline)) static long sum_squares(long n)
{
	long s = 0;

	n_sum_squares++;
	for (long i = 0; i < n; i++)
		s += square(i);
	return s;
}

static int cmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	n_cmp++;
	return (x > y) - (x < y);
}

/* Not instrumented: a clock read is part of the caller's work. */
__attribute__((no_instrument_function)) static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + (uint64_t)ts.tv_nsec;
}

__attribute__((noinline)) static void sort_then_work(long ms)
{
	int v[1000];
	uint64_t end, x = sink | 1;

	n_sort++;
	for (int i = 0; i < 1000; i++)
		v[i] = (i * 7919) % 1000;
	qsort(v, 1000, sizeof(v[0]), cmp);
	for (int i = 1; i < 1000; i++)
		if (v[i - 1] > v[i])
			abort();
	end = cpu_ns() + (uint64_t)ms * 1000000;
	do {
		for (int i = 0; i < 20000; i++)
			x = x * 6364136223846793005ull + 1442695040888963407ull;
	} while (cpu_ns() < end);
	sink += x;
}

int main(int argc, char **argv)
{
	long ms = argc > 1 ? atol(argv[1]) : 300, r = 0;

	for (int d = 0; d < 20; d++) {
		n_rec_from_main++;
		r += rec(d);
	}
	for (int k = 0; k < 100; k++)
		r += sum_squares(1000 + k);
	sort_then_work(ms);
	printf("rec %ld\nrec_from_main %ld\nsquare %ld\nsum_squares %ld\ncmp %ld\n"
	       "sort_then_work %ld\nresult %ld\n",
	       n_rec, n_rec_from_main, n_square, n_sum_squares, n_cmp, n_sort, r);
	return 0;
}
