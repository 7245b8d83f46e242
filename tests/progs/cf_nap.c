/*
 * cf_nap.c - real time where a thread is blocked: spin() burns CPU for
 * MS milliseconds, nap() sleeps as long in the kernel (nanosleep), three
 * rounds each.  Prints the wall time each spent, measured with its own
 * clock, as fractions of both.  Under cfprof -e real, a blocked thread's
 * current function is charged by the sampler's watcher: nap must get its
 * real time though it never runs; under -e cpu it gets nothing.
 *
 *   cf_nap [MS]
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static volatile unsigned long sink;

__attribute__((noinline)) void spin(long ms)
{
	double end = now() + (double)ms / 1000;
	unsigned long x = 1;

	while (now() < end)
		for (int i = 0; i < 10000; i++)
			x = x * 6364136223846793005ul + 1;
	sink = x;
}

__attribute__((noinline)) void nap(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
	long ms = argc > 1 ? atol(argv[1]) : 100;
	double s = 0, n = 0, t;

	for (int r = 0; r < 3; r++) {
		t = now();
		spin(ms);
		s += now() - t;
		t = now();
		nap(ms);
		n += now() - t;
	}
	printf("spin %.4f\nnap %.4f\n", s / (s + n), n / (s + n));
	return 0;
}
