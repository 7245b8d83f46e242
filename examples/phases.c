/*
 * phases.c - a program that knows where its CPU time goes: three phases,
 * each in its own function, run in rounds so that they take 50%, 30% and
 * 20% of the CPU.  Rounds vary in length (5 to 15 ms), so the program is not
 * periodic at the scale of a scheduler tick: a profiler that samples only at
 * ticks would otherwise see the same phase at every sample.  Each phase measures its own thread CPU time
 * (CLOCK_THREAD_CPUTIME_ID) and the program prints the true shares, so a
 * profiler's answer can be checked against them (tests/e2e/50-cp-cpu.t).
 *
 *   phases [MS]   about MS milliseconds of CPU in all (default 1500)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static uint64_t sink;

static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + (uint64_t)ts.tv_nsec;
}

/* Each phase spins on its own arithmetic until it has used `ns` of CPU. */
__attribute__((noinline)) static void parse_input(uint64_t ns)
{
	uint64_t end = cpu_ns() + ns, x = sink | 1;

	do {
		for (int i = 0; i < 20000; i++)
			x = x * 6364136223846793005ull + 1442695040888963407ull;
	} while (cpu_ns() < end);
	sink += x;
}

__attribute__((noinline)) static void transform(uint64_t ns)
{
	uint64_t end = cpu_ns() + ns, x = sink | 1;

	do {
		for (int i = 0; i < 20000; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
		}
	} while (cpu_ns() < end);
	sink += x;
}

__attribute__((noinline)) static void write_output(uint64_t ns)
{
	uint64_t end = cpu_ns() + ns, x = sink | 1, y = 3;

	do {
		for (int i = 0; i < 20000; i++) {
			x += y;
			y = (y << 1) ^ (x >> 3);
		}
	} while (cpu_ns() < end);
	sink += x + y;
}

int main(int argc, char **argv)
{
	long ms = argc > 1 ? atol(argv[1]) : 1500;
	uint64_t spent[3] = { 0, 0, 0 }, t0, total;
	long rounds = ms / 10 > 0 ? ms / 10 : 1;

	for (long r = 0; r < rounds; r++) {
		uint64_t unit = 500000 + (uint64_t)(r * 7919 % 101) * 10000; /* 0.5-1.5 ms */
		t0 = cpu_ns();
		parse_input(5 * unit);
		spent[0] += cpu_ns() - t0;
		t0 = cpu_ns();
		transform(3 * unit);
		spent[1] += cpu_ns() - t0;
		t0 = cpu_ns();
		write_output(2 * unit);
		spent[2] += cpu_ns() - t0;
	}
	total = spent[0] + spent[1] + spent[2];
	printf("parse_input %.4f\ntransform %.4f\nwrite_output %.4f\n", (double)spent[0] / total,
	       (double)spent[1] / total, (double)spent[2] / total);
	return (int)(sink & 0);
}
