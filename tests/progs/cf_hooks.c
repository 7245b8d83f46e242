/*
 * cf_hooks.c - the hooks' own time apart (tests/e2e/71-cf-time.t): loop()
 * calls the empty tiny() N times (argument 1, default 20000000), where
 * the time goes into the hooks that -finstrument-functions puts around
 * it; spin() then spins for about MS ms of CPU (argument 2, default 300)
 * in its own body, calling nothing.  Prints each phase's share of the two
 * (CLOCK_THREAD_CPUTIME_ID) and the calls: "loop SHARE", "spin SHARE",
 * "tiny N".
 *
 * Built with -O2 -g -finstrument-functions.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

__attribute__((noinline)) static void tiny(long i)
{
	sink += (unsigned long)i;
}

__attribute__((noinline)) static void loop(long n)
{
	for (long i = 0; i < n; i++)
		tiny(i);
}

__attribute__((noinline)) static void spin(double ms)
{
	double end = now() + ms / 1000;
	unsigned long x = 1;

	while (now() < end)
		for (int i = 0; i < 20000; i++)
			x = x * 6364136223846793005ul + 1442695040888963407ul;
	sink = x;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 20000000;
	double ms = argc > 2 ? atof(argv[2]) : 300, t0 = now(), t1, t2;

	loop(n);
	t1 = now();
	spin(ms);
	t2 = now();
	printf("loop %.4f\nspin %.4f\ntiny %ld\n", (t1 - t0) / (t2 - t0), (t2 - t1) / (t2 - t0), n);
	return 0;
}
