/*
 * unwind_int.h - what the unwinder's files share, and nothing outside the
 * unwinder may use (its interface is unwind.h).  The unwinder is one
 * module (unwind_*) in several files, one part each:
 *
 *   unwind.c        the interface (unwind_capture): the fast walk, and the
 *                   previous walk it reuses
 *   unwind_gcc.c    the reference unwinder: libgcc's _Unwind_Backtrace
 *   unwind_cfi.c    reading .eh_frame: a return address's rule, from its FDE
 *   unwind_rules.c  the rule cache, and finding a return address's module
 *   unwind_memo.c   whole walks remembered with their caller's value
 *                   (unwind_memo.h: their table, and the look-up the walk
 *                   inlines)
 *   unwind_check.c  check mode: both unwinders, compared
 *   unwind_regs.c   capture from interrupted registers (async-signal-safe),
 *                   and this thread's stack bounds
 *
 * The hot path is in unwind.c, where the walk and its record stay static
 * and inline as they always did, with the remembered walks' look-up, which
 * is static inline in unwind_memo.h (callgrind counts the same
 * instructions per allocation as before the split).  The rule cache's
 * accessors, which the walks in two files use, are static inline here.
 * Names shared across the files start with uw_ or unwind_: a hidden symbol
 * is still global in libmprof.a, where it meets the program's names.
 */
#ifndef UNWIND_INT_H
#define UNWIND_INT_H

#include <stddef.h>
#include <stdint.h>

/* Frames of the monitor itself above `ret`; more means `ret` is not there. */
#define UNWIND_MAX_SKIP 64

/*
 * unwind_gcc.c: the stack above the frame that returns to ret, from the
 * reference unwinder (libgcc's _Unwind_Backtrace), or just [ret],
 * truncated, when that is not safe or ret is not found.
 */
int unwind_capture_slow(uint64_t *frames, int max, uint64_t ret, uint32_t *flags);

/* ---- rules and their cache (unwind_rules.c) ---- */

/*
 * A rule in 32 bits: kind (bits 0-1), CFA on rbp rather than rsp (bit 2),
 * CFA offset (bits 3-19, unsigned), rbp saved (bit 20) at CFA + 8 * the
 * signed 11-bit field (bits 21-31).  A rule that does not fit is FALLBACK.
 */
enum { R_EMPTY, R_NORMAL, R_END, R_FALLBACK };
#define R_KIND(r) ((r) & 3u)
/* uw_rule_from_hdr's word for an address no FDE covers (of kind
 * FALLBACK: never cached as it is).  libgcc ends the stack there (after
 * the frame) unless the code at the return address is a sigreturn:
 * uw_rule_nofde tells which, where the code can be read. */
#define R_NOFDE (R_FALLBACK | 1u << 2)
#define R_ON_RBP(r) ((r) >> 2 & 1u)
#define R_CFA_OFF(r) ((r) >> 3 & 0x1ffffu)
#define R_RBP_SAVED(r) ((r) >> 20 & 1u)
#define R_RBP_OFF(r) ((int64_t)(int32_t)(r) >> 21 << 3)
#define R_CFA_MAX 0x1ffff
#define R_RBP_MIN (-1024 * 8)
#define R_RBP_MAX (1023 * 8)

/*
 * The cache: 2^15 words, direct mapped.  A word is (ra >> 15) << 32 | rule:
 * the slot index is ra's low 15 bits folded with the next 15 (the tag's
 * own), so the slot and the tag together give ra back exactly (user
 * addresses are below 2^47; others are never cached).  One 64-bit word
 * per entry: readers need no lock and can never
 * see half an entry.  Entries are written only with the loader lock held
 * (inside dl_iterate_phdr), which also orders them with the flush after a
 * dlclose.
 */
#define C_BITS 15
#define C_SIZE (1u << C_BITS)
#define C_BYTES (C_SIZE * sizeof(uint64_t))
extern uint64_t *uw_cache;
extern unsigned uw_gen; /* bumped by every flush: previous walks are void */

static inline uint32_t c_slot(uint64_t ra)
{
	return (uint32_t)(ra ^ ra >> 15) & (C_SIZE - 1);
}

static inline uint32_t c_get(const uint64_t *c, uint64_t ra)
{
	uint64_t e = __atomic_load_n(&c[c_slot(ra)], __ATOMIC_RELAXED);
	return e >> 32 == ra >> 15 ? (uint32_t)e : R_EMPTY;
}

static inline void c_put(uint64_t *c, uint64_t ra, uint32_t rule)
{
	if (c && ra >> 47 == 0)
		__atomic_store_n(&c[c_slot(ra)], (ra >> 15) << 32 | rule, __ATOMIC_RELAXED);
}

/*
 * The rule for return address ra from its module's tables, cached; mapping
 * the cache first if need be.  Calls dl_iterate_phdr (the loader lock): not
 * in a signal handler.
 */
uint32_t uw_rule_lookup(uint64_t ra);

/* unwind_cfi.c: the rule at address pc (return address - 1) from the
 * .eh_frame_hdr at hdr; pure reads of the module's mapped tables. */
uint32_t uw_rule_from_hdr(const uint8_t *hdr, uintptr_t pc);
/* For R_NOFDE at return address ra, which lies in [lo, lo + len), a
 * readable segment of its module: END, as libgcc's x86-64 fallback (no
 * FDE, no sigreturn there: the frame is the stack's last; Go's
 * runtime.asmcgocall under every cgo call), or FALLBACK. */
uint32_t uw_rule_nofde(uintptr_t ra, uintptr_t lo, uintptr_t len);

/* ---- this thread's stack (unwind_regs.c) ---- */

extern __thread uintptr_t uw_lo, uw_hi; /* [lo, hi) readable; hi == 1: unknown */
/* Find them (bounds.c) from sp, an address on this thread's stack. */
void uw_stack_bounds(uintptr_t sp);

/* ---- the previous walk (unwind.c) ---- */

/*
 * Each thread keeps its last complete walk, outermost frame first: for
 * every frame the registers it was entered with (sp, pc, bp) and where its
 * rule read the caller's rbp.  When a new walk reaches a frame with the same
 * sp, pc and bp, the rest of the walk would read the same stack words with
 * the same rules; if those words still hold the values the last walk read
 * (checked: independent loads, no rule look-ups), the rest is the last
 * walk's, exactly.
 */
#define REC_CAP 1024
struct step {
	uintptr_t sp, pc, bp;
	uintptr_t bpslot; /* where rbp was saved (8-aligned), | S_ONRBP | S_LIVE */
	uint64_t h;       /* in r[]: stackhash of the pcs from r[0] to this one */
};
#define S_ONRBP 1u /* this frame's CFA is on rbp */
#define S_LIVE 2u  /* the rest of the walk depends on the bp it came with */
#define S_BPCHK 4u /* in r[]: rec_check reads a saved rbp at or below here */
_Static_assert(S_LIVE == S_ONRBP << 1 && S_BPCHK == S_LIVE << 1, "rec_seal's bit tricks");
#define S_SLOT(s) ((s)->bpslot & ~(uintptr_t)7)
struct rec {
	int n;            /* frames in r[], 0: none */
	unsigned gen;     /* uw_gen when made */
	uintptr_t endcfa; /* the outermost frame's CFA if its return address was 0 */
	uint64_t value, owner; /* unwind_memo_set's for the walk in r[], 0: none */
	uint64_t svalue;  /* the last capture's frames from snew on are the */
	int snew;         /* outermost of the stack svalue stands for (0: none) */
	int unfilled;     /* and are r[n-1-snew] .. r[0], not in frames yet */
	struct step r[REC_CAP];   /* outermost first */
	struct step cur[REC_CAP]; /* the walk under way, innermost first */
};
extern __thread struct rec *uw_rec;
/* The record is this thread's last capture, made whole by the fast walk
 * (not a fallback, not truncated): only then may it be remembered or give
 * the stack's hash. */
extern __thread int uw_fresh;

/* ---- whole walks remembered (unwind_memo.c, unwind_memo.h) ---- */

/* This thread's remembered walks go (the thread is going). */
void uw_memo_release(void);

/* ---- check mode (unwind_check.c) ---- */

extern int uw_check; /* MPROF_UNWIND_CHECK: -1 not read yet, 0 off, 1 on, 2 spoiling */
/* What the summary at exit counts (check_report). */
extern uint64_t uw_n_checked, uw_n_fast, uw_n_memo, uw_n_part;
/* A hit's value and frame hash (the walk's, unwind_recall's), verified by
 * the full walk that follows. */
extern __thread uint64_t uw_hit_value, uw_hit_fhash;
extern __thread uint64_t uw_recall_value, uw_recall_fhash;
/* A mismatch: count it, and say msg (n bytes) on stderr. */
void uw_mismatch(const char *msg, size_t n);
/*
 * Compare the fast walk's stack f[0..nf) (flags *ff) with the reference
 * unwinder's; on a difference say so and put the reference's in f.
 * Returns the depth.
 */
int uw_check_walk(uint64_t *f, int max, int nf, uint32_t *ff, uint64_t ret);

#endif
