/*
 * peak.h - the heap's peak (the most bytes live at once) and, for every
 * stack, the live bytes and objects it held at that moment (peak_*), kept
 * online in O(1) an event (issue 15).
 *
 * Live bytes are the bytes of recorded allocations minus those of
 * recorded frees (an unknown free changes nothing): the figure the
 * tables call kept, at every moment instead of at the end.
 *
 * The monitor's counts are per thread block (blocks.c), and one shared
 * word written on every event costs more than the monitor itself when
 * threads allocate at once (4 threads: 115 ms -> 500 ms on the threads
 * bench).  So a block holds back its net change of live bytes, delta,
 * and publishes it into the shared total G only when |delta| passes
 * peak_slack (MPROF_PEAK_SLACK, 4096 bytes by default), or at the
 * block's thread's exit.  A block's view of the heap is G + delta: every
 * block's published part, and its own unpublished one.  The peak P is
 * the largest view met; G and P are one 16-byte word, changed only by a
 * compare-and-swap, so publishes and peaks are in one total order.
 *
 * Exact: while one thread has a block (peak_nblocks <= 1; the orphan block
 * publishes at once), its view is the heap, and each allocation that
 * makes it pass P publishes: the peak is exact, and so is every stack's
 * share.  With several threads allocating at once, each view misses the
 * others' unpublished deltas: the peak is within peak_slack times the
 * number of threads of the heap's (in the order of the word's updates),
 * and then only publishes set it.  Either way the stacks' shares add up
 * to the peak exactly: each block contributes its state at its last
 * publish before the peak (the peak's own publisher, its state at it).
 *
 * Lazily, as the issue asks: a block numbers its publishes (s) and
 * remembers the latest peak it knows of (fz_p) and which of its
 * publishes that peak saw (fz_k).  A stack records the publish number of
 * its last change (m) and its live values then; the first change after a
 * publish (m != s, one compare on the hot path) first settles the stack's
 * share of the peak fz_p, which it has not changed since, then starts a
 * new interval.  The saver settles the rest (peak_share).
 */
#ifndef PEAK_H
#define PEAK_H

#include <stdint.h>

/* A stack's part of the peak, in one block: 48 bytes beside its counters
 * (blocks.h puts it on a line of its own, with the temporaries). */
struct peak_stack {
	uint64_t m;     /* the block's publish number at this stack's last change */
	uint64_t tag;   /* the peak kb, kn are this stack's share of */
	int64_t pb, pn; /* live bytes, objects at publish m (before the change) */
	int64_t kb, kn; /* live bytes, objects at the peak tag */
};

/* A block's side (zeroed with its counters when a profile begins). */
struct peak_block {
	int64_t delta; /* live bytes changed since the last publish */
	uint64_t s;    /* publishes so far */
	uint64_t fz_k; /* the publish of this block the peak fz_p saw */
	uint64_t fz_p; /* the latest peak this block knows of, 0: none */
	int rise;      /* its view passed the peak since: publish at the next free */
};

/* P's bits; the profile's epoch (mon.epoch) in the 16 above them. */
#define PEAK_BITS 48
#define PEAK_MASK ((1ull << PEAK_BITS) - 1)

struct peak_global {
	int64_t g;   /* live bytes published */
	uint64_t pe; /* the peak | epoch << PEAK_BITS */
} __attribute__((aligned(64)));

extern struct peak_global peak_g __attribute__((visibility("hidden")));
/* Threads holding a block, on a line of its own: every allocation that
 * raises its block's view reads it first, and it changes only when a
 * thread starts or ends, while the word above changes at every publish
 * (with threads, reading the word each time missed the cache: 1.5-1.9% of
 * the threads bench, of the 5.7% the peak cost it). */
struct peak_count {
	int n;
} __attribute__((aligned(64)));
extern struct peak_count peak_nblocks __attribute__((visibility("hidden")));
/* A block publishes when its delta leaves [peak_floor, peak_ceil]. */
extern int64_t peak_ceil, peak_floor __attribute__((visibility("hidden")));
/* Where the word's pe is mirrored at every change (mkeep.h's peak_pe). */
extern uint64_t *peak_pe_mirror __attribute__((visibility("hidden")));
/* Where the time stamp counter goes when a publish raises the peak (the
 * timeline's peak_tsc: the peak's moment). */
extern uint64_t *peak_tsc_mirror __attribute__((visibility("hidden")));
/* peak_slack (default 4096, MPROF_PEAK_SLACK): the bounds are +-slack. */
void peak_set_slack(int64_t slack);

/* Start profile epoch e at zero (before e is published to the threads). */
void peak_restart(uint64_t e);
/* Publish b's delta (b counts for epoch e); may set a new peak. */
void peak_publish(struct peak_block *b, uint64_t e);
/* A thread took a block (+1) or gave it back (-1, after publishing). */
void peak_threads(int d);
/* In a fork child: only the calling thread goes on (n: 0 or 1 block). */
void peak_fork_child(int n);

/* Whether stack k changes for the first time since b's last publish:
 * then peak_turn before the change. */
static inline int peak_stale(const struct peak_block *b, const struct peak_stack *k)
{
	return k->m != b->s;
}

/*
 * Settle k's share of the latest peak b knows of, which came at or after
 * publish k->m (k's last change was in the interval after it): its value
 * at the publish that peak saw, fz_k.  That is pb if fz_k is m, else (fz_k
 * > m) its value now, lb and ln.  Then begin k's interval of publish s.
 */
static inline void peak_turn(struct peak_block *b, struct peak_stack *k, int64_t lb, int64_t ln)
{
	if (k->tag != b->fz_p) {
		int at_m = k->m == b->fz_k;

		k->kb = at_m ? k->pb : lb;
		k->kn = at_m ? k->pn : ln;
		k->tag = b->fz_p;
	}
	k->pb = lb;
	k->pn = ln;
	k->m = b->s;
}

/* After an allocation of n bytes, counted in b: whether to publish. */
static inline __attribute__((always_inline)) int peak_alloc_due(struct peak_block *b, uint64_t n)
{
	int64_t d = b->delta + (int64_t)n;

	b->delta = d;
	/* P >= G always, so only a positive delta can pass P (and peak_ceil
	 * is not negative).  Only a block alone publishes a new peak: the
	 * thread count first, which with threads saves reading the word.
	 * Load P, then G (x86 keeps loads in order): if G + d does not pass P
	 * then, it did not at the moment of G's load either. */
	if (d <= 0)
		return 0;
	if (__builtin_expect(d > peak_ceil, 0))
		return 1;
	if (__atomic_load_n(&peak_nblocks.n, __ATOMIC_RELAXED) > 1)
		return 0;
	int64_t p = (int64_t)(__atomic_load_n(&peak_g.pe, __ATOMIC_ACQUIRE) & PEAK_MASK);
	/* A new peak, but the heap may still rise: the peak is where it stops,
	 * the moment before this block's next free (peak_rise_due), so the
	 * publish waits until then.  A run of allocations that each pass P
	 * (a growing heap) publishes once, not once each, and its stacks do
	 * not settle their shares at every step.  A saver that comes first
	 * finds the heap above P and takes it as the peak (blocks.c,
	 * salvage_mprof.c): exact too. */
	if (__atomic_load_n(&peak_g.g, __ATOMIC_RELAXED) + d > p)
		b->rise = 1;
	return 0;
}

/* Before a free counted in b (before any of its counters change): whether
 * to publish first, b's view having passed the peak (peak_alloc_due). */
static inline __attribute__((always_inline)) int peak_rise_due(const struct peak_block *b)
{
	return __builtin_expect(b->rise, 0);
}

/* After a free of n bytes, counted in b: whether to publish (never for a
 * new peak: the view went down). */
static inline __attribute__((always_inline)) int peak_free_due(struct peak_block *b, uint64_t n)
{
	int64_t d = b->delta - (int64_t)n;

	b->delta = d;
	return __builtin_expect(d < peak_floor, 0);
}

/*
 * For the saver: the peak of profile epoch e, 0 if the word is another
 * profile's.
 */
uint64_t peak_value(uint64_t e);
/*
 * Stack k's share of peak p in block b, whose live values for it are now
 * lb, ln: into *sb, *sn (added).  Read while the block's owner may be
 * changing it: a snapshot a few events wide, like the counters.  Inline:
 * the launcher reads a dead program's shares so too (lib/run/salvage_mprof.c).
 */
static inline void peak_share(const struct peak_block *b, const struct peak_stack *k, int64_t lb,
			      int64_t ln, uint64_t p, int64_t *sb, int64_t *sn)
{
	uint64_t at;

	/* Settled: k changed after b learnt of p. */
	if (b->fz_p == p && k->tag == p) {
		*sb += k->kb;
		*sn += k->kn;
		return;
	}
	/* Else k has not changed since b learnt of p (at its publish fz_k),
	 * or p came after b's last publish s: its share is its value at that
	 * publish, as peak_turn would settle it (k->m <= that publish). */
	at = b->fz_p == p ? b->fz_k : b->s;
	if (k->m == at) {
		*sb += k->pb;
		*sn += k->pn;
	} else {
		*sb += lb;
		*sn += ln;
	}
}

#endif
