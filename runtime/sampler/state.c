/*
 * state.c - owns the sampler's shared state (cp, cp_self) and the small
 * functions every sampling path uses (cp_now, cp_warn, cp_draw, cp_credit;
 * state.h).  Its own module so that the other modules need not include
 * sampler.c's header, which includes theirs: sampler.c fills cp in and
 * starts the rest, they all read it.  cp_credit and cp_draw run in the
 * signal handler: async-signal-safe, no locks, this thread's TLS only.
 */
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "outfile.h"
#include "sink.h"
#include "state.h"

struct cp_config cp;
char cp_ended[96] = "exit";
__thread struct cp_thread cp_self __attribute__((tls_model("initial-exec")));

uint64_t cp_now(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + (uint64_t)ts.tv_nsec;
}

/* The lines said (their hashes): each is said once (a warning of a
 * thread's set-up would otherwise repeat for every thread the program
 * starts: 1.8M lines from a program that starts threads without end). */
#define WARN_LINES 64
static uint64_t cp_warned[WARN_LINES];

/* Whether the line whose hash is h is new (then it is now said). */
static int warn_new(uint64_t h)
{
	for (int i = 0; i < WARN_LINES; i++) {
		uint64_t none = 0;

		if (__atomic_load_n(&cp_warned[i], __ATOMIC_ACQUIRE) == h)
			return 0;
		if (__atomic_compare_exchange_n(&cp_warned[i], &none, h, 0, __ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE))
			return 1;
		if (none == h)
			return 0;
	}
	return 0; /* 64 different lines said: enough */
}

void cp_warn(const char *a, const char *b, const char *c)
{
	char line[512];
	size_t n = 0;
	uint64_t h = 0xcbf29ce484222325ull;
	const char *part[5] = { cp_sink.name, ": ", a, b, c };

	for (int i = 0; i < 5; i++)
		for (const char *p = part[i]; p && *p && n < sizeof line - 2; p++)
			line[n++] = *p;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)line[i]) * 0x100000001b3ull;
	if (!warn_new(h | 1))
		return;
	line[n++] = '\n';
	outfile_say(line, n);
}

/* 53 random bits: xorshift64*, per thread, so no shared state in the
 * handler. */
static uint64_t rand53(struct cp_thread *t)
{
	uint64_t x = t->rng;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	t->rng = x;
	return x * 0x2545f4914f6cdd1dull >> 11;
}

uint64_t cp_draw(struct cp_thread *t, uint64_t mean)
{
	uint64_t half;

	if (!cp.random || mean < 2)
		return mean;
	half = mean / 2;
	return mean - half + rand53(t) % (2 * half + 1);
}

uint64_t cp_draw_first(struct cp_thread *t, uint64_t mean)
{
	uint64_t half, a, b, x;

	if (!cp.random || mean < 2)
		return mean;
	/* The equilibrium density of an interval uniform on [m/2, 3m/2] is
	 * (1 - F(x))/m: flat 1/m on [0, m/2) (half the mass), then falling
	 * linearly to 0 at 3m/2, a triangle: m/2 plus the smaller of two
	 * uniform draws on [0, m). */
	half = mean / 2;
	if (rand53(t) & 1)
		x = rand53(t) % (half + 1);
	else {
		a = rand53(t) % mean;
		b = rand53(t) % mean;
		x = half + (a < b ? a : b);
	}
	return x ? x : 1;
}

uint64_t cp_credit(struct cp_thread *t, int r, uint64_t consumed)
{
	struct cp_rstate *s = &t->r[r];
	uint64_t mean = cp.interval[r], hits = 0;

	s->consumed = consumed;
	if (consumed < s->next)
		return 0;
	/* A huge step (a 1 GiB read): whole means at once, then the rest. */
	if (consumed - s->next > 64 * mean) {
		uint64_t k = (consumed - s->next) / mean;
		hits += k;
		s->next += k * mean;
	}
	while (consumed >= s->next) {
		hits++;
		s->next += cp_draw(t, mean);
	}
	return hits;
}
