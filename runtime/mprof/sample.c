/*
 * sample.c - owns the sampled monitor's arithmetic (sample_*): the
 * exponential distances between samples and the integer weight of a
 * sample.  Why and how: sample.h.
 */
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "sample.h"

#define LN2 0.69314718055994530942

double sample_ln(double x)
{
	uint64_t b;
	double m, s, s2, t, sum;
	int e;

	memcpy(&b, &x, sizeof b);
	/* x = m * 2^e, m in [sqrt(1/2), sqrt(2)): the series below converges
	 * fast (|s| < 0.172). */
	e = (int)((b >> 52) & 0x7ff) - 1023;
	b = (b & 0x000fffffffffffffull) | 0x3ff0000000000000ull;
	memcpy(&m, &b, sizeof m);
	if (m > 1.41421356237309504880) {
		m /= 2;
		e++;
	}
	/* ln m = 2 atanh(s), s = (m - 1) / (m + 1). */
	s = (m - 1) / (m + 1);
	s2 = s * s;
	t = s;
	sum = 0;
	for (int k = 1; k < 40; k += 2) {
		sum += t / k;
		t *= s2;
	}
	return 2 * sum + e * LN2;
}

double sample_one_minus_exp(double x)
{
	double r, t, sum, scale = 1;
	int k;

	if (x > 745)
		return 1;
	if (x < 1e-4) /* 1 - e^-x by its series: no cancellation */
		return x - x * x / 2 + x * x * x / 6;
	/* e^-x = 2^-k e^-r, 0 <= r < ln 2 */
	k = (int)(x / LN2);
	r = x - k * LN2;
	t = 1;
	sum = 1;
	for (int i = 1; i < 30; i++) {
		t *= -r / i;
		sum += t;
	}
	while (k-- > 0)
		scale /= 2;
	return 1 - sum * scale;
}

static uint64_t next_u64(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545f4914f6cdd1dull;
}

uint64_t sample_seed;

int64_t sample_next(uint64_t *rng, uint64_t r)
{
	double u, d;

	if (!*rng) {
		struct timespec ts;
		uint64_t tid = (uint64_t)syscall(SYS_gettid);

		clock_gettime(CLOCK_MONOTONIC, &ts);
		/* A seed given: the same samples every run, in the main
		 * thread at least (another's thread id differs). */
		if (sample_seed)
			*rng = (sample_seed * 0x9e3779b97f4a7c15ull ^
				(tid - (uint64_t)getpid()) * 0xbf58476d1ce4e5b9ull) |
			       1;
		else
			*rng = (tid << 32 ^ (uint64_t)ts.tv_nsec ^ (uint64_t)(uintptr_t)rng) | 1;
	}
	/* u uniform in (0, 1]: -ln u is exponential of mean 1. */
	u = (double)((next_u64(rng) >> 11) + 1) * (1.0 / 9007199254740992.0);
	d = -sample_ln(u) * (double)r;
	return d < 1 ? 1 : d > 9.0e18 ? (int64_t)9e18 : (int64_t)d;
}

uint64_t sample_count_draw(uint64_t n, uint64_t r, uint64_t *rng, int *up)
{
	double w = 1 / sample_one_minus_exp((double)n / (double)r);
	uint64_t whole = (uint64_t)w;

	*up = n && (double)(next_u64(rng) >> 11) * (1.0 / 9007199254740992.0) < w - (double)whole;
	return n ? whole + (uint64_t)*up : 1;
}

uint64_t sample_count_up(uint64_t n, uint64_t r, int up)
{
	if (n == 0)
		return 1;
	return (uint64_t)(1 / sample_one_minus_exp((double)n / (double)r)) + (uint64_t)(up != 0);
}

uint64_t sample_count(uint64_t n, uint64_t r, uintptr_t p)
{
	double w = 1 / sample_one_minus_exp((double)n / (double)r), f;
	uint64_t whole, h = (uint64_t)p * 0x9e3779b97f4a7c15ull;

	if (n == 0)
		return 1;
	whole = (uint64_t)w;
	f = w - (double)whole;
	h ^= h >> 29;
	/* The fraction by the address's hash, a uniform draw in [0, 1). */
	return whole + ((double)(h >> 11) * (1.0 / 9007199254740992.0) < f);
}
