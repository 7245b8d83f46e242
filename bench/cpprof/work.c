/*
 * work.c - the CPU workload of bench/cpprof/run: a fixed amount of work
 * (no clock reads: the run time is the measure of overhead), in two stages
 * that share one hot leaf.  stage_one does 3/4 of the work through
 * crunch(), stage_two 1/4, so the true inclusive share of stage_one is 0.75
 * -- a share only a correct call stack can give, since the time is spent in
 * crunch for both.  Built without frame pointers, as Debian builds code.
 *
 *   work [UNITS] [THREADS]   UNITS of ~10 ms each (default 200), in each of
 *                            THREADS threads (default 1)
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static long units = 200;

__attribute__((noinline)) static uint64_t crunch(uint64_t x, long n)
{
	for (long i = 0; i < n * 4000000; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	return x;
}

/* The "+ 1"s keep crunch from being a tail call: each stage keeps a frame. */
__attribute__((noinline)) static uint64_t stage_one(uint64_t x, long n)
{
	return crunch(x, 3 * n) + 1;
}

__attribute__((noinline)) static uint64_t stage_two(uint64_t x, long n)
{
	return crunch(x, n) + 1;
}

static void *run(void *arg)
{
	uint64_t x = (uintptr_t)arg;

	for (long u = 0; u < units / 4; u++) {
		x = stage_one(x, 1);
		x = stage_two(x, 1);
	}
	return (void *)(uintptr_t)x;
}

int main(int argc, char **argv)
{
	int threads = argc > 2 ? atoi(argv[2]) : 1;
	pthread_t t[64];
	uint64_t x = 0;

	if (argc > 1)
		units = atol(argv[1]);
	if (threads < 1 || threads > 64)
		threads = 1;
	for (int i = 1; i < threads; i++)
		pthread_create(&t[i], NULL, run, (void *)(uintptr_t)i);
	x += (uintptr_t)run(NULL);
	for (int i = 1; i < threads; i++) {
		void *r;
		pthread_join(t[i], &r);
		x += (uintptr_t)r;
	}
	printf("%llu\n", (unsigned long long)(x & 1));
	return 0;
}
