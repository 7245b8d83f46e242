/*
 * unwind_memo.c - whole walks remembered with their caller's value (part
 * of unwind_*, unwind_int.h): unwind_memo_set makes them, unwind_recall
 * finds one without walking; the look-up, which the fast walk inlines
 * too, is unwind_memo.h's.
 */
#include <sys/mman.h>

#include "stackhash.h"
#include "unwind.h"
#include "unwind_int.h"
#include "unwind_memo.h"

/* What padding pairs read: always equal to their want, 0. */
static const uintptr_t memo_pad;
__thread struct memo_set *uw_memo; /* MEMO_SETS sets, or NULL */
static __thread int uw_memo_off; /* mapping failed: never again */

void uw_memo_release(void)
{
	if (uw_memo)
		munmap(uw_memo, MEMO_SETS * sizeof(struct memo_set));
	uw_memo = NULL;
	uw_memo_off = 1;
}

static inline __attribute__((always_inline)) void memo_set(uint64_t owner, uint64_t value,
							   const uint64_t *frames, int depth,
							   int whole)
{
	struct rec *rc = uw_rec;
	struct memo_set *set;
	struct memo *e;
	int m, q, w, k = 0;

	if (!uw_fresh || !rc || depth < 1 || rc->n != depth || !value)
		return;
	if (uw_check > 0) {
		/* The walk to remember must be the stack value stands for. */
		int same = rc->n == depth;
		for (q = 0; same && q < depth; q++)
			same = rc->r[rc->n - 1 - q].pc == frames[q];
		if (!same) {
			static const char msg[] =
				"mprof: unwind mismatch: the walk to remember is not the stack counted\n";
			uw_mismatch(msg, sizeof msg - 1);
			return;
		}
	}
	/* The next walk's frames that are this one's stand for value too. */
	rc->value = value;
	rc->owner = owner;
	if (!whole || rc->n > MEMO_FRAMES || uw_memo_off)
		return;
	if (!uw_memo) {
		void *p = mmap(NULL, MEMO_SETS * sizeof(struct memo_set), PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED) {
			uw_memo_off = 1;
			return;
		}
		uw_memo = p; /* per thread, for the life of the thread's stack */
	}
	m = rc->n - 1; /* frame 0 */
	set = &uw_memo[memo_slot(rc->r[m].sp, rc->r[m].pc)];
	/* Only a frame 0 offered before is worth the pairs (deep stacks that
	 * never repeat would pay for nothing).  Several recent offers are
	 * remembered: chains that share a set and take turns must not keep
	 * each other out. */
	for (w = 0; w < MEMO_WAYS; w++)
		if (set->want_sp[w] == rc->r[m].sp && set->want_pc[w] == rc->r[m].pc)
			break;
	if (w == MEMO_WAYS) {
		w = (int)(set->want_next++ % MEMO_WAYS);
		set->want_sp[w] = rc->r[m].sp;
		set->want_pc[w] = rc->r[m].pc;
		return;
	}
	/* An empty way, else the next in turn. */
	for (w = 0; w < MEMO_WAYS && set->sp[w]; w++)
		;
	if (w == MEMO_WAYS)
		w = (int)(set->next++ % MEMO_WAYS);
	e = &set->way[w];
	/* rec_check(rc, m), as pairs. */
	for (q = m; q > 0; q--) {
		const struct step *st = &rc->r[q], *up = &rc->r[q - 1];
		e->pair[k].addr = up->sp - 8;
		e->pair[k++].want = up->pc;
		if (S_SLOT(st) && (up->bpslot & S_LIVE)) {
			e->pair[k].addr = S_SLOT(st);
			e->pair[k++].want = up->bp;
		}
	}
	if (rc->endcfa) {
		e->pair[k].addr = rc->endcfa - 8;
		e->pair[k++].want = 0;
	}
	while ((k & 3) || k == 0) {
		e->pair[k].addr = (uintptr_t)&memo_pad;
		e->pair[k++].want = 0;
	}
	e->npairs = k;
	set->sp[w] = rc->r[m].sp;
	set->pc[w] = rc->r[m].pc;
	e->bp = rc->r[m].bp;
	e->bplive = (rc->r[m].bpslot & S_LIVE) != 0;
	e->gen = rc->gen;
	e->n = rc->n;
	e->owner = owner;
	e->value = value;
	if (uw_check > 0)
		e->fhash = stackhash(frames, (uint32_t)depth, 0);
}

/* Two entry points, each with one caller, into which link-time
 * optimisation inlines it: the monitor's walk (with it as a call, 1e5
 * distinct 22-deep stacks cost 20 instructions an allocation more) and
 * its language stacks'.  no_icf: folded into one, they would have two
 * callers. */
__attribute__((no_icf)) void unwind_memo_set(uint64_t owner, uint64_t value,
					     const uint64_t *frames, int depth, int whole)
{
	memo_set(owner, value, frames, depth, whole);
}

__attribute__((no_icf)) void unwind_memo_keep(uint64_t owner, uint64_t value,
					      const uint64_t *frames, int depth)
{
	memo_set(owner, value, frames, depth, 1);
}

__attribute__((always_inline)) inline int unwind_recall(const struct unwind_frame0 *f0, uint64_t owner,
						      int max, uint64_t *value)
{
	const struct memo *e;

	*value = 0;
	if (!uw_memo || !f0->sp || !(e = memo_find(f0->sp, f0->ret, f0->bp, owner, max)))
		return -1;
	if (uw_check > 0) {
		uw_recall_value = e->value;
		uw_recall_fhash = e->fhash;
		return -1;
	}
	*value = e->value;
	return e->n;
}
