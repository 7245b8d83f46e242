/*
 * stacks.h - the table of distinct call stacks.
 *
 * A stack is identified by its frames and flags; each gets a dense index
 * (0, 1, 2, ...) that the address map stores with every live object, so a
 * free can credit the stack that allocated the object.
 *
 * Lookups take no lock: stacks_intern() probes an open-addressing table
 * whose slots are published with release stores (and read with acquire
 * loads), and only a miss takes the table lock to add the stack.  The table
 * grows by building a bigger one and publishing it; a reader still probing
 * the old one misses at worst, then finds the stack under the lock.
 * Records never move and are never unmapped (not even by stacks_reset(),
 * since a lock-free reader may be looking at one), so a pointer from
 * stacks_get() stays readable for the life of the process.
 */
#ifndef STACKS_H
#define STACKS_H

#include <stdint.h>

#include "format.h"

/* 22 bits of stack index are stored per object (see addrmap.h). */
#define STACKS_MAX (1u << 22)

/*
 * A record keeps its innermost nown frames; the outer depth - nown, if any,
 * are the outermost frames of another record (parent), from its frame
 * pbase on: a stack shares most of its chain with one met just before
 * (mprof paper: 60-75% of the chain repeats), and python's stacks cost a
 * fifth of their flat size this way.  Each hop to a parent compares at
 * least one frame of it, so a comparison costs O(depth).
 */
struct stacks_rec {
	uint32_t hash;
	uint32_t depth;
	uint32_t flags;
	uint32_t nown;
	const struct stacks_rec *parent; /* NULL when nown == depth */
	uint32_t pbase;
	uint32_t idx;                    /* this record's stack index */
	uint64_t frames[]; /* the innermost nown */
};

/* Serialises adding stacks and stacks_reset() (fork, restart). */
void stacks_lock(void);
void stacks_unlock(void);
/* In a fork child, whatever the parent's threads held. */
void stacks_lock_reinit(void);

/*
 * The index of the stack (frames, depth, flags) whose hash is h
 * (stackhash.h), added if
 * new.  Takes the table lock only to add; the caller holds no monitor lock.
 * A new stack shares the outer frames it has in common with hint (a
 * record met just before, or NULL).  -1 when the table is full or memory
 * cannot be mapped.
 */
int64_t stacks_intern(const uint64_t *frames, uint32_t depth, uint32_t flags, uint32_t h,
		      const struct stacks_rec *hint);
/* Whether record r is the stack (frames, depth, flags). */
static inline int stacks_same(const struct stacks_rec *r, const uint64_t *frames,
			      uint32_t depth, uint32_t flags)
{
	uint32_t i = 0, j;

	if (r->depth != depth || r->flags != flags)
		return 0;
	for (j = 0;;) {
		/* Four frames a step, one branch: the common case is equal. */
		for (; j + 4 <= r->nown; j += 4, i += 4)
			if ((r->frames[j] ^ frames[i]) | (r->frames[j + 1] ^ frames[i + 1]) |
			    (r->frames[j + 2] ^ frames[i + 2]) | (r->frames[j + 3] ^ frames[i + 3]))
				return 0;
		for (; j < r->nown; j++, i++)
			if (r->frames[j] != frames[i])
				return 0;
		if (i == depth)
			return 1;
		j = r->pbase + (j - r->nown);
		r = r->parent;
	}
}
/* r's frames, innermost first, into buf[r->depth]; returns buf. */
const uint64_t *stacks_frames(const struct stacks_rec *r, uint64_t *buf);
struct stacks_rec *stacks_get(uint32_t idx);
extern uint32_t stacks_n, stacks_first __attribute__((visibility("hidden")));
/* Number of stacks; records 0..count-1 are complete. */
static inline uint32_t stacks_count(void)
{
	return __atomic_load_n(&stacks_n, __ATOMIC_ACQUIRE);
}
/* The current profile's stacks are base..count-1 (base > 0 after a restart). */
static inline uint32_t stacks_base(void)
{
	return __atomic_load_n(&stacks_first, __ATOMIC_ACQUIRE);
}
/*
 * Forget every stack: new ones get indices from stacks_count() on.  Caller
 * holds the lock.  The old records stay mapped (lock-free readers), so each
 * restart keeps the previous profile's table.
 */
void stacks_reset(void);

#endif
