/*
 * unwind.c - owns stack capture (unwind_*): a caching x86-64 DWARF CFI
 * unwinder, with libgcc's _Unwind_Backtrace as the reference and the
 * fallback for every frame it does not fully understand.
 *
 * Fast path: for each return address, a *rule* says how to find the
 * caller's frame: CFA = rsp|rbp + offset, return address at CFA-8, rbp
 * saved at CFA+k or unchanged, rsp = CFA.  Rules are computed once from
 * .eh_frame_hdr/.eh_frame (the module found with dl_iterate_phdr, the CIE
 * and FDE programs interpreted up to the address) and kept in a lock-free
 * cache of 64-bit words, one per return address.  Anything else (CFA
 * expressions, CFA on another register, signal frames, no FDE, unknown
 * opcodes, a read outside this thread's stack) makes the whole capture
 * fall back to _Unwind_Backtrace, so the result is always the reference
 * unwinder's (MPROF_UNWIND_CHECK=1 runs both and compares; doc/runtime.md).
 *
 * This file is the interface (unwind_capture) with the fast walk and the
 * previous walk it reuses, the hot path, kept together so that it inlines
 * as one; the rest of the module is in unwind_*.c (unwind_int.h).
 */
#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "format.h"
#include "stackhash.h"
#include "unwind.h"
#include "unwind_int.h"
#include "unwind_memo.h"

const char unwind_name[] = "mprof CFI cache (libgcc _Unwind_Backtrace fallback)";

/* ---- the previous walk (mprof paper: most of the chain repeats) ---- */

__thread struct rec *uw_rec;
__thread int uw_fresh;
static pthread_key_t uw_rec_key;
static int uw_rec_key_state; /* 0 not yet, 1 made, -1 failed */

static void rec_release(void *p)
{
	if (p == uw_rec)
		uw_rec = NULL;
	munmap(p, sizeof(struct rec));
	uw_memo_release(); /* the thread is going: so are its remembered walks */
}

/* Caller holds the recursion guard (pthread_setspecific may allocate). */
static struct rec *rec_get(void)
{
	void *m;

	if (uw_rec_key_state == 0) {
		static pthread_mutex_t once = PTHREAD_MUTEX_INITIALIZER;
		pthread_mutex_lock(&once);
		if (uw_rec_key_state == 0)
			uw_rec_key_state = pthread_key_create(&uw_rec_key, rec_release) == 0 ? 1 : -1;
		pthread_mutex_unlock(&once);
	}
	if (uw_rec_key_state < 0)
		return NULL;
	m = mmap(NULL, sizeof(struct rec), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		 0);
	if (m == MAP_FAILED)
		return NULL;
	if (pthread_setspecific(uw_rec_key, m) != 0) {
		munmap(m, sizeof(struct rec));
		return NULL;
	}
	return uw_rec = m;
}

/*
 * Do the words the last walk read above its frame m still hold the same?
 * -1 when they all do.  Else q >= 1: those of r[m-1] .. r[q] hold and
 * r[q-1]'s do not, so a walk from r[m] makes r[m] .. r[q] again and goes
 * on from r[q-1]'s stack address with what is there now; or 0: all the
 * frames hold but the end of the stack does not.
 */
static int rec_check(const struct rec *rc, int m)
{
	const struct step *r = rc->r;
	int q = m;

	if (!(r[m].bpslot & S_BPCHK)) {
		/* Return addresses only (no saved rbp is read up there, the
		 * usual case): four independent loads a step, one branch. */
		for (; q >= 4; q -= 4)
			if ((*(const uintptr_t *)(r[q - 1].sp - 8) ^ r[q - 1].pc) |
			    (*(const uintptr_t *)(r[q - 2].sp - 8) ^ r[q - 2].pc) |
			    (*(const uintptr_t *)(r[q - 3].sp - 8) ^ r[q - 3].pc) |
			    (*(const uintptr_t *)(r[q - 4].sp - 8) ^ r[q - 4].pc))
				break;
		for (; q > 0; q--)
			if (*(const uintptr_t *)(r[q - 1].sp - 8) != r[q - 1].pc)
				return q;
	} else {
		for (; q > 0; q--) {
			const struct step *s = &r[q], *up = &r[q - 1];
			if (*(const uintptr_t *)(up->sp - 8) != up->pc)
				return q;
			if (S_SLOT(s) && (up->bpslot & S_LIVE) &&
			    *(const uintptr_t *)S_SLOT(s) != up->bp)
				return q;
		}
	}
	return !rc->endcfa || *(const uintptr_t *)(rc->endcfa - 8) == 0 ? -1 : 0;
}

/* A run of the last walk's frames a walk took as they are (the chain had
 * changed further out): cur[c0 .. c0 + len) are r[from], r[from - 1], ...,
 * left in r rather than copied. */
struct run {
	int c0, from, len;
};
#define REC_RUNS 32

/*
 * r[k] of a record being rebuilt outermost first (r[k - 1] final, whose
 * bpslot is *prev; 0 for r[0]), its pc, sp and bp in place: what depends on
 * the frames outer to it.  Whether its incoming bp matters (S_LIVE: its CFA
 * is on rbp, or it leaves rbp as it found it to a caller whose bp matters),
 * whether rec_check reads a saved rbp from here out (S_BPCHK), and the
 * hash.  plain: no frame from here in has its CFA on rbp and *prev's bp
 * does not matter, so no bp matters (code without frame pointers); *prev
 * is then just S_BPCHK or 0.
 */
static inline __attribute__((always_inline)) void rec_seal(struct step *d, uintptr_t *prev,
							   uint64_t *h, int plain)
{
	uintptr_t b = d->bpslot, slot = b & ~(uintptr_t)7;

	if (plain) {
		d->bpslot = slot | *prev;
	} else {
		uintptr_t has = -(uintptr_t)(slot != 0), pl = *prev & S_LIVE;
		/* Branch-free: S_LIVE == S_ONRBP << 1, S_BPCHK == S_LIVE << 1. */
		uintptr_t live = (b & S_ONRBP) << 1 | (pl & ~has);
		uintptr_t chk = (*prev & S_BPCHK) | (pl << 1 & has);
		d->bpslot = *prev = slot | (b & S_ONRBP) | live | chk;
	}
	d->h = *h = stackhash_step(*h, d->pc);
}

/*
 * The record after a walk of n new frames (cur[n - 1] outermost) on top of
 * r[0..base] (base == -1: none), runs[0..nrun) among them; onrbp: whether
 * any new frame has its CFA on rbp.  A run whose frames keep their places
 * (as many new frames outer to it as the last walk had: a recursion whose
 * call sites changed, frame for frame) is only sealed again; one that
 * moved is copied to cur first, before r changes.
 */
static inline __attribute__((always_inline)) void
rec_rebuild_pass(struct rec *rc, struct step *r, int n, const struct run *runs, int nrun,
		 uintptr_t prev, uint64_t h, const int plain)
{
	int c = n - 1;

	for (int i = nrun - 1; i >= -1; i--) {
		int stop = i >= 0 ? runs[i].c0 + runs[i].len : 0;
		for (; c >= stop; c--) {
			r[-c].sp = rc->cur[c].sp;
			r[-c].pc = rc->cur[c].pc;
			r[-c].bp = rc->cur[c].bp;
			r[-c].bpslot = rc->cur[c].bpslot;
			rec_seal(&r[-c], &prev, &h, plain);
		}
		if (i >= 0)
			for (; c >= runs[i].c0; c--)
				rec_seal(&r[-c], &prev, &h, plain);
	}
}

static void rec_rebuild(struct rec *rc, int base, int n, uintptr_t onrbp, struct run *runs,
			int nrun)
{
	uint64_t h = base >= 0 ? rc->r[base].h : STACKHASH_SEED;
	uintptr_t prev = base >= 0 ? rc->r[base].bpslot : 0;
	int i, j = 0;

	for (i = 0; i < nrun; i++) {
		if (base + n - runs[i].c0 == runs[i].from) {
			runs[j++] = runs[i];
			continue;
		}
		for (int t = 0; t < runs[i].len; t++)
			rc->cur[runs[i].c0 + t] = rc->r[runs[i].from - t];
	}
	/* cur[c] goes to r[base + n - c]. */
	if (!onrbp && !(prev & S_LIVE))
		rec_rebuild_pass(rc, rc->r + base + n, n, runs, j, prev & S_BPCHK, h, 1);
	else
		rec_rebuild_pass(rc, rc->r + base + n, n, runs, j, prev, h, 0);
}

int unwind_shared(int depth, int *nnew, uint64_t *value)
{
	const struct rec *rc = uw_rec;

	if (!uw_fresh || !rc || !rc->svalue || rc->n != depth)
		return 0;
	*nnew = rc->snew;
	*value = rc->svalue;
	return 1;
}

void unwind_fill(uint64_t *frames, int depth)
{
	struct rec *rc = uw_rec;
	int k;

	if (!rc || !rc->unfilled || rc->n != depth)
		return;
	for (k = rc->snew; k < depth; k++)
		frames[k] = rc->r[depth - 1 - k].pc;
	rc->unfilled = 0;
}

/*
 * The last frame of r[0..m] (r[m].sp < sp; sps fall as the index grows)
 * whose sp is not below sp, or -1: a binary search, for a shallow stack
 * after a deep one (the walk steps over the first few frames itself).
 */
static int rec_above(const struct step *r, int m, uintptr_t sp)
{
	int lo = 0, hi = m; /* the answer is in [lo - 1, hi - 1] */

	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;
		if (r[mid].sp < sp)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo - 1;
}

/* The rule for return address pc (the cache, else the tables); *c is the
 * cache, mapped by the first look-up. */
static inline __attribute__((always_inline)) uint32_t rule_at(const uint64_t **c, uint64_t pc)
{
	uint32_t r = *c ? c_get(*c, pc) : R_EMPTY;

	if (__builtin_expect(r == R_EMPTY, 0)) {
		r = uw_rule_lookup(pc);
		*c = __atomic_load_n(&uw_cache, __ATOMIC_ACQUIRE);
	}
	return r;
}

/* ---- the fast walk ---- */

/*
 * Walk from (pc, sp, bp), the registers of unwind_capture at pc.  Returns
 * the depth, or -1: fall back to the reference unwinder.  Every stack read
 * lies in [sp, hi) of this thread's stack, 8-byte aligned, above the
 * previous frame's, so a bad rule or a corrupt stack cannot fault or loop.
 */
static int walk(uint64_t *frames, int max, uint64_t ret, uint32_t *flags, uintptr_t pc,
		uintptr_t sp, uintptr_t bp, uint64_t owner, uint64_t *value, int lazy)
{
	const uintptr_t hi = uw_hi;
	const uint64_t *c = __atomic_load_n(&uw_cache, __ATOMIC_ACQUIRE);
	struct rec *rc = uw_rec;
	int n = 0, skipped = 0, m = -1;
	uintptr_t endcfa = 0, onrbp = 0, msp;
	uint64_t pvalue = 0;
	struct run runs[REC_RUNS];
	int nrun = 0;

	if (sp < uw_lo || sp >= hi) {
		/* Not this thread's stack (sigaltstack, a coroutine): the
		 * record no longer describes the last capture. */
		if (rc)
			rc->n = 0;
		return -1;
	}
	if (!rc && !(rc = rec_get()))
		return -1; /* no memory for the record: the reference unwinder */
	if (rc->n && rc->gen == __atomic_load_n(&uw_gen, __ATOMIC_ACQUIRE))
		m = rc->n - 1;
	rc->n = 0;
	pvalue = rc->owner == owner ? rc->value : 0;
	rc->value = 0;
	rc->svalue = 0;
	rc->unfilled = 0;
	rc->gen = __atomic_load_n(&uw_gen, __ATOMIC_ACQUIRE);
	if (value)
		*value = 0;
	/* The monitor's own frames, up to the one that returns to `ret`. */
	while (pc != ret) {
		uint32_t r = rule_at(&c, pc);
		uintptr_t cfa;

		if (++skipped > UNWIND_MAX_SKIP || R_KIND(r) != R_NORMAL)
			return -1;
		cfa = (R_ON_RBP(r) ? bp : sp) + R_CFA_OFF(r);
		if (cfa <= sp || cfa > hi || (cfa & 7))
			return -1;
		if (R_RBP_SAVED(r)) {
			uintptr_t bpslot = cfa + (uintptr_t)R_RBP_OFF(r);
			if (bpslot < sp || bpslot + 8 > hi)
				return -1;
			bp = *(const uintptr_t *)bpslot;
		}
		pc = *(const uint64_t *)(cfa - 8);
		sp = cfa;
		if (!pc)
			return -1;
	}
	if (max <= 0) {
		*flags = FORMAT_STACK_TRUNCATED;
		return 0;
	}
	if (value) {
		const struct memo *e = memo_find(sp, pc, bp, owner, max);
		if (e && uw_check > 0) {
			/* Walk anyway; unwind_capture compares. */
			uw_hit_value = e->value;
			uw_hit_fhash = e->fhash;
		} else if (e) {
			/* The record stays the last walk made. */
			rc->n = m + 1;
			rc->value = pvalue;
			*value = e->value;
			return e->n;
		}
	}
	/* The last walk's frame m is the next one that may be reached again:
	 * until sp comes up to its place (msp), no frame is compared. */
	msp = m >= 0 ? rc->r[m].sp : UINTPTR_MAX;
	for (;;) {
		uint32_t r;
		uintptr_t cfa, bpslot = 0;

		if (sp >= msp) {
			/* The last walk's frames below sp are not this one's. */
			for (int k = 0; m >= 0 && rc->r[m].sp < sp; k++, m--)
				if (k == 4) {
					m = rec_above(rc->r, m, sp);
					break;
				}
			if (m >= 0 && rc->r[m].sp == sp && rc->r[m].pc == pc &&
			    (rc->r[m].bp == bp || !(rc->r[m].bpslot & S_LIVE))) {
				int q = rec_check(rc, m);
				if (q < 0)
					goto reuse;
				if (q == 0 || n + (m - q + 1) >= max) {
					m = -1;
				} else {
					/* The chain changed above r[q] (a recursion
					 * entered another way): r[m] .. r[q] are
					 * this walk's frames, taken as they are,
					 * with the bp each restore gives now; the
					 * walk goes on from r[q-1]'s place. */
					if (uw_check > 0)
						__atomic_fetch_add(&uw_n_part, 1, __ATOMIC_RELAXED);
					if (nrun < REC_RUNS) {
						/* Left in r (rec_rebuild). */
						runs[nrun].c0 = n;
						runs[nrun].from = m;
						runs[nrun++].len = m - q + 1;
						for (; m >= q; m--, n++) {
							struct step *st = &rc->r[m];
							frames[n] = st->pc;
							onrbp |= st->bpslot & S_ONRBP;
							st->bp = bp;
							if (S_SLOT(st))
								bp = *(const uintptr_t *)S_SLOT(st);
						}
					}
					for (; m >= q; m--, n++) {
						const struct step *st = &rc->r[m];
						frames[n] = st->pc;
						rc->cur[n] = *st;
						onrbp |= st->bpslot & S_ONRBP;
						rc->cur[n].bp = bp;
						if (S_SLOT(st))
							bp = *(const uintptr_t *)S_SLOT(st);
					}
					sp = rc->r[m].sp;
					pc = *(const uint64_t *)(sp - 8);
					msp = sp; /* r[m] is reached at once */
					if (!pc) {
						endcfa = sp;
						goto done;
					}
					continue;
				}
			}
			msp = m >= 0 ? rc->r[m].sp : UINTPTR_MAX;
		}
		frames[n] = pc;
		rc->cur[n].sp = sp;
		rc->cur[n].pc = pc;
		rc->cur[n].bp = bp;
		n++;
		r = rule_at(&c, pc);
		if (R_KIND(r) != R_NORMAL) {
			if (R_KIND(r) == R_END)
				goto done;
			return -1;
		}
		cfa = (R_ON_RBP(r) ? bp : sp) + R_CFA_OFF(r);
		if (cfa <= sp || cfa > hi || (cfa & 7))
			return -1;
		if (R_RBP_SAVED(r)) {
			bpslot = cfa + (uintptr_t)R_RBP_OFF(r);
			if (bpslot < sp || bpslot + 8 > hi)
				return -1;
			bp = *(const uintptr_t *)bpslot;
		}
		rc->cur[n - 1].bpslot = bpslot | R_ON_RBP(r);
		onrbp |= R_ON_RBP(r);
		pc = *(const uint64_t *)(cfa - 8);
		sp = cfa;
		/* A zero return address ends the stack (libgcc: _URC_END_OF_STACK). */
		if (!pc) {
			endcfa = cfa;
			goto done;
		}
		if (n == max) {
			*flags = FORMAT_STACK_TRUNCATED;
			return n;
		}
	}
done:
	/* A complete walk: keep it, outermost first, for the next one. */
	rec_rebuild(rc, -1, n, onrbp, runs, nrun);
	rc->endcfa = endcfa;
	rc->n = n;
	uw_fresh = 1;
	return n;
reuse:
	/* Frames from here on are the last walk's r[m], r[m-1], ... r[0]. */
	{
		const struct step *src = &rc->r[m];
		int total = n + m + 1, cnt = total > max ? max - n : m + 1, k;

		if (total > max) {
			*flags = FORMAT_STACK_TRUNCATED;
		} else if (pvalue && total <= REC_CAP) {
			/* They are the outermost of the stack pvalue stands for:
			 * the caller may need none of them (unwind_fill). */
			rc->svalue = pvalue;
			rc->snew = n;
			rc->unfilled = lazy;
		}
		if (!rc->unfilled) {
			for (k = 0; k + 4 <= cnt; k += 4) {
				frames[n + k] = src[-k].pc;
				frames[n + k + 1] = src[-k - 1].pc;
				frames[n + k + 2] = src[-k - 2].pc;
				frames[n + k + 3] = src[-k - 3].pc;
			}
			for (; k < cnt; k++)
				frames[n + k] = src[-k].pc;
		}
		/* The record: r[0..m] stays, the new inner frames go above it. */
		if (total <= REC_CAP) {
			rec_rebuild(rc, m, n, onrbp, runs, nrun);
			rc->n = total;
			uw_fresh = total <= max;
		}
		return total > max ? max : total;
	}
}

/* ---- the interface ---- */

extern char **environ;

__attribute__((noinline)) int unwind_capture(uint64_t *frames, int max,
					     const struct unwind_frame0 *f0, uint32_t *flags,
					     uint64_t owner, uint64_t *value, uint32_t *hash)
{
	uint64_t ret = f0->ret;
	uintptr_t pc, sp, bp;
	int n;

	*flags = 0;
	uw_fresh = 0;
	if (value)
		*value = 0;
	if (max < 1)
		return 0;
	if (__builtin_expect(uw_hi <= 1, 0)) {
		if (uw_hi == 1 || !environ) /* unknown, or libc not started yet */
			return unwind_capture_slow(frames, max, ret, flags);
		uw_stack_bounds((uintptr_t)__builtin_frame_address(0));
	}
	if (__builtin_expect(uw_check < 0, 0)) {
		const char *s = getenv("MPROF_UNWIND_CHECK");
		uw_check = s && (s[0] == '1' || s[0] == '2') ? s[0] - '0' : 0;
	}
	/* Frame 0's registers from the entry point; or this function's own at
	 * this very point (the CFI row for pc describes them), walking up
	 * through the monitor's frames to frame 0. */
	__asm__ volatile("leaq 0(%%rip), %0\n\tmovq %%rsp, %1\n\tmovq %%rbp, %2"
			 : "=&r"(pc), "=&r"(sp), "=&r"(bp));
	if (f0->sp) {
		pc = ret;
		sp = f0->sp;
		bp = f0->bp;
	}
	uw_hit_value = 0;
	/* With frame 0 known, unwind_recall has looked the memo up already. */
	n = walk(frames, max, ret, flags, pc, sp, bp, owner,
		 f0->sp && uw_check <= 0 ? NULL : value, value != NULL);
	if (uw_check > 0) {
		if (n > 0) {
			unwind_fill(frames, n); /* compared with the reference's too */
			if (__atomic_fetch_add(&uw_n_fast, 1, __ATOMIC_RELAXED) == 0 && uw_check == 2)
				frames[n - 1] ^= 1;
			n = uw_check_walk(frames, max, n, flags, ret);
		} else {
			__atomic_fetch_add(&uw_n_checked, 1, __ATOMIC_RELAXED);
		}
		/* A recalled walk (unwind_recall) too. */
		if (uw_recall_value && n > 0) {
			__atomic_fetch_add(&uw_n_memo, 1, __ATOMIC_RELAXED);
			if (stackhash(frames, (uint32_t)n, 0) != uw_recall_fhash || *flags) {
				static const char m[] = "mprof: unwind mismatch: a recalled walk differs\n";
				uw_mismatch(m, sizeof m - 1);
			}
		}
		uw_recall_value = 0;
		/* A remembered walk must be the very stack a walk gives. */
		if (uw_hit_value && value && n > 0) {
			__atomic_fetch_add(&uw_n_memo, 1, __ATOMIC_RELAXED);
			if (stackhash(frames, (uint32_t)n, 0) != uw_hit_fhash || *flags) {
				static const char m[] = "mprof: unwind mismatch: a remembered walk differs\n";
				uw_mismatch(m, sizeof m - 1);
			} else {
				*value = uw_hit_value;
			}
		}
	}
	if (n < 0)
		n = unwind_capture_slow(frames, max, ret, flags);
	if (hash && !(value && *value)) {
		/* The record's outer hashes, when it is this very walk (it was
		 * kept whole, and check mode left the frames alone). */
		const struct rec *rc = uw_rec;
		if (uw_fresh && rc && n > 0 && rc->n == n && !*flags && uw_check <= 0) {
			*hash = stackhash_fin(rc->r[n - 1].h, (uint32_t)n, 0);
		} else {
			*hash = stackhash(frames, (uint32_t)n, *flags);
			if (uw_check > 0 && uw_fresh && rc && n > 0 && rc->n == n && !*flags &&
			    *hash != stackhash_fin(rc->r[n - 1].h, (uint32_t)n, 0)) {
				static const char m[] = "mprof: unwind mismatch: the walk's hash differs\n";
				uw_mismatch(m, sizeof m - 1);
			}
		}
	}
	return n;
}
