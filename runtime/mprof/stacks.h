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
/* The index -> record directory: STACKS_DIR chunks of STACKS_CHUNK. */
#define STACKS_CHUNK_SHIFT 16
#define STACKS_CHUNK (1u << STACKS_CHUNK_SHIFT)
#define STACKS_DIR (STACKS_MAX / STACKS_CHUNK)
/* Frames per stack, at most: the monitor keeps the innermost of deeper ones. */
#define STACKS_MAX_DEPTH 1024

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
int stacks_lock(void); /* 0, or -1: not taken (lock.h) */
void stacks_unlock(void);
/* In a fork child, whatever the parent's threads held. */
void stacks_lock_reinit(void);

/*
 * A place in the table where a stack's outer frames are already kept:
 * frames[at..depth-1] of the stack being looked up are the frames of rec
 * from off on (its own frames off.. then its parent's; off < rec->nown, so
 * the place is the one every record sharing those frames points to).  A
 * record whose chain reaches the same place at the same frame needs no
 * comparison past it (stacks_same_at): a lookup costs the stack's new
 * frames, not its depth.
 */
struct stacks_pos {
	const struct stacks_rec *rec;
	uint32_t off, at;
};

/* The place of record r's frame off (off < r->depth), into *p with at. */
static inline void stacks_place(const struct stacks_rec *r, uint32_t off, uint32_t at,
				struct stacks_pos *p)
{
	while (off >= r->nown) {
		off = r->pbase + (off - r->nown);
		r = r->parent;
	}
	p->rec = r;
	p->off = off;
	p->at = at;
}

/*
 * The index of the stack (frames, depth, flags) whose hash is h
 * (stackhash.h), added if new.  Takes the table lock only to add; the
 * caller holds no monitor lock.  A new stack shares the outer frames it has
 * in common with hint (a record met just before, or NULL); or, given pos
 * (else NULL), where the table keeps its frames from pos->at on, those,
 * with no comparison.  -1 when the table is full or memory cannot be
 * mapped.
 */
int64_t stacks_intern(const uint64_t *frames, uint32_t depth, uint32_t flags, uint32_t h,
		      const struct stacks_rec *hint, const struct stacks_pos *pos);
/*
 * stacks_intern given pos, whose frames[pos->at..depth) may not be filled
 * in yet: fill(frames, depth) fills them, called before they are read
 * (only when the table has a stack of the same hash, or the new stack
 * cannot take its outer frames from pos).  A new stack then costs no copy
 * of the frames it shares.
 */
int64_t stacks_intern_lazy(uint64_t *frames, uint32_t depth, uint32_t flags, uint32_t h,
			   const struct stacks_rec *hint, const struct stacks_pos *pos,
			   void (*fill)(uint64_t *, int));
/*
 * The index of the stack (frames, depth, flags, hash h) whose frames from
 * pos->at on are kept at pos, if the table has it kept there (no lock;
 * frames[0..pos->at) only are read); else -1: stacks_intern() can tell.
 * *seen (if not NULL) becomes 1 when the table has a stack of hash h at
 * all; left alone otherwise.
 */
int64_t stacks_find_at(const uint64_t *frames, uint32_t depth, uint32_t flags, uint32_t h,
		       const struct stacks_pos *pos, int *seen);

/* Whether a[0..n-1] == b[0..n-1]: four frames a step, one branch. */
static inline int stacks_span_same(const uint64_t *a, const uint64_t *b, uint32_t n)
{
	const uint64_t *end4 = a + (n & ~3u), *end = a + n;

	for (; a < end4; a += 4, b += 4)
		if ((a[0] ^ b[0]) | (a[1] ^ b[1]) | (a[2] ^ b[2]) | (a[3] ^ b[3]))
			return 0;
	for (; a < end; a++, b++)
		if (*a != *b)
			return 0;
	return 1;
}

/*
 * Whether record r is the stack (frames, depth, flags).  Each hop to a
 * parent compares at least one frame of it, so a comparison costs O(depth).
 */
static inline int stacks_same(const struct stacks_rec *r, const uint64_t *frames,
			      uint32_t depth, uint32_t flags)
{
	uint32_t i = 0, j = 0, k;

	if (r->depth != depth || r->flags != flags)
		return 0;
	for (;;) {
		k = r->nown - j; /* r's own frames from j on are frames[i..i+k) */
		if (!stacks_span_same(r->frames + j, frames + i, k))
			return 0;
		i += k;
		if (i == depth)
			return 1;
		j = r->pbase;
		r = r->parent;
	}
}

/*
 * Whether record r is the stack (frames, depth, flags) whose frames from
 * pos->at on are kept at pos (pos->at < depth), as far as the frames before
 * pos->at tell: r's chain must reach pos's place at that frame.  Reads
 * frames[0..pos->at) only.  0 may be a stack that is r all the same, kept
 * elsewhere (a record's frames are shared only with the stack met just
 * before it was made): then only a full comparison can tell.
 */
static inline int stacks_same_at(const struct stacks_rec *r, const uint64_t *frames,
				 uint32_t depth, uint32_t flags, const struct stacks_pos *pos)
{
	uint32_t i = 0, j = 0, k, d;

	if (r->depth != depth || r->flags != flags)
		return 0;
	for (;;) {
		k = r->nown - j; /* r's own frames from j on are frames[i..i+k); i <= at */
		if ((d = pos->at - i) < k)
			return r == pos->rec && j + d == pos->off &&
			       stacks_span_same(r->frames + j, frames + i, d);
		if (!stacks_span_same(r->frames + j, frames + i, k))
			return 0;
		i += k;
		j = r->pbase;
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
