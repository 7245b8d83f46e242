/*
 * monitor_rec.h - the monitor's recording of an allocation whose stack
 * the unwinder remembers (monitor.c's part of the hot path, inline): for
 * mon_alloc, and for malloc's own copy (malloc.c's malloc_on), where it is
 * inlined so that the most frequent event saves and restores the
 * registers once, not in two functions.  The walk, when the stack is not
 * remembered, is monitor.c's mon_alloc_walk.
 */
#ifndef MONITOR_REC_H
#define MONITOR_REC_H

#include <stddef.h>
#include <stdint.h>

#include "addrmap.h"
#include "blocks.h"
#include "format.h"
#include "mkeep.h"
#include "monitor.h"
#include "peak.h"
#include "timeline.h"
#include "unwind.h"

/* Frames kept per stack (the innermost); deeper stacks are truncated. */
#define MON_MAX_DEPTH STACKS_MAX_DEPTH

#define MON_ADD(x, v) __atomic_fetch_add(&(x), (v), __ATOMIC_RELAXED)

/* An allocation whose stack must be walked (t: NULL for a thread past its
 * block), counted w times. */
__attribute__((noinline)) void mon_alloc_walk(void *p, size_t n, const struct unwind_frame0 *f0,
					    struct blocks_thread *t, uint64_t e, uint64_t w);

/* An allocation not recorded (rare): counted, and mirrored in the keep. */
static inline void mon_drop(void)
{
	__atomic_store_n(&mon_keep->dropped, MON_ADD(mon.dropped, 1) + 1, __ATOMIC_RELAXED);
}

/*
 * This thread's block, made to count for the current profile; NULL when
 * the thread must use the orphan block.  *e gets the profile's epoch.
 */
static inline __attribute__((always_inline)) struct blocks_thread *mon_self(uint64_t *e)
{
	struct blocks_thread *t = blocks_self;

	*e = __atomic_load_n(&mon.epoch, __ATOMIC_ACQUIRE);
	if (__builtin_expect(!t, 0) && !(t = blocks_attach()))
		return NULL;
	if (__builtin_expect(t->epoch != *e, 0))
		blocks_reset(t, *e);
	return t;
}

/* Count an allocation of n bytes into t, whose counters for its stack are
 * c, in class sc (its size class; a Lisp object's type class), w times (1
 * but for a sample of the sampled monitor: the allocations it stands for;
 * a constant in the exact monitor's inlined paths).  tl (a constant): the
 * exact monitor's timeline countdown too (timeline.h), before the peak's
 * test may publish (a point then has these bytes allocated and live); the
 * countdown's value is returned (0 without tl), for the caller's
 * TIMELINE_DUE once the object is in the address map. */
static inline __attribute__((always_inline)) int64_t mon_count(struct blocks_thread *t, uint64_t *c, size_t n,
							    int sc, uint64_t w, const int tl)
{
	uint32_t bin = format_bin_index(n);
	int64_t left = 0;

	if (__builtin_expect(peak_stale(&t->peak, blocks_ctr_peak(c)), 0))
		blocks_turn(t, c);
	blocks_bump(&c[BLOCKS_CTR(MPROF_C_ALLOCS, sc)], w);
	blocks_bump(&c[BLOCKS_CTR(MPROF_C_BYTES, sc)], w * n);
	blocks_bump(&t->bins[bin][0], w);
	if (bin == FORMAT_NBINS - 1)
		blocks_bump(&t->big[0], w * n);
	if (tl)
		left = TIMELINE_DOWN(t, n);
	if (peak_alloc_due(&t->peak, w * n))
		blocks_publish(t);
	return left;
}

/* The rest of an allocation counted on stack idx in profile epoch e; lang:
 * from mon_alloc_lang, whose small objects may be the fine shadow's
 * (addrmap.h). */
static inline __attribute__((always_inline)) void mon_alloc_settle_in(void *p, size_t n, uint64_t e,
								   int64_t idx, const int lang)
{
	int as;

	if (idx < 0) {
		mon_drop();
		return;
	}
	/*
	 * A restart since mon_self() read epoch e: the allocation was counted in a
	 * block of the old profile, so the object must not carry an index of
	 * the new one (it may: a stack found in, or added to, the new table);
	 * its free will count as unknown.  A restart after this test leaves
	 * idx from the old table, below the new profile's first stack, which
	 * the free recognises.
	 */
	if (__builtin_expect(__atomic_load_n(&mon.epoch, __ATOMIC_ACQUIRE) != e, 0))
		return;
	if ((lang && addrmap_fine_for((uintptr_t)p, n)
		     ? addrmap_put_fine((uintptr_t)p, (uint32_t)idx, n)
		     : addrmap_put((uintptr_t)p, (uint32_t)idx, n)) < 0) {
		mon_trouble("cannot map memory for the address map", NULL);
		return;
	}
	as = __atomic_load_n(&mon.autosave, __ATOMIC_RELAXED);
	if (__builtin_expect(as > 0, 0) && (MON_ADD(mon.nallocs, 1) + 1) % (uint64_t)as == 0)
		mon_autosave();
}

static inline __attribute__((always_inline)) void mon_alloc_settle(void *p, size_t n, uint64_t e,
							       int64_t idx)
{
	mon_alloc_settle_in(p, n, e, idx, 0);
}

/* A stack counted by its index (known - 1) in t. */
static inline __attribute__((always_inline)) int64_t mon_count_known(struct blocks_thread *t,
								  uint64_t known, size_t n, uint64_t w,
								  const int tl, int64_t *left)
{
	uint64_t *c = blocks_ctr(t, (uint32_t)(known - 1));

	if (!c) {
		mon_trouble("cannot map memory for counters", NULL);
		return -1;
	}
	*left = mon_count(t, c, n, format_size_class(n), w, tl);
	return (int64_t)(known - 1);
}

static inline __attribute__((always_inline)) void mon_alloc_inline(void *p, size_t n,
								    const struct unwind_frame0 *f0)
{
	uint64_t e, known = 0;
	struct blocks_thread *t = mon_self(&e);
	int64_t idx;

	if ((uint64_t)n >> MON_SIZE_BITS) {
		mon_drop();
		return;
	}
	/* A stack the unwinder remembers comes back as its index + 1, for
	 * this profile (epoch e): no walk, no frames, no lookup, straight from
	 * the caller's return address and stack pointer. */
	if (__builtin_expect(t == NULL, 0) || unwind_recall(f0, e, MON_MAX_DEPTH, &known) < 0) {
		mon_alloc_walk(p, n, f0, t, e, 1);
	} else {
		if (!mon_on(__atomic_load_n(&mon.state, __ATOMIC_RELAXED)))
			return; /* stopped meanwhile */
		int64_t left;

		t->last_p = (uintptr_t)p; /* the thread's last allocation (temporaries) */
		if ((idx = mon_count_known(t, known, n, 1, 1, &left)) >= 0) {
			mon_alloc_settle(p, n, e, idx);
			TIMELINE_DUE(t, left, p);
		}
	}
}

#endif
