/*
 * malloc.c - owns the interposed allocator entry points: malloc, calloc,
 * realloc, reallocarray, free, posix_memalign, aligned_alloc, memalign,
 * valloc, pvalloc (C++ operator new/delete arrive through malloc/free),
 * and the reports of a program's own allocators (mprof_report_*).  In a
 * Lisp process (lisp.c) they all pass through: its Lisp objects are what
 * is recorded.
 *
 * Each one calls the real allocator and, unless the monitor is off or this
 * thread is already inside it (the recursion guard), records the event.
 * The block is handed to the program untouched: the monitor keeps what it
 * knows about it in a side map, so malloc_usable_size and memory from the
 * aligned allocators work as without it.  errno is as the real call left it.
 * Frees are noted before the real free: once the block is released another
 * thread may get the same address, and its entry must not be ours.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "addrmap.h"
#include "blocks.h"
#include "custom.h"
#include "frame0.h"
#include "lang.h"
#include "lisp.h"
#include "monitor.h"
#include "monitor_rec.h"
#include "real.h"

#define EXPORT __attribute__((visibility("default")))
/* Referenced by monitor.c so that linking libmprof.a pulls this file in. */
const char mon_hooks_anchor;

/*
 * This thread's errno, found once: __errno_location is a call through the
 * PLT, and every recorded event saves and restores errno.
 */
static __thread int *mon_errno;

static inline int *err(void)
{
	int *e = mon_errno;

	if (__builtin_expect(!e, 0))
		mon_errno = e = &errno;
	return e;
}

/*
 * Enter the monitor for a C allocator's event (mon_enter), unless the
 * process is a Lisp one (lisp.h): then its mallocs pass straight through
 * and its Lisp objects are what is recorded.  The first event decides,
 * as the monitor starts (mon_init): then the exact monitor's hot copies
 * (malloc_on, free_on) are only reached in a C process (mon_dispatch).
 */
/* Entered (the guard set): 1, or 0 (left again) in a Lisp process. */
static inline __attribute__((always_inline)) int c_entered(void)
{
	if (__builtin_expect(lisp_on != 0, 0)) {
		if (lisp_on == -1)
			lisp_detect();
		if (lisp_on != 0) {
			mon_leave();
			return 0;
		}
	}
	return 1;
}

static inline __attribute__((always_inline)) int c_enter(int is_alloc)
{
	int m = mon_enter(is_alloc);

	if (m != 1)
		return m; /* 0: pass; 2: the sampled monitor (no Lisp port) */
	return c_entered();
}

/*
 * The sampled monitor (sample.h): count an allocation of n bytes down in
 * this thread's block, the exact totals too; 0 when it is not a sample,
 * 1 when it is (counted), 2 when the thread has no block yet (not
 * counted: mon_sample_alloc does it).  A handful of instructions: what
 * most allocations cost it, with the free's look-up.
 */
static inline __attribute__((always_inline)) int sample_due(size_t n)
{
	struct blocks_thread *t = blocks_self;
	int64_t left;

	if (__builtin_expect(!t, 0))
		return 2;
	/* The count, an add to memory; the bytes are the countdown's
	 * (blocks_sampled_bytes). */
	__asm__("addq $1, %0" : "+m"(t->s_allocs));
	left = t->s_left - (int64_t)n;
	t->s_left = left;
	return left <= 0;
}

/* In an allocating entry point, with p from the real call: the sampled
 * monitor's part (F0_SET must be in the exported function itself). */
#define SAMPLE(p, n)                                                         \
	do {                                                                 \
		int due_;                                                    \
		if ((p) && __builtin_expect(due_ = sample_due(n), 0)) {      \
			F0_SET;                                              \
			mon_sample_alloc((p), (n), &f0_, due_ == 1);         \
		}                                                            \
	} while (0)

/* c_enter for malloc_on and free_on, which the exported functions reach
 * only with the state ON (one read of the state, not two) in a process
 * that is not a Lisp one (mon_dispatch: mon_init decided). */
static inline __attribute__((always_inline)) int c_enter_on(int is_alloc)
{
	(void)is_alloc;
	if (__builtin_expect(mon_guard, 0))
		return 0;
	mon_guard = 1;
	return 1;
}

/* Record p (n bytes) if it was allocated; errno stays the real call's.
 * hot: with the monitor's recording inlined (malloc_on's copy only),
 * which keeps errno where it may change it (monitor.h's MON_KEEP_ERRNO):
 * nothing to keep here. */
static inline __attribute__((always_inline)) void note_alloc_in(void *p, size_t n,
								const struct unwind_frame0 *f0,
								const int hot)
{
	if (hot) {
		if (p)
			mon_alloc_inline(p, n, f0);
		mon_leave();
		return;
	}
	int *ep = err(), e = *ep;
	if (p)
		mon_alloc(p, n, f0);
	mon_leave();
	*ep = e;
}

static inline void note_alloc(void *p, size_t n, const struct unwind_frame0 *f0)
{
	note_alloc_in(p, n, f0, 0);
}

/*
 * The sampled monitor's malloc and free (sample.h), reached by a tail
 * call from the exported ones: a jump, so that the program's return
 * address and stack are where they were (frame 0 is the same here), and
 * no register of the exact monitor's path is saved for this one.  Most
 * calls count down and jump on to the real malloc: the countdown comes
 * first, so an allocation that then fails (out of memory) is counted in
 * the totals.  A sample takes the real malloc's result, and frame 0, in
 * malloc_sample (reached by a jump again).
 */
static __attribute__((noinline)) void *malloc_sample(size_t n, int counted)
{
	F0_DECL;
	void *p = real_malloc(n);

	F0_SET;
	/* Inside the monitor (its own allocations) nothing is recorded. */
	if (p && !mon_guard)
		mon_sample_alloc(p, n, &f0_, counted);
	/* A failed one, most often huge (its size took the countdown past
	 * zero, which sent it here): out of the exact totals again, and the
	 * countdown as it was.  Python's five MemoryErrors of bytearray(1 <<
	 * 46) were 5 * 2^46 bytes in them, and each made the thread's next
	 * small allocation a sample standing for 5,243.  (A small one that
	 * fails on the fast path stays counted.) */
	if (!p && counted) {
		struct blocks_thread *t = blocks_self;

		if (t) {
			t->s_allocs--;
			t->s_left += (int64_t)n;
		}
	}
	return p;
}

/* The real malloc and free once the sampled monitor is on: resolved
 * before it was (mon_init), so no test. */
#define REAL_MALLOC(n) (__atomic_load_n(&real_hot.malloc, __ATOMIC_RELAXED)(n))
#define REAL_FREE(p) (__atomic_load_n(&real_hot.free, __ATOMIC_RELAXED)(p))

static __attribute__((noinline)) void *malloc_sampled(size_t n)
{
	int due = sample_due(n);

	if (__builtin_expect(!due, 1))
		return REAL_MALLOC(n);
	return malloc_sample(n, due == 1);
}

/* A free whose object may be in the address map (a sample), or whose
 * slot is not the thread's last leaf's: the whole look-up. */
static __attribute__((noinline)) void free_sample(void *p)
{
	uint32_t idx;
	uint64_t size;
	int up;

	if (p && addrmap_recordable((uintptr_t)p) &&
	    addrmap_take_sampled((uintptr_t)p, &idx, &size, &up) && !mon_guard)
		mon_sample_freed(p, idx, size, up);
	else if (p)
		mon_sample_last = 0; /* a free: the thread's run of events ends */
	REAL_FREE(p);
}

/*
 * Most frees are of objects never sampled: their slot, in the thread's
 * last leaf, is empty; the free goes on with nothing saved, nothing
 * called but the real free.  The rest, out of line: another leaf, an
 * object 8 past a multiple of 16 (the odd shadow), a slot that is not
 * empty (a sample's, or one that p, unaligned or not a user address,
 * only seems to share: free_sample checks), NULL (its leaf is never the
 * last one).
 */
static __attribute__((noinline)) void free_sampled(void *p)
{
	uintptr_t a = (uintptr_t)p;
	uint64_t k = (uint64_t)a >> ADDRMAP_LEAF_SHIFT;

	if (__builtin_expect((a & 8) || addrmap_last.k != k + 1, 0) ||
	    __builtin_expect(*(const uint32_t *)(addrmap_last.base + ((uint64_t)a >> addrmap_shift) * 4) != 0, 0))
		return free_sample(p);
	mon_sample_last = 0; /* a free: the thread's last sample is no temporary */
	return REAL_FREE(p);
}


/*
 * The exact monitor's malloc: m is what c_enter said, or, from the
 * exported malloc that read the state ON, -1: c_enter_on, with no second
 * read of the state.  Two copies, the hot one for ON.
 */
static inline __attribute__((always_inline)) void *malloc_exact_body(size_t n, int m)
{
	F0_DECL;
	void *p;
	const int hot = m < 0;

	if (m < 0)
		m = c_enter_on(1);
	if (m != 1) {
		p = real_malloc(n);
		if (m == 2)
			SAMPLE(p, n);
		return p;
	}
	p = real_malloc(n);
	F0_SET;
	note_alloc_in(p, n, &f0_, hot);
	return p;
}

static __attribute__((noinline)) void *malloc_on(size_t n)
{
	return malloc_exact_body(n, -1);
}

static __attribute__((noinline)) void *malloc_exact(size_t n)
{
	return malloc_exact_body(n, c_enter(1));
}

/*
 * The exported malloc and free jump (the program's return address and
 * stack stay where they were, so frame 0 is found in the target as in
 * the exported function) to the monitor's for its state, through a
 * pointer mon_dispatch keeps: one instruction, whatever the state.  Each
 * target saves only the registers its own path needs.
 */
static void *(*malloc_to)(size_t) = malloc_exact;
static void free_on(void *p);
static void free_lang(void *p);
static void free_sampled(void *p);
static void free_other(void *p);
static void (*free_to)(void *) = free_other;

void mon_dispatch(void)
{
	int st;

	/* Whoever stores last read the state after it changed last: the
	 * pointers end as the state is (two threads may change it at once,
	 * a restart and a trouble). */
	do {
		st = __atomic_load_n(&mon.state, __ATOMIC_ACQUIRE);
		/* In a Lisp process (decided before the state first became
		 * ON) the C allocator's events pass through: the generic
		 * paths, whose c_enter says so. */
		int c = st == MON_ON && __atomic_load_n(&lisp_on, __ATOMIC_ACQUIRE) == 0;
		/* In an interpreter's process (monitor.h's mon_lang) malloc
		 * takes the generic path, whose mon_alloc reads its frames,
		 * and free tells the language (free_lang). */
		int hot = c && !__atomic_load_n(&mon_lang, __ATOMIC_ACQUIRE);
		__atomic_store_n(&malloc_to,
				 hot ? malloc_on : st == MON_SAMPLING ? malloc_sampled : malloc_exact,
				 __ATOMIC_RELEASE);
		__atomic_store_n(&free_to, c ? (hot ? free_on : free_lang)
					     : st == MON_SAMPLING ? free_sampled : free_other,
				 __ATOMIC_RELEASE);
	} while (__atomic_load_n(&mon.state, __ATOMIC_ACQUIRE) != st);
}

EXPORT void *malloc(size_t n)
{
	return __atomic_load_n(&malloc_to, __ATOMIC_ACQUIRE)(n);
}

/* This object's own malloc: taking the address of `malloc` in a shared
 * object yields whichever definition the dynamic linker bound, maybe not
 * ours (real.c needs to tell). */
extern __typeof(malloc) mon_malloc_self
	__attribute__((alias("malloc"), copy(malloc), visibility("hidden")));

EXPORT void *calloc(size_t n, size_t m)
{
	F0_DECL;
	size_t total;
	void *p;

	int in = c_enter(1);

	p = real_calloc(n, m);
	if (in != 1) {
		if (in == 2 && !__builtin_mul_overflow(n, m, &total))
			SAMPLE(p, total);
		return p;
	}
	if (__builtin_mul_overflow(n, m, &total))
		total = 0; /* then p is NULL */
	F0_SET;
	note_alloc(p, total, &f0_);
	return p;
}

/*
 * The real free runs outside the monitor (guard off), after errno is
 * restored: it is the last thing done, a tail call.  It cannot re-enter
 * us (glibc's free does not allocate; another allocator's free that did
 * would have that allocation recorded), and free leaves errno alone
 * (glibc >= 2.33) or sets it as it would without us.
 */
/* The exact monitor's free, from the exported free that read the state
 * ON (c_enter_on: no second read of the state). */
static __attribute__((noinline)) void free_on(void *p)
{
	/* errno: kept where the monitor may change it (MON_KEEP_ERRNO). */
	if (p && c_enter_on(0)) {
		mon_free(p);
		mon_leave();
	}
	real_free(p);
}

/* free_on in an interpreter's process (mon_lang): the language is told
 * first (lang.h's freed: PYTHONMALLOC=malloc frees its code objects
 * here), then mon_free_lang_malloc, so that mon_free keeps its one
 * caller. */
static __attribute__((noinline)) void free_lang(void *p)
{
	const struct lang_ops *l = __atomic_load_n(&mon_lang, __ATOMIC_ACQUIRE);

	if (p && c_enter_on(0)) {
		if (l)
			l->freed(p);
		mon_free_lang_malloc(p);
		mon_leave();
	}
	real_free(p);
}

/* Any other state: the first call of the process (the monitor starts,
 * then the free is had again), or off, stopped, in trouble: straight
 * through.  No call of mon_free here: one caller keeps it inlined. */
static __attribute__((noinline)) void free_other(void *p)
{
	if (p && !mon_guard && __atomic_load_n(&mon.state, __ATOMIC_ACQUIRE) == MON_UNINIT) {
		mon_init();
		if (mon_on(__atomic_load_n(&mon.state, __ATOMIC_ACQUIRE))) {
			__atomic_load_n(&free_to, __ATOMIC_ACQUIRE)(p);
			return;
		}
	}
	real_free(p);
}

EXPORT void free(void *p)
{
	__atomic_load_n(&free_to, __ATOMIC_ACQUIRE)(p);
}

/* The sampled monitor's part of an allocation by realloc (f0 is realloc's). */
static inline void sample_after(void *q, size_t n, const struct unwind_frame0 *f0)
{
	int due;

	if (q && __builtin_expect(due = sample_due(n), 0))
		mon_sample_alloc(q, n, f0, due == 1);
}

/* realloc under the sampled monitor: p's free if it is a sample, then
 * q's allocation; a failed realloc leaves p as it was, in the map too. */
static __attribute__((noinline)) void *sampled_realloc(void *p, size_t n,
						       const struct unwind_frame0 *f0)
{
	uint32_t idx = 0;
	uint64_t size = 0;
	int up = 0, found = p && addrmap_recordable((uintptr_t)p) &&
			    addrmap_take_sampled((uintptr_t)p, &idx, &size, &up), e;
	void *q = real_realloc(p, n);

	e = errno;
	if (!q && n) {
		if (found && addrmap_put((uintptr_t)p, idx, size) == 0 && up)
			addrmap_set_up((uintptr_t)p); /* its slots were there */
	} else {
		if (found)
			mon_sample_freed(p, idx, size, up);
		else
			mon_sample_last = 0;
		sample_after(q, n, f0);
	}
	errno = e;
	return q;
}

/* realloc = free of the old block + allocation of the new one. */
static void *do_realloc(void *p, size_t n, const struct unwind_frame0 *f0)
{
	struct mon_old old;
	void *q;
	int e;

	int m;

	if (!p) {
		if ((m = c_enter(1)) != 1) {
			q = real_malloc(n);
			if (m == 2)
				sample_after(q, n, f0);
			return q;
		}
		q = real_malloc(n);
		note_alloc(q, n, f0);
		return q;
	}
	if ((m = c_enter(0)) != 1) {
		if (m == 2)
			return sampled_realloc(p, n, f0);
		return real_realloc(p, n);
	}
	mon_realloc_take(p, &old);
	q = real_realloc(p, n);
	e = errno;
	if (!q && n) {
		mon_realloc_failed(p, &old); /* p is untouched */
	} else {
		/* Moved, resized in place, or (n == 0) freed: p is gone. */
		mon_realloc_freed(p, &old);
		if (q)
			mon_alloc(q, n, f0);
	}
	mon_leave();
	errno = e;
	return q;
}

EXPORT void *realloc(void *p, size_t n)
{
	F0_DECL;

	F0_SET;
	return do_realloc(p, n, &f0_);
}

EXPORT void *reallocarray(void *p, size_t n, size_t m)
{
	size_t total;
	F0_DECL;

	if (__builtin_mul_overflow(n, m, &total)) {
		errno = ENOMEM;
		return NULL;
	}
	F0_SET;
	return do_realloc(p, total, &f0_);
}

EXPORT int posix_memalign(void **out, size_t align, size_t n)
{
	F0_DECL;
	int rc, e;

	int m = c_enter(1);

	if (m != 1) {
		rc = real_posix_memalign(out, align, n);
		if (m == 2 && rc == 0)
			SAMPLE(*out, n);
		return rc;
	}
	rc = real_posix_memalign(out, align, n);
	e = errno;
	F0_SET;
	if (rc == 0)
		mon_alloc(*out, n, &f0_);
	mon_leave();
	errno = e;
	return rc;
}

EXPORT void *aligned_alloc(size_t align, size_t n)
{
	F0_DECL;
	void *p;

	int m = c_enter(1);

	if (m != 1) {
		p = real_aligned_alloc(align, n);
		if (m == 2)
			SAMPLE(p, n);
		return p;
	}
	p = real_aligned_alloc(align, n);
	F0_SET;
	note_alloc(p, n, &f0_);
	return p;
}

EXPORT void *memalign(size_t align, size_t n)
{
	F0_DECL;
	void *p;

	int m = c_enter(1);

	if (m != 1) {
		p = real_memalign(align, n);
		if (m == 2)
			SAMPLE(p, n);
		return p;
	}
	p = real_memalign(align, n);
	F0_SET;
	note_alloc(p, n, &f0_);
	return p;
}

EXPORT void *valloc(size_t n)
{
	F0_DECL;
	void *p;

	int m = c_enter(1);

	if (m != 1) {
		p = real_valloc(n);
		if (m == 2)
			SAMPLE(p, n);
		return p;
	}
	p = real_valloc(n);
	F0_SET;
	note_alloc(p, n, &f0_);
	return p;
}

EXPORT void *pvalloc(size_t n)
{
	F0_DECL;
	void *p;

	int m = c_enter(1);

	if (m != 1) {
		p = real_pvalloc(n);
		if (m == 2)
			SAMPLE(p, n);
		return p;
	}
	p = real_pvalloc(n);
	F0_SET;
	note_alloc(p, n, &f0_);
	return p;
}

/*
 * The entry points of objects a program reports itself (mprof.h calls
 * them through weak references, from always-inline wrappers, so frame 0
 * is the program's function that reports).  Here, not in api.c, because
 * linking libmprof.a pulls this file in (it defines malloc) but not a file
 * that only weak references name.  They never allocate for real.
 */
EXPORT int mprof_report_category(const char *name)
{
	return custom_category(name);
}

EXPORT void mprof_report_alloc(const void *p, size_t n, int category)
{
	F0_DECL;

	if (!p || c_enter(1) != 1)
		return; /* not in the sampled monitor: the exact one reports */
	F0_SET;
	{
		int *ep = err(), e = *ep;
		mon_alloc_custom(p, n, category, &f0_);
		mon_leave();
		*ep = e;
	}
}

EXPORT void mprof_report_free(const void *p)
{
	if (p && c_enter(0) == 1) {
		int *ep = err(), e = *ep;
		mon_free_custom(p);
		mon_leave();
		*ep = e;
	}
}
