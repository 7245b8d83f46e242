/*
 * cf_threads.c - four threads with known work: thread k (1..4) calls
 * work_k k x N times, each call the same fixed arithmetic (a fixed number
 * of iterations, not a time), so work_k has k/10 of the work.  Each thread
 * counts its calls and measures its own CPU time
 * (CLOCK_THREAD_CPUTIME_ID); main prints, one "name value" per line
 * (tests/e2e/71-cf-time.t):
 *
 *   work_K          calls of work_K (K x N)
 *   work_K_share    thread K's CPU time / the four threads' CPU time
 *   worker          calls of worker (4: one per thread)
 *   sum             a checksum of the work
 *
 *   cf_threads [N]   default 2000: about 1 s of CPU in all on a 2020s x86-64
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define ITERS 50000

static long n_per;
static long n_work[5], n_worker;
static uint64_t cpu[5], sums[5];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

__attribute__((no_instrument_function)) static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + (uint64_t)ts.tv_nsec;
}

/* The same work under four names (the hooks' this_fn keeps them apart). */
#define WORK(k)                                                                                    \
	__attribute__((noinline)) static uint64_t work_##k(uint64_t x)                             \
	{                                                                                          \
		n_work[k]++;                                                                       \
		for (int i = 0; i < ITERS; i++)                                                    \
			x = x * 6364136223846793005ull + 1442695040888963407ull + k;               \
		return x;                                                                          \
	}
WORK(1)
WORK(2)
WORK(3)
WORK(4)

static void *worker(void *arg)
{
	int k = (int)(intptr_t)arg;
	uint64_t x = (uint64_t)k, t0 = cpu_ns();

	pthread_mutex_lock(&lock);
	n_worker++;
	pthread_mutex_unlock(&lock);
	for (long i = 0; i < k * n_per; i++) {
		switch (k) {
		case 1:
			x = work_1(x);
			break;
		case 2:
			x = work_2(x);
			break;
		case 3:
			x = work_3(x);
			break;
		default:
			x = work_4(x);
			break;
		}
	}
	sums[k] = x;
	cpu[k] = cpu_ns() - t0;
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[5];
	uint64_t total = 0, sum = 0;

	n_per = argc > 1 ? atol(argv[1]) : 2000;
	for (int k = 1; k <= 4; k++)
		if (pthread_create(&t[k], NULL, worker, (void *)(intptr_t)k) != 0)
			return 1;
	for (int k = 1; k <= 4; k++)
		pthread_join(t[k], NULL);
	for (int k = 1; k <= 4; k++)
		total += cpu[k], sum ^= sums[k];
	for (int k = 1; k <= 4; k++)
		printf("work_%d %ld\n", k, n_work[k]);
	for (int k = 1; k <= 4; k++)
		printf("work_%d_share %.4f\n", k, (double)cpu[k] / total);
	printf("worker %ld\nsum %llu\n", n_worker, (unsigned long long)sum);
	return 0;
}
