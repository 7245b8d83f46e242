/*
 * blocks.h - the monitor's per-thread blocks (blocks_*): where every
 * thread counts its allocations and frees, and the saver's sums of them.
 *
 * Every thread records into its own block: its frame buffer, its totals,
 * its size bins and its counters for each stack it touched, updated with
 * plain (relaxed) stores, so threads share no cache line on the hot path.
 * The saver sums every block (blocks_read_*).  Blocks are never unmapped:
 * at thread exit a block goes to a pool and the next new thread carries on
 * adding to it, so nothing is merged and nothing is lost.  A block belongs
 * to one profile (its epoch): its owner zeroes it when it sees that a
 * restart began another, and until then the saver ignores it.  A thread
 * that allocates after its block went back (a later key destructor, libc's
 * thread cleanup) records into the shared orphan block, under a lock.
 *
 * The monitor (monitor.c) counts into a block itself, inline: the layout
 * and the look-up of a stack's counters are here, the rest in blocks.c.
 * Locks (monitor.h's order): the block-pool lock, then the orphan-block
 * lock.
 */
#ifndef BLOCKS_H
#define BLOCKS_H

#include <stdint.h>

#include "format.h"
#include "peak.h"
#include "stacks.h"

struct writer_totals;

#define BLOCKS_CTR_SHIFT 10
#define BLOCKS_CTR_CHUNK (1u << BLOCKS_CTR_SHIFT) /* stacks per counter chunk */
#define BLOCKS_CTR_DIR (STACKS_MAX / BLOCKS_CTR_CHUNK)
#define BLOCKS_CACHE_N 8 /* recent stacks per thread */

/*
 * In memory a stack's counters go by size class, the four of a class side
 * by side (allocs, bytes, frees, freed): an allocation and its free touch
 * one cache line, not two.  The file's order (format.h) is by kind.  Its
 * part of the peak follows (peak.h), on a line of its own, and on that
 * line its temporary allocations (issue 24: objects freed, by free or a
 * realloc, as the next event of the thread that allocated them,
 * heaptrack's definition), objects and bytes: a free reads the line
 * anyway (peak_stale).
 */
#define BLOCKS_CTR(kind, sc) ((sc) * 4 + (kind) / SIZE_NCLASSES)
struct blocks_counters {
	uint64_t c[MPROF_NCOUNTERS];
	struct peak_stack peak;
	uint64_t temp[2]; /* temporary objects, bytes */
};
_Static_assert(sizeof(struct blocks_counters) == MPROF_NCOUNTERS * 8 + 64,
	       "a stack's counters, then its peak");

/* The peak part of the counters c (blocks_ctr's). */
static inline struct peak_stack *blocks_ctr_peak(uint64_t *c)
{
	return (struct peak_stack *)(c + MPROF_NCOUNTERS);
}

/* The temporaries of the counters c: objects, then bytes. */
static inline uint64_t *blocks_ctr_temp(uint64_t *c)
{
	return c + MPROF_NCOUNTERS + sizeof(struct peak_stack) / 8;
}

/* Allocation and free totals are the sums of the bins: not kept twice. */
enum { BLOCKS_T_UNKNOWN, BLOCKS_T_N };

struct blocks_thread {
	struct blocks_thread *all;  /* every block, newest first; never unlinked */
	struct blocks_thread *pool; /* next free block */
	uint64_t epoch;             /* the profile these counts belong to */
	/* The sampled monitor (sample.h): bytes to go before the next
	 * sample, from tl_set; every allocation's count, and the bytes
	 * allocated before s_left was last set (so the bytes allocated:
	 * s_bytes + tl_set - s_left, blocks_sampled_bytes: the fast path
	 * adds to no byte count of its own). */
	int64_t s_left;
	uint64_t s_allocs, s_bytes, s_rng;
	/* The exact monitor: s_left counts bytes down to the timeline's
	 * next tick (timeline.h), from tl_set; tl_alloc: the bytes counted
	 * down before (so the bytes allocated: tl_alloc + tl_set - s_left).
	 * The sampled one's tl_alloc: the bytes at its last tick. */
	uint64_t tl_set, tl_alloc;
	int owned;
	uint32_t nchunks; /* dir[0..nchunks-1] may be mapped */
	uint64_t t[BLOCKS_T_N];
	struct peak_block peak;
	struct {
		const struct stacks_rec *r;
		uint64_t *ctr;
		uint64_t idx;
	} cache[BLOCKS_CACHE_N];
	const struct stacks_rec *last; /* the stack of the last allocation */
	uintptr_t last_p; /* the last allocation's address, 0 after any free */
	uint64_t last_n;  /* sampled: s_allocs when last_p was allocated */
	struct blocks_counters *dir[BLOCKS_CTR_DIR]; /* stack index -> this thread's counters */
	/* Per size bin, allocations and frees; bytes are those times the
	 * size, but for the last bin (larger sizes), whose bytes are big[]. */
	uint64_t bins[FORMAT_NBINS][2];
	uint64_t big[2]; /* bytes allocated, freed */
	uint64_t frames[STACKS_MAX_DEPTH];
	/* In an interpreter's process (langrec.h): its stacks remembered,
	 * mapped on first use; lang_failed once mapping failed.  Last: the
	 * hot fields' places are as they were without it. */
	struct langrec *lang;
	int lang_failed;
	/* The object whose kind is still to be told (langname.h), made at
	 * language frame lang_kind_id: looked at by the thread's next
	 * allocation, when it has its type (monitor.c). */
	uintptr_t lang_kind_obj;
	uint32_t lang_kind_id;
};

/* This thread's block; NULL before it has one, or after it went back. */
extern __thread struct blocks_thread *blocks_self __attribute__((visibility("hidden")));

/* Once (mon_config): the key that gives a thread's block back at its exit. */
void blocks_init(void);

/* This thread's block, or NULL: dead thread (use the orphan) or no memory.
 * Called with the monitor's guard set (it may calloc). */
struct blocks_thread *blocks_attach(void);
/* Make t count for profile epoch e (its owner, or the orphan lock, only). */
void blocks_reset(struct blocks_thread *t, uint64_t e);

/* The sampled monitor's bytes allocated in t (exact). */
static inline uint64_t blocks_sampled_bytes(const struct blocks_thread *t)
{
	return __atomic_load_n(&t->s_bytes, __ATOMIC_RELAXED) +
	       __atomic_load_n(&t->tl_set, __ATOMIC_RELAXED) -
	       (uint64_t)__atomic_load_n(&t->s_left, __ATOMIC_RELAXED);
}

static inline void blocks_bump(uint64_t *x, uint64_t v)
{
	__atomic_store_n(x, __atomic_load_n(x, __ATOMIC_RELAXED) + v, __ATOMIC_RELAXED);
}

/* Map t's chunk of counters for stack idx; NULL if memory cannot be mapped. */
__attribute__((noinline)) struct blocks_counters *blocks_chunk(struct blocks_thread *t,
								uint32_t idx);

/*
 * Before the first use of a stack's counters c in a block, as far as the
 * caller can tell (a stack just walked): write the page its peak part is
 * on.  The first use reads that part (its interval), which would map the
 * shared zero page, and the first write then copy it: two page faults
 * where one does (arena.h).  A record that straddles two pages (one in
 * about 21) may still fault twice on the first; writing its first counter
 * too touched pages no count would (python's start: 128 more faults).
 */
static inline void blocks_touch(uint64_t *c)
{
	uint64_t *m = &blocks_ctr_peak(c)->m; /* only this thread writes it */

	__atomic_store_n(m, __atomic_load_n(m, __ATOMIC_RELAXED), __ATOMIC_RELAXED);
}

/* t's counters for stack idx, or NULL when memory cannot be mapped. */
static inline uint64_t *blocks_ctr(struct blocks_thread *t, uint32_t idx)
{
	struct blocks_counters *c = t->dir[idx >> BLOCKS_CTR_SHIFT];

	if (__builtin_expect(!c, 0) && !(c = blocks_chunk(t, idx)))
		return NULL;
	return c[idx & (BLOCKS_CTR_CHUNK - 1)].c;
}

/* Before the first change to the stack whose counters are c, in block t,
 * since t's last publish (peak.h). */
__attribute__((noinline)) void blocks_turn(struct blocks_thread *t, uint64_t *c);
/* t's delta into the view of the heap: out of line, as it is rare. */
__attribute__((noinline)) void blocks_publish(struct blocks_thread *t);

/*
 * The orphan block, made to count for epoch e, with its lock held; NULL if
 * there is none and none can be made, or the lock cannot be had.  Then
 * blocks_orphan_flush (what it counted joins the view of the heap), and
 * blocks_orphan_unlock.
 */
struct blocks_thread *blocks_orphan_lock(uint64_t e);
void blocks_orphan_unlock(void);
void blocks_orphan_flush(struct blocks_thread *t);

/* For fork: both locks (0; -1: none taken, lock.h), given back or
 * re-initialised; in the child, the other threads' blocks go back to the
 * pool (their counts kept). */
int blocks_lock(void);
void blocks_unlock(void);
void blocks_lock_reinit(void);
void blocks_fork_child(void);

/*
 * Summing for the writer (writer.h), over the blocks of profile epoch e
 * (the save lock is held: the epoch is stable).  The totals but dropped;
 * the bins; the peak this save reports (once a save, before the
 * counters); the counters of the n stacks idx..idx+n-1 into out[0..n),
 * the first MPROF_NCOUNTERS_ALL of each (not the leak scan's).
 */
void blocks_read_totals(uint64_t e, struct writer_totals *out);
/* The sampled monitor's exact totals: allocations and bytes. */
void blocks_read_sampled(uint64_t e, uint64_t *allocs, uint64_t *bytes);
void blocks_read_bins(uint64_t e, uint64_t (*bins)[4]);
void blocks_read_peak(uint64_t e);
void blocks_read_counters(uint64_t e, uint32_t idx, uint32_t n,
			  uint64_t (*out)[MPROF_NCOUNTERS_SCAN]);

/*
 * For the timeline (timeline.c), a snapshot while threads run: the sum of
 * the blocks' unpublished live bytes (peak.h's delta: the heap is the
 * published total plus this), their live objects, and the bytes allocated
 * (sampled: the exact count; else the timeline's countdowns).  Then one
 * stack's live bytes, summed over the blocks, and the number of blocks.
 */
void blocks_read_now(uint64_t e, int sampled, int64_t *delta, int64_t *objects,
		     uint64_t *allocated);
int64_t blocks_stack_live(uint64_t e, uint32_t idx);
uint32_t blocks_count(uint64_t e);

#endif
