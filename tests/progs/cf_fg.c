/*
 * cf_fg.c - the Appel, Duba & MacQueen paper's f/g example (sec. 4): f and
 * g both call isPrime, equally often, but f asks about large primes
 * (about 30000 trial divisions each) and g about small ones (about 3000),
 * so f is responsible for about 10/11 of the time spent in isPrime.  gprof
 * apportions isPrime's time to its callers by call counts, half each,
 * which is wrong; cfprof with `--unprofiled isPrime` charges isPrime's time
 * to the function current when it was called, which is right.
 *
 * isPrime is the paper's test (Figure 1): trial division by every i from 2
 * to x (a loop here, so that isPrime is one function).  It is noinline so
 * that gprof (gcc -pg, bench/run's fg section) sees it as a function.
 *
 * The program measures its own thread CPU time: around each call of f and
 * g (inclusive: f's and g's whole cost) and around the isPrime loop inside
 * them; it prints, one "name value" per line, each as a share of the
 * program's whole CPU time, then the call counts
 * (tests/e2e/71-cf-time.t):
 *
 *   f_share g_share                 f's, g's inclusive time / total
 *   isPrime_f_share isPrime_g_share time in isPrime on behalf of f, g
 *   isPrime_share                   their sum
 *   f g isPrime isPrime_from_f isPrime_from_g main   call counts
 *   primes                          how many of the calls said "prime"
 *
 *   cf_fg [ROUNDS]   main calls f then g ROUNDS times (default 2000: about
 *                    0.8 s of CPU on a 2020s x86-64)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define PER_CALL 8 /* isPrime calls per call of f or g */

static const unsigned large[PER_CALL] = {30011, 30013, 30029, 30047, 30059, 30071, 30089, 30091};
static const unsigned small[PER_CALL] = {3001, 3011, 3019, 3023, 3037, 3041, 3049, 3061};
static long n_f, n_g, n_isprime, n_from_f, n_from_g, n_primes;
static uint64_t t_isprime_f, t_isprime_g;

/* Not instrumented: a clock read is part of the caller's work. */
__attribute__((no_instrument_function)) static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + (uint64_t)ts.tv_nsec;
}

/* test i = i >= x orelse (x mod i <> 0 andalso test (i + 1)); test 2 */
__attribute__((noinline)) int isPrime(unsigned x)
{
	unsigned i = 2;

	n_isprime++;
	while (i < x && x % i != 0)
		i++;
	return i >= x;
}

__attribute__((noinline)) void f(void)
{
	uint64_t t0;

	n_f++;
	t0 = cpu_ns();
	for (int k = 0; k < PER_CALL; k++) {
		n_from_f++;
		n_primes += isPrime(large[k]);
	}
	t_isprime_f += cpu_ns() - t0;
}

__attribute__((noinline)) void g(void)
{
	uint64_t t0;

	n_g++;
	t0 = cpu_ns();
	for (int k = 0; k < PER_CALL; k++) {
		n_from_g++;
		n_primes += isPrime(small[k]);
	}
	t_isprime_g += cpu_ns() - t0;
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 2000;
	uint64_t t_f = 0, t_g = 0, t0, total;

	for (long r = 0; r < rounds; r++) {
		t0 = cpu_ns();
		f();
		t_f += cpu_ns() - t0;
		t0 = cpu_ns();
		g();
		t_g += cpu_ns() - t0;
	}
	total = cpu_ns();
	printf("f_share %.4f\ng_share %.4f\n", (double)t_f / total, (double)t_g / total);
	printf("isPrime_f_share %.4f\nisPrime_g_share %.4f\nisPrime_share %.4f\n",
	       (double)t_isprime_f / total, (double)t_isprime_g / total,
	       (double)(t_isprime_f + t_isprime_g) / total);
	printf("f %ld\ng %ld\nisPrime %ld\nisPrime_from_f %ld\nisPrime_from_g %ld\nmain 1\nprimes "
	       "%ld\n",
	       n_f, n_g, n_isprime, n_from_f, n_from_g, n_primes);
	return 0;
}
