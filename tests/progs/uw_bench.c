/* uw_bench.c - nanoseconds per stack capture, the unwinder alone (no
 * monitor): build with the unwinder under test and run at several depths.
 *   cc -O2 -Ilib -Iinclude -D_GNU_SOURCE -pthread -o uw_bench \
 *      tests/progs/uw_bench.c runtime/unwind.c
 *   ./uw_bench [depth ...]        (default 10 40 300) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int unwind_capture(uint64_t *frames, int max, uint64_t ret, uint32_t *flags);

static uint64_t frames[1024];
static int got;

/* Stands for malloc: captures with its own return address as `ret`. */
__attribute__((noinline)) static void fake_malloc(void)
{
	uint32_t flags;
	got = unwind_capture(frames, 1024, (uint64_t)(uintptr_t)__builtin_return_address(0), &flags);
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

__attribute__((noinline)) static double down(int n, long iters)
{
	double r;

	if (n > 1) {
		r = down(n - 1, iters);
	} else {
		fake_malloc(); /* warm the caches */
		double t = now();
		for (long i = 0; i < iters; i++)
			fake_malloc();
		r = (now() - t) / (double)iters * 1e9;
	}
	__asm__ volatile("" ::: "memory");
	return r;
}

int main(int argc, char **argv)
{
	static const int def[] = { 6, 36, 296 };
	int nd = argc > 1 ? argc - 1 : 3;

	for (int i = 0; i < nd; i++) {
		int d = argc > 1 ? atoi(argv[i + 1]) : def[i];
		long iters = 20000000 / (d + 10);
		double ns = down(d, iters);
		printf("depth %4d: %8.1f ns per capture (%.2f ns per frame)\n", got, ns, ns / got);
	}
	return 0;
}
