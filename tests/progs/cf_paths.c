/*
 * cf_paths.c - a program of many distinct call paths, for cfprof's cost
 * per path (tests/e2e/77-cf-paths.t): 32 functions, each calling three
 * of them picked by a fixed pseudo-random sequence, DEPTH levels down
 * (argument 1, default 11: 265,720 calls, almost every one on a path of
 * its own).  A node of a path has up to 32 children: some have more than
 * cfprof keeps on their list and go to its table, most have a few.
 * Prints each function's calls ("fN COUNT"), and on stderr its peak RSS
 * ("hwm KB", /proc/self/status's VmHWM: the profiler's part included).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void fn(int);
static fn *tab[32];
static unsigned long calls[32];
static unsigned long long x = 88172645463325252ull;

__attribute__((no_instrument_function)) static unsigned next(void)
{
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return (unsigned)x;
}

#define F(n)                                                                                 \
	__attribute__((noinline)) static void f##n(int d)                                    \
	{                                                                                    \
		calls[n]++;                                                                  \
		if (d <= 0)                                                                  \
			return;                                                              \
		for (int i = 0; i < 3; i++)                                                  \
			tab[next() & 31](d - 1);                                             \
	}
F(0) F(1) F(2) F(3) F(4) F(5) F(6) F(7) F(8) F(9) F(10) F(11) F(12) F(13) F(14) F(15)
F(16) F(17) F(18) F(19) F(20) F(21) F(22) F(23) F(24) F(25) F(26) F(27) F(28) F(29) F(30)
F(31)

static fn *tab[32] = { f0,  f1,  f2,  f3,  f4,  f5,  f6,  f7,  f8,  f9,  f10,
		       f11, f12, f13, f14, f15, f16, f17, f18, f19, f20, f21,
		       f22, f23, f24, f25, f26, f27, f28, f29, f30, f31 };

int main(int argc, char **argv)
{
	int depth = argc > 1 ? atoi(argv[1]) : 11;

	f0(depth);
	for (int i = 0; i < 32; i++)
		printf("f%d %lu\n", i, calls[i]);
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	while (f && fgets(line, sizeof line, f))
		if (!strncmp(line, "VmHWM:", 6))
			fprintf(stderr, "hwm %ld\n", strtol(line + 6, NULL, 10));
	if (f)
		fclose(f);
	return 0;
}
