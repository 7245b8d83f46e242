/*
 * timeline.h - the heap over time (timeline_*; issue 24): live bytes,
 * live objects and bytes allocated so far, at points spaced in time and
 * in bytes allocated, so that a short run and a long one both get a
 * curve; the peak is always one of the points (the file's), and the file
 * stays bounded however long the run.
 *
 * Points are taken on rare paths only:
 *   - the exact monitor counts every allocation's bytes down in the
 *     thread's block (one subtract and a test on the hot path, in
 *     s_left, which only the sampled monitor uses otherwise); at zero,
 *     timeline_tick, which takes a point if one is due by time or bytes;
 *   - the sampled monitor asks at every sample (timeline_tick too);
 *   - a block's publish of its live bytes (peak.h: every 4 KiB of net
 *     change at most) takes one when the heap moved by the spacing since
 *     the last point: a heap that shrinks with no allocation is seen.
 * When the table is full (TL_CAP points), neighbours merge (of each two,
 * the one with more live bytes stays: the chart keeps its spikes) and the
 * spacing in time and bytes doubles, as massif does.
 *
 * The largest stacks: at points where the heap has doubled since it last
 * looked (and the look is cheap beside the bytes allocated meanwhile), a
 * scan of every stack's live bytes chooses the FORMAT_TL_TOP largest, and
 * each later point gives their live bytes then; at most FORMAT_TL_TRACK
 * stacks over the run.  The peak's point needs none: the file's peak
 * counters give every stack's share of it.
 *
 * The table lives in the keep (mkeep.h's timeline), so a salvaged profile
 * has it too (lib/run/salvage_mprof.c).
 */
#ifndef TIMELINE_H
#define TIMELINE_H

#include <stdint.h>

#include "format.h"

#define TL_CAP 512

struct tl_point {
	uint64_t ns;        /* CLOCK_MONOTONIC since the profile began */
	int64_t live;       /* live bytes */
	int64_t objects;    /* live objects */
	uint64_t allocated; /* bytes allocated so far */
	uint32_t flags, ntop;
	struct format_tl_top top[FORMAT_TL_TOP];
};

/* The table (in the keep; the launcher reads it). */
struct tl_table {
	uint64_t epoch;       /* the profile its points belong to */
	uint64_t mono0;       /* CLOCK_MONOTONIC at the profile's start, ns */
	uint64_t tsc0;        /* the time stamp counter then */
	uint64_t peak_tsc;    /* the counter when the heap last reached its peak */
	uint64_t last_tsc;    /* ... and at the last point (with last_ns: a scale) */
	uint64_t last_ns;
	uint32_t n, ntrack;   /* points, tracked stacks */
	uint32_t track[FORMAT_TL_TRACK]; /* their stack indices */
	struct tl_point p[TL_CAP];
};

struct blocks_thread;
struct format_writer;

/* The bytes a thread counts down between ticks, at first (timeline.c's
 * spacing, halved). */
#define TL_CHUNK0 (256u << 10)

/* A new profile (epoch e): an empty table (mapped the first time). */
void timeline_restart(uint64_t e);
/* Thread t's countdown ran out (exact monitor; p: the allocation that
 * made it, in the address map, which may become a lifetime sample,
 * lifetime.h), or it took a sample (p NULL). */
__attribute__((noinline)) void timeline_tick(struct blocks_thread *t, const void *p);
/* The bytes allocated so far as thread t's view has them (for lifetimes:
 * the ticks' total and t's own since its last). */
uint64_t timeline_allocated(const struct blocks_thread *t);
/* CLOCK_MONOTONIC since the profile began, ns. */
uint64_t timeline_ns(void);
/* In a forked child: the lock free (its holder is gone). */
void timeline_lock_reinit(void);
/* A block published its live bytes: the heap is now g (published). */
void timeline_moved(int64_t g);
/*
 * The save's TIMELINE section: the points, the peak's among them (peak:
 * its bytes, peak_objects its objects: the file's sums), and one for
 * now.  Stacks are numbered from base (the first of this profile).
 * Under the save lock.
 */
void timeline_put(struct format_writer *w, uint64_t peak, int64_t peak_objects, uint32_t base);

/* The exact monitor's countdown, on its hot path (s_left: blocks.h): n
 * bytes counted down before the allocation is counted (a point taken
 * meanwhile has them allocated), the tick after (then it has them live). */
#define TIMELINE_DOWN(t, n) ((t)->s_left -= (int64_t)(n))
#define TIMELINE_DUE(t, left, p)                                               \
	do {                                                                   \
		if (__builtin_expect((left) < 0, 0))                           \
			timeline_tick(t, p);                                   \
	} while (0)
#define TIMELINE_COUNT(t, n, p)                                                \
	do {                                                                   \
		int64_t left_ = TIMELINE_DOWN(t, n);                           \
		TIMELINE_DUE(t, left_, p);                                     \
	} while (0)

#endif
