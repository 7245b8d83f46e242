/*
 * python.c - owns the monitor's Python port (python_*, python.h): its
 * hooks in CPython's allocators.
 *
 * CPython makes its objects through pymalloc (PyObject_Malloc), which
 * carves them out of arenas it maps itself: malloc sees the arenas, not
 * the objects.  But the interpreter lets a program put its own functions
 * in front of each allocator domain (PyMem_SetAllocator; tracemalloc
 * does it), and it keeps what is set before it starts, unless PYTHONMALLOC
 * or -X dev asks for another allocator.  So at the monitor's constructor,
 * before the interpreter's main, the hooks go in front of the object
 * domain (PyObject_Malloc: objects) and the memory domain (PyMem_Malloc:
 * their buffers, list items and the like); the raw domain is malloc,
 * which the monitor sees already.  Each hook calls the allocator it
 * replaced with the guard set, so a large object that pymalloc passes on
 * to malloc is counted once, as the object; and records the object with
 * its stack, the interpreter's frames replaced by the Python frames they
 * run (pyframes.c).  Its free goes through the same address map as
 * malloc's (an object of pymalloc is never a malloc block).
 *
 * With PYTHONMALLOC=malloc (or -X dev) the interpreter replaces the hooks:
 * every object then reaches malloc, recorded with native stacks.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "frame0.h"
#include "lang.h"
#include "monitor.h"
#include "pyframes.h"
#include "langname.h"
#include "python.h"

/* PyMemAllocatorEx (pymem.h): the same five words. */
struct py_alloc {
	void *ctx;
	void *(*malloc)(void *ctx, size_t n);
	void *(*calloc)(void *ctx, size_t nelem, size_t elsize);
	void *(*realloc)(void *ctx, void *p, size_t n);
	void (*free)(void *ctx, void *p);
};
#define DOMAIN_MEM 1
#define DOMAIN_OBJ 2

static struct py_alloc prev[3]; /* what the hooks replaced, by domain */
static int hooks_ran;           /* a hook recorded an allocation */

/* Record q (n bytes), made by allocator a from the hook whose frame 0
 * is f0 (an object if a is the object domain's). */
static inline void made(const struct py_alloc *a, void *q, size_t n,
			const struct unwind_frame0 *f0)
{
	if (__builtin_expect(!hooks_ran, 0))
		hooks_ran = 1;
	if (q)
		mon_alloc_lang(q, n, f0, &py_lang, a == &prev[DOMAIN_OBJ]);
}

static void *hook_malloc(void *ctx, size_t n)
{
	const struct py_alloc *a = ctx;
	F0_DECL;
	void *q;
	int e;

	if (mon_enter(1) != 1)
		return a->malloc(a->ctx, n);
	F0_SET;
	q = a->malloc(a->ctx, n);
	e = errno;
	made(a, q, n, &f0_);
	mon_leave();
	errno = e;
	return q;
}

static void *hook_calloc(void *ctx, size_t nelem, size_t elsize)
{
	const struct py_alloc *a = ctx;
	F0_DECL;
	void *q;
	int e;

	if (mon_enter(1) != 1)
		return a->calloc(a->ctx, nelem, elsize);
	F0_SET;
	q = a->calloc(a->ctx, nelem, elsize);
	e = errno;
	made(a, q, nelem * elsize, &f0_);
	mon_leave();
	errno = e;
	return q;
}

static void *hook_realloc(void *ctx, void *p, size_t n)
{
	const struct py_alloc *a = ctx;
	struct mon_old old;
	F0_DECL;
	void *q;
	int e;

	if (mon_enter(p ? 0 : 1) != 1)
		return a->realloc(a->ctx, p, n);
	F0_SET;
	if (p)
		mon_realloc_take(p, &old);
	q = a->realloc(a->ctx, p, n);
	e = errno;
	if (p && !q) {
		mon_realloc_failed(p, &old); /* pymalloc's realloc of 0 bytes gives 1 */
	} else {
		if (p)
			mon_realloc_freed(p, &old);
		made(a, q, n, &f0_);
	}
	mon_leave();
	errno = e;
	return q;
}

static void hook_free(void *ctx, void *p)
{
	const struct py_alloc *a = ctx;
	int e;

	if (!p || mon_enter(0) != 1) {
		a->free(a->ctx, p);
		return;
	}
	e = errno;
	if (a == &prev[DOMAIN_OBJ])
		py_freed(p);
	mon_free_lang(p);
	a->free(a->ctx, p);
	mon_leave();
	errno = e;
}

void python_sampled(void)
{
	const char *s = getenv("MPROF_PYTHON");

	if (!(s && !strcmp(s, "0")) && py_setup("mprof") == 1)
		langname_status("none: the sampled monitor (--sample) keeps native stacks");
}

static void (*get_alloc)(int, struct py_alloc *);
static void (*set_alloc)(int, struct py_alloc *);

/* The hooks in front of the object and memory domains' allocators. */
static void hook_all(void)
{
	for (int d = DOMAIN_MEM; d <= DOMAIN_OBJ; d++) {
		struct py_alloc h = { &prev[d], hook_malloc, hook_calloc, hook_realloc, hook_free };

		get_alloc(d, &prev[d]);
		set_alloc(d, &h);
	}
}

/*
 * py_lang, but for the first of malloc's blocks that has a Python frame:
 * the interpreter runs code, so its allocators are set up.  A debug
 * allocator (PYTHONMALLOC=debug, pymalloc_debug, -X dev) is put in place
 * of whatever came before, the hooks too, which then never record: they
 * go in front again (it saw ~1% of the allocations).  If they did run,
 * they are in place, maybe behind tracemalloc's, and stay there.  Then
 * py_lang itself (mon_lang).
 */
static struct lang_ops py_first;

static int rewrite_first(uint64_t *frames, int depth, int max, uint64_t *out, uint32_t *flags)
{
	int n = py_lang.rewrite(frames, depth, max, out, flags);

	for (int i = 0; i < n; i++)
		if (FORMAT_IS_LANG_FRAME(frames[i])) {
			if (!hooks_ran)
				hook_all();
			__atomic_store_n(&mon_lang, &py_lang, __ATOMIC_RELEASE);
			break;
		}
	return n;
}

void python_start(void)
{
	const char *s = getenv("MPROF_PYTHON");

	if ((s && !strcmp(s, "0")) || py_setup("mprof") != 1)
		return;
	get_alloc = (void (*)(int, struct py_alloc *))dlsym(RTLD_DEFAULT, "PyMem_GetAllocator");
	set_alloc = (void (*)(int, struct py_alloc *))dlsym(RTLD_DEFAULT, "PyMem_SetAllocator");
	if (!get_alloc || !set_alloc)
		return;
	hook_all();
	py_first = py_lang;
	py_first.rewrite = rewrite_first;
	/* malloc's blocks too (monitor.h): the generic paths from now on. */
	__atomic_store_n(&mon_lang, &py_first, __ATOMIC_RELEASE);
	mon_dispatch();
}
