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

#include "custom.h"
#include "frame0.h"
#include "lisp.h"
#include "monitor.h"
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
 * and its Lisp objects are what is recorded.  The first event decides.
 */
static inline __attribute__((always_inline)) int c_enter(int is_alloc)
{
	if (!mon_enter(is_alloc))
		return 0;
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

/* Record p (n bytes) if it was allocated; errno stays the real call's. */
static inline void note_alloc(void *p, size_t n, const struct unwind_frame0 *f0)
{
	int *ep = err(), e = *ep;
	if (p)
		mon_alloc(p, n, f0);
	mon_leave();
	*ep = e;
}

EXPORT void *malloc(size_t n)
{
	F0_DECL;
	void *p;

	if (!c_enter(1))
		return real_malloc(n);
	p = real_malloc(n);
	F0_SET;
	note_alloc(p, n, &f0_);
	return p;
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

	if (!c_enter(1))
		return real_calloc(n, m);
	p = real_calloc(n, m);
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
EXPORT void free(void *p)
{
	if (p && c_enter(0)) {
		int *ep = err(), e = *ep;
		mon_free(p);
		mon_leave();
		*ep = e;
	}
	real_free(p);
}

/* realloc = free of the old block + allocation of the new one. */
static void *do_realloc(void *p, size_t n, const struct unwind_frame0 *f0)
{
	struct mon_old old;
	void *q;
	int e;

	if (!p) {
		if (!c_enter(1))
			return real_malloc(n);
		q = real_malloc(n);
		note_alloc(q, n, f0);
		return q;
	}
	if (!c_enter(0))
		return real_realloc(p, n);
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

	if (!c_enter(1))
		return real_posix_memalign(out, align, n);
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

	if (!c_enter(1))
		return real_aligned_alloc(align, n);
	p = real_aligned_alloc(align, n);
	F0_SET;
	note_alloc(p, n, &f0_);
	return p;
}

EXPORT void *memalign(size_t align, size_t n)
{
	F0_DECL;
	void *p;

	if (!c_enter(1))
		return real_memalign(align, n);
	p = real_memalign(align, n);
	F0_SET;
	note_alloc(p, n, &f0_);
	return p;
}

EXPORT void *valloc(size_t n)
{
	F0_DECL;
	void *p;

	if (!c_enter(1))
		return real_valloc(n);
	p = real_valloc(n);
	F0_SET;
	note_alloc(p, n, &f0_);
	return p;
}

EXPORT void *pvalloc(size_t n)
{
	F0_DECL;
	void *p;

	if (!c_enter(1))
		return real_pvalloc(n);
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

	if (!p || !c_enter(1))
		return;
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
	if (p && c_enter(0)) {
		int *ep = err(), e = *ep;
		mon_free_custom(p);
		mon_leave();
		*ep = e;
	}
}
