/*
 * unwind_memo.h - whole walks remembered (part of unwind_*, unwind_int.h):
 * the table's layout and its look-up, memo_find, which both unwind_recall
 * (unwind_memo.c) and the fast walk (unwind.c) make on every capture.  It
 * is static inline here rather than a call into unwind_memo.c: inlined
 * early into the walk, as it was when both were one file, the walk keeps
 * its registers (inlined late, by LTO, deep stacks cost 1% more).
 *
 * MEMO_BITS is read here, so a runtime built with -DMEMO_BITS=0 (one set:
 * tests/e2e/20, the Makefile's libmprof-memo1.so) rebuilds both files.
 */
#ifndef UNWIND_MEMO_H
#define UNWIND_MEMO_H

#include <stdint.h>

#include "unwind_int.h"

/*
 * The monitor gives every complete walk a value (its stack's index); a walk
 * that would read the same words as a remembered one, from the same
 * registers at frame 0, gets that value back without being made and without
 * filling frames, so the caller skips both the walk and the stack lookup.
 * The check is the record's (rec_check from frame 0) reduced to a list of
 * (stack address, expected word) pairs, compared four at a time.
 * Per thread: MEMO_SETS sets of MEMO_WAYS entries, the set chosen by frame
 * 0's sp and pc (one frame 0 is often reached through several chains: the
 * ways keep them side by side), for stacks up to MEMO_FRAMES deep.
 * 128 sets (1.6 MiB of address space a thread, its pages touched only as
 * walks are kept): with 32, which frame 0s met in one set hung on where
 * the stack began, so python json's cost moved between 1.68x and 1.85x
 * bare as the environment's size changed by 16 bytes; with 128, 1.681x
 * to 1.695x (tests/e2e/98-budget.t, bench/RESULTS.md).
 */
#ifndef MEMO_BITS /* tests build a runtime with one set (0) */
#define MEMO_BITS 7
#endif
#define MEMO_SETS (1 << MEMO_BITS)
#define MEMO_WAYS 4
#define MEMO_FRAMES 96
struct memo_pair {
	uintptr_t addr, want;
};
/* Pairs come in fours (memo_holds): the last four are padded with pairs
 * that always hold. */
#define MEMO_PAIRS ((2 * MEMO_FRAMES + 1 + 3) & ~3)
struct memo {
	uint64_t value; /* the caller's value (non-zero) */
	uint64_t owner; /* the caller's generation for value */
	uintptr_t bp;   /* frame 0's bp, where it matters */
	unsigned gen;   /* uw_gen */
	int n;          /* depth */
	int bplive;     /* frame 0's bp matters */
	int npairs;     /* a multiple of 4, at least 4 */
	uint64_t fhash; /* check mode: hash of the frames */
	struct memo_pair pair[MEMO_PAIRS];
};
struct memo_set {
	/* Frame 0 of each way (sp 0: empty), side by side: one line to scan. */
	uintptr_t sp[MEMO_WAYS], pc[MEMO_WAYS];
	/* Frame 0 of the last MEMO_WAYS walks offered that were not kept. */
	uintptr_t want_sp[MEMO_WAYS], want_pc[MEMO_WAYS];
	unsigned next;      /* the way to replace next */
	unsigned want_next; /* the want to replace next */
	struct memo way[MEMO_WAYS];
};
extern __thread struct memo_set *uw_memo; /* MEMO_SETS sets, or NULL */

static inline unsigned memo_slot(uintptr_t sp, uintptr_t pc)
{
#if MEMO_BITS
	return (unsigned)(((sp >> 4) ^ pc) * 0x9e3779b97f4a7c15ull >> (64 - MEMO_BITS));
#else
	(void)sp;
	(void)pc;
	return 0;
#endif
}

/* Whether every pair of e still holds: four independent loads a step. */
static inline __attribute__((always_inline)) int memo_holds(const struct memo *e)
{
	const struct memo_pair *p = e->pair, *end = p + e->npairs;

	do {
		if ((*(const uintptr_t *)p[0].addr ^ p[0].want) |
		    (*(const uintptr_t *)p[1].addr ^ p[1].want) |
		    (*(const uintptr_t *)p[2].addr ^ p[2].want) |
		    (*(const uintptr_t *)p[3].addr ^ p[3].want))
			return 0;
		p += 4;
	} while (p < end);
	return 1;
}

/* The remembered walk from (sp, pc, bp) at frame 0 if it still holds. */
static inline __attribute__((always_inline)) const struct memo *
memo_find(uintptr_t sp, uintptr_t pc, uintptr_t bp, uint64_t owner, int max)
{
	const struct memo_set *set;

	if (!uw_memo)
		return NULL;
	set = &uw_memo[memo_slot(sp, pc)];
	for (int w = 0; w < MEMO_WAYS; w++) {
		const struct memo *e;
		if (set->sp[w] != sp || set->pc[w] != pc)
			continue;
		e = &set->way[w];
		if (e->owner == owner && e->n <= max && (!e->bplive || e->bp == bp) &&
		    e->gen == __atomic_load_n(&uw_gen, __ATOMIC_ACQUIRE) && memo_holds(e))
			return e;
	}
	return NULL;
}

#endif
