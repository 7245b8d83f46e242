/*
 * lifetime.c - owns the lifetime samples (lifetime_*): their slots, the
 * histograms of their stacks, and the save's LIFETIMES section.  Why and
 * how: lifetime.h.  Everything here is on rare paths, under one lock.
 */
#include "lifetime.h"
#include "lock.h"

#define LT_HIST 4096 /* stacks with a histogram, at most (a power of 2) */

struct slot {
	uint32_t idx, used;
	uint64_t ns, bytes; /* born at, after */
};

struct hist {
	uint32_t idx, used;
	uint64_t born;
	uint64_t t[FORMAT_LT_BUCKETS], b[FORMAT_LT_BUCKETS];
};

static struct lock lt_lk = LOCK_INIT;
static struct slot lt_slot[LT_SLOTS];
static uint32_t lt_free[LT_SLOTS], lt_nfree, lt_ready;
static struct hist lt_hist[LT_HIST];
static uint32_t lt_nhist;

void lifetime_restart(uint64_t e)
{
	(void)e;
	if (lock_take(&lt_lk, "the lifetimes' lock") < 0)
		return;
	/* Only a table that was used: a clear one stays untouched (its
	 * 400 KiB are no memory until a stack is sampled). */
	for (uint32_t i = 0; lt_nhist && i < LT_HIST; i++)
		lt_hist[i].used = 0;
	lt_nhist = 0;
	lock_give(&lt_lk);
}

/* Stack idx's histogram (made), or NULL: the table is full. */
static struct hist *hist(uint32_t idx)
{
	uint32_t h = (idx * 0x9e3779b1u) >> 20 & (LT_HIST - 1);

	for (uint32_t n = 0; n < LT_HIST; n++, h = (h + 1) & (LT_HIST - 1)) {
		struct hist *x = &lt_hist[h];

		if (x->used && x->idx == idx)
			return x;
		if (!x->used) {
			if (lt_nhist >= LT_HIST / 2)
				return NULL; /* half full: probes stay short */
			*x = (struct hist){ .idx = idx, .used = 1 };
			lt_nhist++;
			return x;
		}
	}
	return NULL;
}

uint32_t lifetime_sample(uint32_t idx, uint64_t ns, uint64_t allocated)
{
	struct hist *x;
	uint32_t k;

	if (idx >= LT_IDX0 || lock_try(&lt_lk) != 0)
		return idx;
	if (!lt_ready) {
		for (k = 0; k < LT_SLOTS; k++)
			lt_free[k] = LT_SLOTS - 1 - k;
		lt_nfree = LT_SLOTS;
		lt_ready = 1;
	}
	if (!lt_nfree || !(x = hist(idx))) {
		lock_give(&lt_lk);
		return idx;
	}
	k = lt_free[--lt_nfree];
	lt_slot[k] = (struct slot){ idx, 1, ns, allocated };
	x->born++;
	lock_give(&lt_lk);
	return LT_IDX0 + k;
}

/* The bucket of v among limits lim[0..FORMAT_LT_BUCKETS-2] (ascending). */
static int bucket(uint64_t v, const uint64_t *lim)
{
	int k = 0;

	while (k < FORMAT_LT_BUCKETS - 1 && v >= lim[k])
		k++;
	return k;
}

uint32_t lifetime_freed(uint32_t idx, uint64_t ns, uint64_t allocated)
{
	static const uint64_t tlim[FORMAT_LT_BUCKETS - 1] = {
		10000ull, 1000000ull, 100000000ull, 10000000000ull, /* 10 us, 1 ms, 100 ms, 10 s */
	};
	static const uint64_t blim[FORMAT_LT_BUCKETS - 1] = {
		4ull << 10, 256ull << 10, 16ull << 20, 1ull << 30,
	};
	struct slot *s = &lt_slot[idx - LT_IDX0];
	struct hist *x;
	uint32_t real;

	if (lock_take(&lt_lk, "the lifetimes' lock") < 0)
		return UINT32_MAX; /* counted as an unknown free */
	if (!s->used) {
		lock_give(&lt_lk);
		return UINT32_MAX;
	}
	real = s->idx;
	s->used = 0;
	lt_free[lt_nfree++] = idx - LT_IDX0;
	if (real >= stacks_base() && (x = hist(real)) != NULL && x->born) {
		x->t[bucket(ns > s->ns ? ns - s->ns : 0, tlim)]++;
		x->b[bucket(allocated > s->bytes ? allocated - s->bytes : 0, blim)]++;
	}
	lock_give(&lt_lk);
	return real;
}

uint32_t lifetime_real(uint32_t idx)
{
	if (!lifetime_is(idx))
		return idx;
	/* Read without the lock (the leak scan, at exit): a slot in use
	 * keeps its index until its object is freed. */
	return lt_slot[idx - LT_IDX0].used ? lt_slot[idx - LT_IDX0].idx : UINT32_MAX;
}

void lifetime_put(struct format_writer *w, uint32_t base, uint32_t count)
{
	uint32_t n = 0, i;
	int held = lock_take(&lt_lk, "the lifetimes' lock") == 0;

	/* A table no stack was sampled into is left untouched: read, its
	 * 384 KiB were 96 page faults at the exit of every short process. */
	for (i = 0; lt_nhist && i < LT_HIST; i++)
		n += lt_hist[i].used && lt_hist[i].born && lt_hist[i].idx >= base &&
		     lt_hist[i].idx < count;
	format_begin_section(w, FORMAT_SEC_LIFETIMES);
	format_put_u32(w, FORMAT_LT_BUCKETS);
	format_put_u32(w, n);
	for (i = 0; n && i < LT_HIST; i++) {
		const struct hist *x = &lt_hist[i];
		uint64_t dead = 0;

		if (!x->used || !x->born || x->idx < base || x->idx >= count)
			continue;
		format_put_u64(w, x->idx - base);
		format_put_u64(w, x->born);
		for (int k = 0; k < FORMAT_LT_BUCKETS; k++) {
			format_put_u64(w, x->t[k]);
			dead += x->t[k];
		}
		for (int k = 0; k < FORMAT_LT_BUCKETS; k++)
			format_put_u64(w, x->b[k]);
		format_put_u64(w, x->born > dead ? x->born - dead : 0);
	}
	format_end_section(w);
	if (held)
		lock_give(&lt_lk);
}

void lifetime_lock_reinit(void)
{
	lock_reinit(&lt_lk);
}
