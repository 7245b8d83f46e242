/*
 * monitor.c - owns the monitor's state (mon_*), its trouble (stop, say why
 * once), the recursion guard's slow path, and recording allocations and
 * frees into the stack table, the address map and the thread's block (its
 * counts and size bins; the blocks themselves are blocks.c's): the hot
 * path.  Initialisation and configuration, saving, mprof_stop and
 * mprof_restart, fork and exit are monitor_ctl.c's.  The heap's peak is
 * peak.c's; its per-stack part lives beside each stack's counters in the
 * blocks.
 *
 * mprof paper, "The Monitor": every allocation is charged to its call chain
 * (here the whole stack, not the last five callers), and the object is
 * associated with its requested size and its chain so a free can be
 * charged back.  The paper kept both in a header on the object; we keep
 * them in a side map (addrmap.c) so that blocks from memalign/valloc and
 * malloc_usable_size work (mprof.1, BUGS).
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "addrmap.h"
#include "blocks.h"
#include "custom.h"
#include "lang.h"
#include "langrec.h"
#include "langname.h"
#include "mkeep.h"
#include "monitor.h"
#include "monitor_rec.h"
#include "mprof.h"
#include "outfile.h"
#include "peak.h"
#include "sample.h"
#include "stackhash.h"
#include "lifetime.h"
#include "stacks.h"
#include "timeline.h"
#include "unwind.h"

/* An object's slot in the address map holds its stack index + 1 in
 * ADDRMAP_IDX_BITS bits; the table never grows past that. */
_Static_assert(STACKS_MAX <= 1u << ADDRMAP_IDX_BITS, "stack indices fit the address map");


struct mon mon;
__thread int mon_guard;

/*
 * Linked from libmprof.a, the monitor, the entry points (malloc.c) and the
 * API (api.c) come as one: a program that only calls the API gets the
 * monitor, and one that calls the API through weak references (which do
 * not pull archive members, mprof.h) still finds it.
 */
extern const char mon_hooks_anchor;
__attribute__((used)) static const void *const mon_link_refs[] = {
	&mon_hooks_anchor, (void *)set_mprof_autosave, (void *)mprof_stop, (void *)mprof_restart,
};



/* ---- trouble ---- */

void mon_trouble(const char *what, const char *detail)
{
	MON_KEEP_ERRNO;
	int st = __atomic_load_n(&mon.state, __ATOMIC_ACQUIRE);

	for (;;) {
		if (st == MON_TROUBLE)
			return;
		if (__atomic_compare_exchange_n(&mon.state, &st, MON_TROUBLE, 0, __ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE))
			break;
	}
	mon_dispatch();
	/* One write: processes that stop at once (a server's workers) share
	 * a log, and five writes each came out interleaved. */
	char line[PATH_MAX + 256];
	size_t n = 0;
	const char *part[] = { "mprof: ", what, detail ? ": " : "", detail ? detail : "",
			       "; profiling stopped\n" };

	for (size_t i = 0; i < sizeof part / sizeof *part; i++)
		for (const char *c = part[i]; *c && n < sizeof line - 1; c++)
			line[n++] = *c;
	if (n == sizeof line - 1)
		line[n - 1] = '\n';
	outfile_say(line, n);
}

/* ---- entering ---- */

int mon_enter_slow(int is_alloc)
{
	int st = __atomic_load_n(&mon.state, __ATOMIC_ACQUIRE);

	if (st == MON_UNINIT) {
		mon_init();
		st = __atomic_load_n(&mon.state, __ATOMIC_ACQUIRE);
	}
	if (st == MON_SAMPLING)
		return 2;
	if (st != MON_ON) {
		/* Another thread is initialising (never wait: it may need a
		 * loader lock we hold), or trouble stopped us. */
		if (is_alloc && st != MON_STOPPED && st != MON_OFF)
			mon_drop();
		return 0;
	}
	mon_guard = 1;
	return 1;
}

/* ---- recording ---- */


/*
 * Charge a free to the stack that allocated it.  tmp: 1 if it is a
 * temporary (the thread's last allocation, freed by the thread as its next
 * event: blocks.h), 0 if not, TEMP_CHECK (a constant) to tell here, for
 * object p (the caller then ends the run: t->last_p = 0).
 */
#define TEMP_CHECK 2
static inline __attribute__((always_inline)) void credit_free(struct blocks_thread *t, uint32_t idx, uint64_t size,
							     uint64_t w, int tmp, uintptr_t p)
{
	uint64_t *c;
	int sc;
	uint32_t bin;

	if (peak_rise_due(&t->peak))
		blocks_publish(t);
	c = blocks_ctr(t, idx);
	sc = format_size_class(size);
	bin = format_bin_index(size);
	if (!c) {
		mon_trouble("cannot map memory for counters", NULL);
		return;
	}
	if (__builtin_expect(peak_stale(&t->peak, blocks_ctr_peak(c)), 0))
		blocks_turn(t, c);
	blocks_bump(&c[BLOCKS_CTR(MPROF_C_FREES, sc)], w);
	blocks_bump(&c[BLOCKS_CTR(MPROF_C_FREED, sc)], w * size);
	if (tmp == TEMP_CHECK ? t->last_p == p : tmp) {
		blocks_bump(&blocks_ctr_temp(c)[0], w);
		blocks_bump(&blocks_ctr_temp(c)[1], w * size);
	}
	blocks_bump(&t->bins[bin][1], w);
	if (bin == FORMAT_NBINS - 1)
		blocks_bump(&t->big[1], w * size);
	if (peak_free_due(&t->peak, w * size))
		blocks_publish(t);
}

/* A free: credit the stack (found) or count an unknown free, into t,
 * which counts for the current profile (mon_self() and blocks_orphan_lock()
 * made it so); w: the allocations it stands for (1 but for a sample). */
static void settle_sample(struct blocks_thread *t, uint32_t idx, uint64_t size, uint64_t w, int tmp,
			  uintptr_t p);

static inline __attribute__((always_inline)) void settle_into(struct blocks_thread *t, int found,
							     uint32_t idx, uint64_t size, uint64_t w,
							     int tmp, uintptr_t p)
{
	/* An index from before a restart belongs to the old profile. */
	if (found && idx >= stacks_base() && idx < stacks_count())
		credit_free(t, idx, size, w, tmp, p);
	else if (found && lifetime_is(idx))
		settle_sample(t, idx, size, w, tmp, p);
	else
		blocks_bump(&t->t[BLOCKS_T_UNKNOWN], 1);
}

/* The free of a lifetime sample (lifetime.h): its life bucketed, then
 * credited to its stack.  Out of line: one free in thousands. */
static __attribute__((noinline)) void settle_sample(struct blocks_thread *t, uint32_t idx,
						    uint64_t size, uint64_t w, int tmp, uintptr_t p)
{
	MON_KEEP_ERRNO;
	uint32_t real = lifetime_freed(idx, timeline_ns(), timeline_allocated(t));

	if (real >= stacks_base() && real < stacks_count())
		credit_free(t, real, size, w, tmp, p);
	else
		blocks_bump(&t->t[BLOCKS_T_UNKNOWN], 1);
}

/* The same into the orphan block (t is NULL: the thread's block is gone). */
static __attribute__((noinline)) void settle_orphan(uint64_t e, int found, uint32_t idx,
						    uint64_t size, uint64_t w)
{
	MON_KEEP_ERRNO;
	struct blocks_thread *t = blocks_orphan_lock(e);

	if (!t)
		return;
	settle_into(t, found, idx, size, w, 0, 0);
	blocks_orphan_flush(t);
	blocks_orphan_unlock();
}

static inline __attribute__((always_inline)) void settle_free(struct blocks_thread *t, uint64_t e,
							     int found, uint32_t idx,
							     uint64_t size, uint64_t w, int tmp,
							     uintptr_t p)
{
	if (__builtin_expect(!t, 0))
		settle_orphan(e, found, idx, size, w);
	else
		settle_into(t, found, idx, size, w, tmp, p);
}

static inline unsigned cache_slot(uint32_t hash)
{
	return hash >> 29; /* the table probes by the low bits */
}


/*
 * Count an allocation of n bytes on the stack frames[0..depth-1] into t
 * (this thread's block, or the orphan under its lock); the stack's index
 * (-1: failed).  A stack met recently is found in t's small cache, with no
 * probe (mprof paper: most of the chain repeats).  pos (or NULL): where the
 * table keeps the stack's frames from pos->at on, which the unwinder may
 * not have filled yet (unwind_fill).
 */
static int64_t count_alloc(struct blocks_thread *t, uint64_t *frames, int depth, uint32_t flags,
			   uint32_t hash, size_t n, int sc, uint64_t w, const struct stacks_pos *pos,
			   int *fresh)
{
	unsigned k = cache_slot(hash);
	const struct stacks_rec *r = t->cache[k].r;
	const struct stacks_pos *shared = pos;
	int64_t idx = -1;
	uint64_t *c;
	int seen = 0;

	if (pos) {
		/* The outer frames are the previous stack's: compare the new ones. */
		if (r && stacks_same_at(r, frames, (uint32_t)depth, flags, pos))
			goto cached;
		idx = stacks_find_at(frames, (uint32_t)depth, flags, hash, pos, &seen);
	}
	if (idx < 0) {
		uint32_t before = stacks_count();

		pos = NULL;
		if (!shared || seen || unwind_checking()) {
			unwind_fill(frames, depth);
			if (r && stacks_same(r, frames, (uint32_t)depth, flags))
				goto cached;
			idx = stacks_intern(frames, (uint32_t)depth, flags, hash, t->last, shared);
		} else {
			/* No stack of this hash in the table (r neither): most
			 * likely a new one, whose outer frames need never be
			 * copied out of the unwinder's record. */
			idx = stacks_intern_lazy(frames, (uint32_t)depth, flags, hash, t->last, shared,
						 unwind_fill);
		}
		if (fresh)
			*fresh = idx >= (int64_t)before;
		if (idx < 0) {
			mon_trouble("the stack table is full or out of memory", NULL);
			return -1;
		}
		/* Check mode: a stack that took its outer frames from where
		 * the unwinder said they were is the stack captured. */
		if (shared && unwind_checking())
			unwind_check_shared(
				stacks_same(stacks_get((uint32_t)idx), frames, (uint32_t)depth, flags));
	}
	c = blocks_ctr(t, (uint32_t)idx);
	if (!c) {
		mon_trouble("cannot map memory for counters", NULL);
		return -1;
	}
	blocks_touch(c); /* a walked stack: often new here */
	t->cache[k].r = stacks_get((uint32_t)idx);
	t->cache[k].ctr = c;
	t->cache[k].idx = (uint64_t)idx;
	goto counted;
cached:
	c = t->cache[k].ctr;
	idx = (int64_t)t->cache[k].idx;
counted:
	t->last = t->cache[k].r;
	/* Check mode fills every frame: a lookup by shared frames is verified. */
	if (__builtin_expect(pos != NULL, 1) && unwind_checking())
		unwind_check_shared(stacks_same(t->last, frames, (uint32_t)depth, flags));
	mon_count(t, c, n, sc, w, 0);
	return idx;
}

#define ORPHAN_DEPTH 128 /* frames kept by a thread past its block */

/*
 * Where the table keeps the outer frames of the stack just captured (depth
 * frames) when the unwinder reused them from the previous capture, whose
 * stack is known (its index came back from stacks_intern for this
 * profile): into *pos, which is returned; else NULL.
 */
static const struct stacks_pos *shared_place(int depth, struct stacks_pos *pos)
{
	const struct stacks_rec *r;
	uint64_t v;
	int nnew;

	if (!unwind_shared(depth, &nnew, &v) || v - 1 < stacks_base() || v - 1 >= stacks_count())
		return NULL;
	r = stacks_get((uint32_t)(v - 1));
	if ((uint32_t)(depth - nnew) > r->depth || nnew >= depth)
		return NULL;
	stacks_place(r, r->depth - (uint32_t)(depth - nnew), (uint32_t)nnew, pos);
	return pos;
}



__attribute__((noinline)) void mon_alloc_walk(void *p, size_t n, const struct unwind_frame0 *f0,
					    struct blocks_thread *t, uint64_t e, uint64_t w)
{
	MON_KEEP_ERRNO;
	uint64_t orphan_frames[ORPHAN_DEPTH], *frames, known = 0;
	struct stacks_pos pos;
	uint32_t flags, hash;
	int64_t idx, left = 0;
	int depth, fresh = 0, tl;

	if (t) {
		/* The thread's last allocation (temporaries, blocks.h); a
		 * sample's, with the count of allocations that made it last. */
		t->last_p = (uintptr_t)p;
		t->last_n = t->s_allocs;
		if (mon.sample)
			mon_sample_last = (uintptr_t)p;
	}
	/* The exact monitor's timeline countdown (timeline.h; the inlined
	 * path's is mon_count's): down before the count, the tick after. */
	tl = t && !mon.sample;
	if (tl)
		left = TIMELINE_DOWN(t, n);
	frames = t ? t->frames : orphan_frames;
	depth = unwind_capture(frames, t ? MON_MAX_DEPTH : ORPHAN_DEPTH, f0, &flags, e,
			       t ? &known : NULL, &hash);
	if (!mon_on(__atomic_load_n(&mon.state, __ATOMIC_RELAXED)))
		return; /* stopped meanwhile */
	if (t && known) {
		int64_t none;

		idx = mon_count_known(t, known, n, w, 0, &none);
		if (idx < 0)
			return;
	} else if (t) {
		idx = count_alloc(t, frames, depth, flags, hash, n, format_size_class(n), w,
				  shared_place(depth, &pos), &fresh);
		/* A stack met for the first time is not remembered as a whole
		 * walk: most never come back (1e5 distinct 22-deep stacks paid
		 * ~560 instructions each for pairs never read), and one that
		 * does is remembered then. */
		if (idx >= 0)
			unwind_memo_set(e, (uint64_t)idx + 1, frames, depth, !fresh);
	} else {
		if (!(t = blocks_orphan_lock(e)))
			return;
		idx = count_alloc(t, frames, depth, flags, hash, n, format_size_class(n), w, NULL,
				  &fresh);
		blocks_orphan_flush(t);
		blocks_orphan_unlock();
	}
	mon_alloc_settle(p, n, e, idx);
	if (tl)
		TIMELINE_DUE(t, left, p);
}


/* Count, in t's block or the orphan's (t NULL), the allocation of n bytes
 * at p on the stack frames[0..depth-1]; its index, or -1. */
static int64_t lang_count(struct blocks_thread *t, uint64_t e, uint64_t *frames, int depth,
			  uint32_t flags, size_t n)
{
	uint32_t hash = stackhash(frames, (uint32_t)depth, flags);
	int64_t idx;

	if (t)
		return count_alloc(t, frames, depth, flags, hash, n, format_size_class(n), 1, NULL,
				   NULL);
	if (!(t = blocks_orphan_lock(e)))
		return -1;
	idx = count_alloc(t, frames, depth, flags, hash, n, format_size_class(n), 1, NULL, NULL);
	blocks_orphan_flush(t);
	blocks_orphan_unlock();
	return idx;
}

/*
 * An object of an interpreted language (python.c), or any allocation in
 * its process: its C stack, with the language's frames in place of the
 * interpreter's (lang.h).  The C stack is a record the unwinder remembers
 * (langrec.h); the stack made of it with the thread's language frames is
 * looked up by their key, and made (rewritten, hashed, counted) only the
 * first time.  A thread past its block, or one whose record cannot be
 * mapped, walks and rewrites every time.  errno: the caller keeps it
 * (python.c's hooks, mon_alloc).
 */
/* The kind of t's object waiting to be told, now that it has its type. */
static __attribute__((noinline, cold)) void lang_kind(struct blocks_thread *t,
						      const struct lang_ops *ops)
{
	char buf[72];
	size_t n = ops->kind(t->lang_kind_obj, buf, sizeof buf);

	if (n)
		langname_set_kind(t->lang_kind_id, buf, n);
	t->lang_kind_obj = 0;
}

void mon_alloc_lang(void *p, size_t n, const struct unwind_frame0 *f0, const struct lang_ops *ops,
		    int obj)
{
	uint64_t *frames, e, v = 0, k[2], idx1;
	struct blocks_thread *t = mon_self(&e);
	struct langrec *lr;
	uint32_t flags, hash;
	int64_t idx, left = 0, c;
	int depth = 0;

	if ((uint64_t)n >> MON_SIZE_BITS) {
		mon_drop();
		return;
	}
	if (__builtin_expect(!t || !(lr = langrec_get(t, e)), 0)) {
		uint64_t orphan_frames[ORPHAN_DEPTH], out[ORPHAN_DEPTH];

		/* ORPHAN_DEPTH frames: the scratch is on this stack. */
		frames = t ? t->frames : orphan_frames;
		depth = unwind_capture(frames, ORPHAN_DEPTH, f0, &flags, e, NULL, &hash);
		depth = ops->rewrite(frames, depth, ORPHAN_DEPTH, out, &flags);
		if (!mon_on(__atomic_load_n(&mon.state, __ATOMIC_RELAXED)))
			return;
		if (t) {
			t->last_p = (uintptr_t)p;
			if (!mon.sample)
				left = TIMELINE_DOWN(t, n);
		}
		idx = lang_count(t, e, frames, depth, flags, n);
		mon_alloc_settle_in(p, n, e, idx, 1);
		if (t && !mon.sample)
			TIMELINE_DUE(t, left, p);
		return;
	}
	if (__builtin_expect(t->lang_kind_obj != 0, 0))
		lang_kind(t, ops);
	frames = t->frames;
	c = -1;
	if (unwind_recall(f0, lr->owner, MON_MAX_DEPTH, &v) < 0) {
		depth = unwind_capture(frames, MON_MAX_DEPTH, f0, &flags, lr->owner, &v, &hash);
		if (!v) {
			unwind_fill(frames, depth);
			if ((c = langrec_add(lr, frames, depth, flags, ops->strip)) >= 0)
				unwind_memo_keep(lr->owner, (uint64_t)c + 1, frames, depth);
		}
	}
	if (v && v - 1 < lr->ncrec)
		c = (int64_t)v - 1;
	ops->key(k);
	idx1 = c >= 0 ? langrec_find(lr, (uint64_t)c, k) : 0;
	if (!mon_on(__atomic_load_n(&mon.state, __ATOMIC_RELAXED)))
		return;
	t->last_p = (uintptr_t)p; /* the thread's last allocation (temporaries) */
	if (idx1) {
		if ((idx = mon_count_known(t, idx1, n, 1, !mon.sample, &left)) >= 0) {
			mon_alloc_settle_in(p, n, e, idx, 1);
			if (!mon.sample)
				TIMELINE_DUE(t, left, p);
		}
		return;
	}
	/* A new pair: the stack made of the record's frames (or of the walk
	 * just made, too deep to keep). */
	if (c >= 0)
		depth = langrec_frames(lr, (uint64_t)c, frames, &flags);
	else if (v)
		return; /* cannot be: a remembered walk of no record */
	depth = ops->rewrite(frames, depth, LANGREC_OUT < MON_MAX_DEPTH ? LANGREC_OUT : MON_MAX_DEPTH,
			     lr->out, &flags);
	/* A new stack of an object made by a language frame whose kind is not
	 * known: its type is looked at by the thread's next allocation (the
	 * object is not initialised yet).  Freed meanwhile, it most often
	 * still has it (pymalloc's free list takes the first word, the
	 * type is the second, or the fourth after the collector's header);
	 * else, or unmapped, ops->kind tells nothing or another type. */
	if (obj && depth > 0 && FORMAT_IS_LANG_FRAME(frames[0]) &&
	    !langname_has_kind(FORMAT_LANG_FRAME_ID(frames[0]))) {
		t->lang_kind_obj = (uintptr_t)p;
		t->lang_kind_id = FORMAT_LANG_FRAME_ID(frames[0]);
	}
	if (!mon.sample)
		left = TIMELINE_DOWN(t, n);
	idx = lang_count(t, e, frames, depth, flags, n);
	if (idx >= 0 && c >= 0)
		langrec_put(lr, (uint64_t)c, k, (uint64_t)idx + 1);
	mon_alloc_settle_in(p, n, e, idx, 1);
	if (!mon.sample)
		TIMELINE_DUE(t, left, p);
}

const struct lang_ops *mon_lang;

void mon_alloc(void *p, size_t n, const struct unwind_frame0 *f0)
{
	/* In an interpreter's process, malloc's blocks get its frames too
	 * (python.c), and its stacks are remembered otherwise (langrec.h). */
	if (__builtin_expect(mon_lang != NULL, 0)) {
		MON_KEEP_ERRNO;

		mon_alloc_lang(p, n, f0, mon_lang, 0);
		return;
	}
	mon_alloc_inline(p, n, f0);
}

/* lang: a free of the language paths, whose small objects may be the fine
 * shadow's (addrmap.h): looked for there when the main shadow has none. */
static inline __attribute__((always_inline)) void free_body(void *p, const int lang)
{
	uint64_t e, size = 0;
	struct blocks_thread *t = mon_self(&e);
	uint32_t idx = 0;
	int found = addrmap_take((uintptr_t)p, &idx, &size);

	if (lang && !found)
		found = addrmap_take_fine((uintptr_t)p, &idx, &size);

	settle_free(t, e, found, idx, size, 1, TEMP_CHECK, (uintptr_t)p);
	/* Any free ends the run: a temporary is freed by the thread's very
	 * next event, as heaptrack counts them (a, b allocated, then a and
	 * b freed: none). */
	if (t)
		t->last_p = 0;
}

/* malloc.c's free_on is its only caller: inlined there (loop: 9
 * instructions a pair less than as a call).  no_icf: mon_free_lang's
 * body is the same, and folded into one function (GCC's identical code
 * folding) they would have two callers and no inlining (loop +9). */
__attribute__((no_icf)) void mon_free(void *p)
{
	free_body(p, 0);
}

/* malloc.c's free_lang: a copy of its own, so that each of these keeps
 * its one caller (python.c's hook_free inlines mon_free_lang). */
__attribute__((no_icf)) void mon_free_lang_malloc(void *p)
{
	free_body(p, 1);
}

__attribute__((no_icf)) void mon_free_lang(void *p)
{
	free_body(p, 1);
}

/*
 * The custom path: always a full walk with nothing remembered (one call
 * site may report objects of several categories, and a remembered walk
 * knows its site, not the category), and the custom map for the object.
 */
void mon_alloc_custom(const void *p, size_t n, int category, const struct unwind_frame0 *f0)
{
	uint64_t orphan_frames[ORPHAN_DEPTH], *frames, e;
	struct blocks_thread *t = mon_self(&e);
	uint32_t flags, hash;
	int64_t idx;
	int depth, as;

	if ((uint64_t)n >> MON_SIZE_BITS || !custom_category_ok(category)) {
		mon_drop();
		return;
	}
	if (t) {
		t->last_p = 0; /* an allocation since the last (temporaries) */
		if (!mon.sample)
			TIMELINE_COUNT(t, n, NULL);
	}
	frames = t ? t->frames : orphan_frames;
	depth = unwind_capture(frames, t ? MON_MAX_DEPTH : ORPHAN_DEPTH, f0, &flags, e, NULL, &hash);
	if (!mon_on(__atomic_load_n(&mon.state, __ATOMIC_RELAXED)))
		return;
	flags |= (uint32_t)category << FORMAT_STACK_CATEGORY_SHIFT;
	if (t) {
		idx = count_alloc(t, frames, depth, flags, hash, n, format_size_class(n), 1, NULL, NULL);
	} else {
		if (!(t = blocks_orphan_lock(e)))
			return;
		idx = count_alloc(t, frames, depth, flags, hash, n, format_size_class(n), 1, NULL, NULL);
		blocks_orphan_flush(t);
		blocks_orphan_unlock();
	}
	if (idx < 0) {
		mon_drop();
		return;
	}
	/* As alloc_settle: an object counted in the old profile of a restart
	 * carries no index. */
	if (__atomic_load_n(&mon.epoch, __ATOMIC_ACQUIRE) != e)
		return;
	if (custom_put((uintptr_t)p, (uint32_t)idx, n) < 0) {
		mon_trouble("cannot map memory for the custom allocation map", NULL);
		return;
	}
	as = __atomic_load_n(&mon.autosave, __ATOMIC_RELAXED);
	if (__builtin_expect(as > 0, 0) && (MON_ADD(mon.nallocs, 1) + 1) % (uint64_t)as == 0)
		mon_autosave();
}

uintptr_t mon_last_swap(uintptr_t v)
{
	struct blocks_thread *t = blocks_self;
	uintptr_t old;

	if (!t)
		return 0;
	old = t->last_p;
	t->last_p = v;
	return old;
}

int mon_free_sized(void *p, uint64_t want, int (*still)(const void *p))
{
	uint64_t e, size = 0;
	struct blocks_thread *t = mon_self(&e);
	uint32_t idx = 0;

	if (!addrmap_take((uintptr_t)p, &idx, &size))
		return 0;
	if (size != want || !still(p)) {
		addrmap_put((uintptr_t)p, idx, size);
		return 0;
	}
	settle_free(t, e, 1, idx, size, 1, 0, 0);
	return 1;
}

void mon_free_custom(const void *p)
{
	uint64_t e, size = 0;
	struct blocks_thread *t = mon_self(&e);
	uint32_t idx = 0;
	int found = custom_take((uintptr_t)p, &idx, &size);

	settle_free(t, e, found, idx, size, 1, 0, 0);
}

/*
 * A Lisp object (lisp.c): like the custom path, a full walk, but counted
 * in class cls (its type's: c f s o) and kept in no map, since the
 * collector frees it, never the program.  rewrite names the interpreter's
 * frames in the captured stack (lisp_ihs.c).
 */
void mon_alloc_lisp(size_t n, int cls, const struct unwind_frame0 *f0,
		    int (*rewrite)(uint64_t *frames, int depth))
{
	uint64_t orphan_frames[ORPHAN_DEPTH], *frames, e;
	struct blocks_thread *t = mon_self(&e);
	uint32_t flags, hash;
	int64_t idx;
	int depth, as;

	if ((uint64_t)n >> MON_SIZE_BITS) {
		mon_drop();
		return;
	}
	frames = t ? t->frames : orphan_frames;
	depth = unwind_capture(frames, t ? MON_MAX_DEPTH : ORPHAN_DEPTH, f0, &flags, e, NULL, &hash);
	if (!mon_on(__atomic_load_n(&mon.state, __ATOMIC_RELAXED)))
		return;
	if (rewrite(frames, depth))
		hash = stackhash(frames, (uint32_t)depth, flags);
	if (t) {
		idx = count_alloc(t, frames, depth, flags, hash, n, cls, 1, NULL, NULL);
	} else {
		if (!(t = blocks_orphan_lock(e)))
			return;
		idx = count_alloc(t, frames, depth, flags, hash, n, cls, 1, NULL, NULL);
		blocks_orphan_unlock();
	}
	if (idx < 0) {
		mon_drop();
		return;
	}
	as = __atomic_load_n(&mon.autosave, __ATOMIC_RELAXED);
	if (__builtin_expect(as > 0, 0) && (MON_ADD(mon.nallocs, 1) + 1) % (uint64_t)as == 0)
		mon_autosave();
}

void mon_realloc_take(void *p, struct mon_old *o)
{
	o->size = 0;
	o->idx = 0;
	o->found = addrmap_take((uintptr_t)p, &o->idx, &o->size);
	o->fine = !o->found && addrmap_take_fine((uintptr_t)p, &o->idx, &o->size);
	o->found |= o->fine;
}

void mon_realloc_failed(void *p, const struct mon_old *o)
{
	if (o->found && (o->fine ? addrmap_put_fine((uintptr_t)p, o->idx, o->size)
				 : addrmap_put((uintptr_t)p, o->idx, o->size)) < 0)
		mon_trouble("cannot map memory for the address map", NULL);
}

void mon_realloc_freed(void *p, const struct mon_old *o)
{
	/* Only counters change; another thread may own address p by now. */
	uint64_t e;
	struct blocks_thread *t = mon_self(&e);

	/* A realloc frees, then allocates: the block it frees is a
	 * temporary if it was the thread's last allocation (heaptrack:
	 * malloc, realloc, realloc, free are three). */
	settle_free(t, e, o->found, o->idx, o->size, 1, TEMP_CHECK, (uintptr_t)p);
	if (t)
		t->last_p = 0;
}

/* ---- the sampled monitor (sample.h) ---- */

void mon_sample_alloc(void *p, size_t n, const struct unwind_frame0 *f0, int counted)
{
	int g = mon_guard, er = errno;
	uint64_t e;
	struct blocks_thread *t;

	mon_guard = 1;
	t = mon_self(&e);
	if (!t) {
		mon_drop(); /* a thread past its block (rare): not counted */
		goto out;
	}
	if (!counted) {
		t->s_allocs++;
		t->s_left -= (int64_t)n;
	}
	/* A thread's first allocation: its first distance. */
	if (__builtin_expect(!t->s_rng, 0)) {
		int64_t d = sample_next(&t->s_rng, mon.sample);

		t->s_left += d;
		t->tl_set += (uint64_t)d;
	}
	if (t->s_left > 0)
		goto out;
	/* Memoryless: the next sample is a fresh distance from here,
	 * whatever this allocation overshot.  The bytes counted down go to
	 * s_bytes (blocks_sampled_bytes). */
	t->s_bytes += t->tl_set - (uint64_t)t->s_left;
	t->s_left = sample_next(&t->s_rng, mon.sample);
	t->tl_set = (uint64_t)t->s_left;
	if ((uint64_t)n >> MON_SIZE_BITS) {
		mon_drop();
		goto out;
	}
	/* A walk (remembered walks are for the exact monitor's every
	 * allocation; a sample comes once in thousands, and recalling here
	 * too would cost mon_alloc its inlined recall). */
	if (n >= SAMPLE_DRAWN) {
		int up;
		uint64_t w = sample_count_draw(n, mon.sample, &t->s_rng, &up);

		mon_alloc_walk(p, n, f0, t, e, w);
		if (up)
			addrmap_set_up((uintptr_t)p);
	} else {
		mon_alloc_walk(p, n, f0, t, e, sample_count(n, mon.sample, (uintptr_t)p));
	}
	timeline_tick(t, NULL);
out:
	mon_guard = g;
	errno = er;
}

void mon_sample_freed(void *p, uint32_t idx, uint64_t size, int up)
{
	int g = mon_guard, er = errno;
	uint64_t e;
	struct blocks_thread *t;

	mon_guard = 1;
	t = mon_self(&e);
	/* A temporary: the thread's last sample, with no allocation since
	 * (the exact totals count every one) and no free (mon_sample_last:
	 * before, an object not sampled freed between went unseen, and a
	 * loop of 100 small frees between a 1 MiB block's malloc and free
	 * made it 1,721 temporaries where there are none), freed by free or
	 * realloc. */
	settle_free(t, e, 1, idx, size,
		    size >= SAMPLE_DRAWN ? sample_count_up(size, mon.sample, up)
					 : sample_count(size, mon.sample, (uintptr_t)p),
		    t && mon_sample_last == (uintptr_t)p && t->last_n == t->s_allocs, 0);
	mon_sample_last = 0;
	if (t)
		t->last_p = 0;
	mon_guard = g;
	errno = er;
}
