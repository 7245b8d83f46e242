/* cp_spin [N]: N (default 200,000,000) multiply-adds in one function, on
 * registers only, then the process's CPU time in seconds.  For
 * 50-cp-cpu.t: a fixed amount of work, whose CPU time bare is the truth
 * that a profile's total is held to (the sampler's own cost, each
 * signal's included, is not the program's). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

__attribute__((noinline)) static double work(long n)
{
	double x = 0;

	for (long i = 0; i < n; i++)
		x = x * 1.0000001 + 1;
	return x;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 200000000;
	struct timespec ts;
	double x = work(n);

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	printf("%.4f %g\n", (double)ts.tv_sec + ts.tv_nsec / 1e9, x > 0 ? 1.0 : 0.0);
	return 0;
}
