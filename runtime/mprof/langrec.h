/*
 * langrec.h - the monitor's memory of language stacks (langrec_*): for
 * a thread's block, the C stacks it captured in an interpreter's process
 * and, for each, the stacks that the language's frames made of it.
 *
 * One C stack runs many of the language's stacks (a Python call from
 * Python makes no C call), so the unwinder's remembered walks cannot give
 * a stack's index as they do for C.  They give a C record's instead (the
 * walk's value, owner langrec.owner); the language's key of the thread's
 * frames (lang.h) then finds the stack among those made of that record.
 * An allocation whose C stack and language frames were both seen before
 * costs a recall, a walk of the language's frame chain and a look-up:
 * no C walk, no rewriting, no stack hash.
 *
 * C records are kept as the language's strip leaves them, so that C
 * stacks that differ only in the interpreter's own frames are one
 * record: the stacks made of them are made once.
 *
 * Bounded: LANGREC_CRECS records and LANGREC_FRAMES frames of them, then
 * all is forgotten at once (a new owner: no remembered walk gives an old
 * record again); LANGREC_SETS x LANGREC_WAYS stacks, the oldest way of a
 * set replaced.  The stacks are of one profile (epoch), forgotten when
 * the thread's block counts for another.  Memory from mmap, touched as
 * used; a block keeps its memory when it goes to the pool.
 */
#ifndef LANGREC_H
#define LANGREC_H

#include <stdint.h>

#define LANGREC_CRECS 4096
#define LANGREC_FRAMES (1 << 16)
#define LANGREC_SETS 4096
#define LANGREC_WAYS 4
#define LANGREC_INDEX (2 * LANGREC_CRECS)
#define LANGREC_OUT 1024 /* frames of the rewrite's scratch */

struct langrec_stack {
	uint64_t k0, k1; /* the language's key */
	uint64_t crec;   /* the C record */
	uint64_t idx1;   /* the stack's index + 1; 0: empty */
};

struct langrec {
	uint64_t epoch; /* the profile whose stack indexes are kept */
	uint64_t owner; /* remembered walks' owner: bit 63, a generation */
	uint32_t ncrec, nframes;
	struct {
		uint32_t off, depth, flags, hash;
	} crec[LANGREC_CRECS];
	uint32_t index[LANGREC_INDEX]; /* records by hash: id + 1; 0 free */
	uint8_t next[LANGREC_SETS]; /* the way to replace next */
	struct langrec_stack set[LANGREC_SETS][LANGREC_WAYS];
	uint64_t frames[LANGREC_FRAMES];
	uint64_t out[LANGREC_OUT]; /* the language's rewrite's scratch */
};

/* t's record for profile e (made on first use); NULL if it cannot be. */
struct blocks_thread;
struct langrec *langrec_get(struct blocks_thread *t, uint64_t e);

/* The C record of frames[0..depth-1] (flags: the capture's), as
 * strip keeps it (lang.h): an old one if it is the same; its id, or -1
 * when it is too deep to keep.  May forget everything first (the owner
 * changes: read it after). */
int64_t langrec_add(struct langrec *lr, const uint64_t *frames, int depth, uint32_t flags,
		    int (*strip)(uint64_t *frames, int depth));

/* C record c's frames into frames; its depth, *flags its flags. */
int langrec_frames(const struct langrec *lr, uint64_t c, uint64_t *frames, uint32_t *flags);

static inline uint32_t langrec_set(uint64_t c, const uint64_t k[2])
{
	return (uint32_t)((k[0] ^ c * 0xff51afd7ed558ccdull) >> 40) & (LANGREC_SETS - 1);
}

/* The index + 1 of the stack made of C record c by the frames keyed k;
 * 0 if none is kept. */
static inline uint64_t langrec_find(const struct langrec *lr, uint64_t c, const uint64_t k[2])
{
	const struct langrec_stack *s = lr->set[langrec_set(c, k)];

	for (int w = 0; w < LANGREC_WAYS; w++)
		if (s[w].k0 == k[0] && s[w].k1 == k[1] && s[w].crec == c)
			return s[w].idx1;
	return 0;
}

/* Keep stack idx1 - 1 as the one made of c by the frames keyed k. */
void langrec_put(struct langrec *lr, uint64_t c, const uint64_t k[2], uint64_t idx1);

#endif
