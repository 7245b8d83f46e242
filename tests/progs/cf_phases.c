/*
 * cf_phases.c - examples/phases.c for cfprof: three phases that take 50%,
 * 30% and 20% of the CPU, each a `static inline` function that gcc inlines
 * at -O2 into their one caller, run_rounds (the test checks with objdump
 * that no call instruction reaches them).  A program-counter profiler
 * charges all their time to run_rounds; cfprof, told by the hooks gcc
 * keeps in the inlined copies, must charge each phase its own (the paper's
 * sec. 4).  Rounds vary in length (0.5-1.5 ms units), so the program is
 * not periodic at the scale of a timer tick.  run_rounds measures each
 * phase's thread CPU time and main prints the true shares, "name share"
 * (tests/e2e/71-cf-time.t), then the phases' call counts, "calls_name count".
 *
 *   cf_phases [MS]   about MS milliseconds of CPU in all (default 1200)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static uint64_t sink;
static long calls[3];

/* Not instrumented: a clock read is part of the phase that reads it. */
__attribute__((no_instrument_function)) static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + (uint64_t)ts.tv_nsec;
}

/* Each phase spins on its own arithmetic until it has used `ns` of CPU. */
static inline void parse_input(uint64_t ns)
{
	uint64_t end = cpu_ns() + ns, x = sink | 1;

	calls[0]++;
	do {
		for (int i = 0; i < 20000; i++)
			x = x * 6364136223846793005ull + 1442695040888963407ull;
	} while (cpu_ns() < end);
	sink += x;
}

static inline void transform(uint64_t ns)
{
	uint64_t end = cpu_ns() + ns, x = sink | 1;

	calls[1]++;
	do {
		for (int i = 0; i < 20000; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
		}
	} while (cpu_ns() < end);
	sink += x;
}

static inline void write_output(uint64_t ns)
{
	uint64_t end = cpu_ns() + ns, x = sink | 1, y = 3;

	calls[2]++;
	do {
		for (int i = 0; i < 20000; i++) {
			x += y;
			y = (y << 1) ^ (x >> 3);
		}
	} while (cpu_ns() < end);
	sink += x + y;
}

__attribute__((noinline)) static void run_rounds(long rounds, uint64_t spent[3])
{
	uint64_t t0;

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
}

int main(int argc, char **argv)
{
	long ms = argc > 1 ? atol(argv[1]) : 1200;
	uint64_t spent[3] = {0, 0, 0}, total;
	long rounds = ms / 10 > 0 ? ms / 10 : 1;

	run_rounds(rounds, spent);
	total = spent[0] + spent[1] + spent[2];
	printf("parse_input %.4f\ntransform %.4f\nwrite_output %.4f\n", (double)spent[0] / total,
	       (double)spent[1] / total, (double)spent[2] / total);
	printf("calls_parse_input %ld\ncalls_transform %ld\ncalls_write_output %ld\n", calls[0],
	       calls[1], calls[2]);
	return (int)(sink & 0);
}
