/*
 * lisp.c - owns the Lisp port's entry points (lisp_*): libecl's allocation
 * functions, interposed as malloc is, and the decision that a process is
 * a Lisp one.
 *
 * mprof paper, "Lisp Implementation": KCL made every Lisp object through
 * one routine, alloc_object, and the monitor patched it.  ECL (KCL's
 * descendant) has a few more: typed objects come from ecl_alloc_object,
 * ecl_alloc_compact_object, ecl_cons and ecl_list1; raw storage (vector
 * bodies, instance slots, bignum limbs) from ecl_alloc and its kin; and
 * constructors make an object with its storage in one call.  libecl calls
 * all of them through its PLT, and compiled Lisp (a .fas) through its own,
 * so defining them here, in the preloaded monitor, sees every Lisp object.
 *
 * Each entry point calls the real one (dlsym(RTLD_NEXT)), then, if it is
 * the outermost of the entry points active in this thread, records one
 * object: of the class of its type (lisp_ihs.h: c f s o), of the bytes the
 * collector gave it and everything made inside the call (a structure's
 * slots, a vector's body), on its call stack with the interpreter's frames
 * named (ihs_rewrite).  The nesting is counted per thread; a non-local
 * exit out of the real call (a Lisp error: storage exhausted) leaves the
 * count high, and the next entry point called from as far out or further
 * sees that and starts again.  Objects are not put in an address map:
 * the collector frees them, never the program, and no free is reported.
 *
 * In a Lisp profile malloc's blocks are not recorded (malloc.c): the
 * tables' columns are Lisp types, and ECL's C heap is its own business,
 * as it was in the paper's Lisp monitor.
 */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "frame0.h"
#include "lisp.h"
#include "lisp_ihs.h"
#include "lname.h"
#include "monitor.h"

#define EXPORT __attribute__((visibility("default")))

int lisp_on = -1;

/* ---- the real functions ---- */

enum {
	R_ALLOC_OBJECT,
	R_COMPACT,
	R_CONS,
	R_LIST1,
	R_ALLOC,
	R_ATOMIC,
	R_UNPROTECTED,
	R_ATOMIC_UNPROTECTED,
	R_UNCOLLECTABLE,
	R_INSTANCE,
	R_ALLOCATE_INSTANCE,
	R_MAKE_STRUCTURE,
	R_SIMPLE_VECTOR,
	R_MAKE_VECTOR,
	R_PURE_ARRAY,
	R_ALLOCSELF,
	R_ADJ_BASE,
	R_ADJ_EXTENDED,
	R_CMP_DEFUN,
	R_CMP_DEFMACRO,
	R_N
};

static const char *const real_names[R_N] = {
	"ecl_alloc_object",
	"ecl_alloc_compact_object",
	"ecl_cons",
	"ecl_list1",
	"ecl_alloc",
	"ecl_alloc_atomic",
	"ecl_alloc_unprotected",
	"ecl_alloc_atomic_unprotected",
	"ecl_alloc_uncollectable",
	"ecl_alloc_instance",
	"ecl_allocate_instance",
	"si_make_structure",
	"ecl_alloc_simple_vector",
	"si_make_vector",
	"si_make_pure_array",
	"ecl_array_allocself",
	"ecl_alloc_adjustable_base_string",
	"ecl_alloc_adjustable_extended_string",
	"ecl_cmp_defun",
	"ecl_cmp_defmacro",
};

static void *reals[R_N];
static size_t (*gc_size)(const void *); /* the collector's size of an object */

static char libecl_path[512];

static int find_libecl(struct dl_phdr_info *info, size_t size, void *data)
{
	const char *base = strrchr(info->dlpi_name, '/');

	(void)size;
	(void)data;
	base = base ? base + 1 : info->dlpi_name;
	if (strncmp(base, "libecl.so", 9) || strlen(info->dlpi_name) >= sizeof libecl_path)
		return 0;
	strcpy(libecl_path, info->dlpi_name);
	return 1;
}

/*
 * A libecl the program opened with RTLD_LOCAL is not in the global scope
 * RTLD_NEXT searches, yet its code (and the .fas it loads) binds to the
 * preloaded monitor's names: take its function from its own handle.
 */
static void *from_libecl(const char *name)
{
	void *h, *f = NULL;

	libecl_path[0] = 0;
	dl_iterate_phdr(find_libecl, NULL);
	if (libecl_path[0] && (h = dlopen(libecl_path, RTLD_LAZY | RTLD_NOLOAD))) {
		f = dlsym(h, name);
		dlclose(h);
	}
	return f;
}

static __attribute__((noinline, cold)) void *resolve(int i)
{
	int g = mon_guard;
	void *f;

	mon_guard = 1; /* dlsym may allocate: not ours to record */
	f = dlsym(RTLD_NEXT, real_names[i]);
	if (!f)
		f = from_libecl(real_names[i]);
	mon_guard = g;
	if (!f) {
		/* Something called libecl's function, bound to ours, and there
		 * is no libecl's to call: the program cannot go on. */
		static const char m[] = "mprof: cannot find libecl's allocation function ";
		if (write(2, m, sizeof m - 1) > 0 &&
		    write(2, real_names[i], strlen(real_names[i])) > 0)
			(void)!write(2, "\n", 1);
		abort();
	}
	__atomic_store_n(&reals[i], f, __ATOMIC_RELEASE);
	return f;
}

static inline void *real_fn(int i)
{
	void *f = __atomic_load_n(&reals[i], __ATOMIC_ACQUIRE);

	return __builtin_expect(f != NULL, 1) ? f : resolve(i);
}

void lisp_detect(void)
{
	int expect = -1;

	if (!__atomic_compare_exchange_n(&lisp_on, &expect, -2, 0, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE))
		return; /* decided, or another thread is deciding */
	/* No libecl loaded: a C program, decided with no dlsym (whose
	 * failure allocates a dlerror string, unrecorded, that libc frees at
	 * exit: an unknown free).  cl_boot: libecl's, not another monitor's
	 * (which defines ecl_cons too: a program linked with libmprof.a, run
	 * with libmprof.so). */
	libecl_path[0] = 0;
	dl_iterate_phdr(find_libecl, NULL);
	if (!libecl_path[0] || (!dlsym(RTLD_DEFAULT, "cl_boot") && !from_libecl("cl_boot"))) {
		__atomic_store_n(&lisp_on, 0, __ATOMIC_RELEASE);
		return;
	}
	gc_size = (size_t(*)(const void *))dlsym(RTLD_DEFAULT, "GC_size");
	ihs_setup();
	lname_profile();
	__atomic_store_n(&lisp_on, 1, __ATOMIC_RELEASE);
}

/* ---- nesting ---- */

static __thread struct {
	int depth;    /* entry points active in this thread */
	uintptr_t fp; /* the outermost one's frame */
	size_t bytes; /* what they have made so far */
} nest;

/* Enter an entry point whose frame is at fp: whether it is the outermost. */
static inline int nest_enter(uintptr_t fp)
{
	/* An outermost entry point still counted, from here or further in, was
	 * left by a non-local exit: it is over. */
	if (nest.depth && fp >= nest.fp)
		nest.depth = 0;
	if (nest.depth++)
		return 0;
	nest.fp = fp;
	nest.bytes = 0;
	return 1;
}

static inline void nest_leave(void)
{
	nest.depth--;
}

/* The collector's size of the block at p (requested n when unknown). */
static inline size_t gcsize(const void *p, size_t n)
{
	return gc_size ? gc_size(p) : n;
}

#define FP ((uintptr_t)__builtin_frame_address(0))

/*
 * Record the object just made (class cls, nest.bytes) from the entry
 * point this is written in (frame 0 is its caller).  errno stays as the
 * real call left it.
 */
#define RECORD(cls)                                                                  \
	do {                                                                         \
		F0_DECL;                                                             \
		if (mon_enter(1) == 1) {                                                  \
			int *ep_ = &errno, e_ = *ep_;                                \
			if (lisp_on == -1)                                           \
				lisp_detect();                                       \
			if (lisp_on == 1) {                                          \
				F0_SET;                                              \
				mon_alloc_lisp(nest.bytes, (cls), &f0_, ihs_rewrite); \
			}                                                            \
			mon_leave();                                                 \
			*ep_ = e_;                                                   \
		}                                                                    \
	} while (0)

/* ---- typed objects ---- */

#define T_LIST 1 /* a cons is tagged: its address + 1 */
#define CONS_BYTES 16 /* car, cdr: one granule of the collector */

EXPORT void *ecl_alloc_object(int t)
{
	void *(*f)(int) = real_fn(R_ALLOC_OBJECT);
	void *p;
	int outer;

	if (!lisp_on)
		return f(t);
	outer = nest_enter(FP);
	p = f(t);
	nest_leave();
	if (!p || ((uintptr_t)p & 3))
		return p; /* an immediate (character, fixnum): nothing made */
	nest.bytes += gcsize(p, CONS_BYTES);
	if (outer)
		RECORD(ihs_class(t));
	return p;
}

EXPORT void *ecl_alloc_compact_object(int t, size_t extra)
{
	void *(*f)(int, size_t) = real_fn(R_COMPACT);
	void *p;
	int outer;

	if (!lisp_on)
		return f(t, extra);
	outer = nest_enter(FP);
	p = f(t, extra);
	nest_leave();
	if (!p)
		return p;
	nest.bytes += gcsize(p, extra);
	if (outer)
		RECORD(ihs_class(t));
	return p;
}

EXPORT void *ecl_cons(void *a, void *d)
{
	void *(*f)(void *, void *) = real_fn(R_CONS);
	void *p;
	int outer;

	if (!lisp_on)
		return f(a, d);
	outer = nest_enter(FP);
	p = f(a, d);
	nest_leave();
	nest.bytes += CONS_BYTES;
	if (outer)
		RECORD(LISP_C);
	return p;
}

EXPORT void *ecl_list1(void *a)
{
	void *(*f)(void *) = real_fn(R_LIST1);
	void *p;
	int outer;

	if (!lisp_on)
		return f(a);
	outer = nest_enter(FP);
	p = f(a);
	nest_leave();
	nest.bytes += CONS_BYTES;
	if (outer)
		RECORD(LISP_C);
	return p;
}

/* ---- raw storage: part of the object being made, else "other" ---- */

/*
 * ecl_alloc and ecl_alloc_atomic call the unprotected ones (through the
 * PLT, in ECL 21): a block is counted by the innermost entry point that
 * got it, so an entry point counts its result only if nothing inside it
 * counted one.
 */
#define RAW(name, r)                                                                 \
	EXPORT void *name(size_t n)                                                  \
	{                                                                            \
		void *(*f)(size_t) = real_fn(r);                                     \
		size_t before;                                                       \
		void *p;                                                             \
		int outer;                                                           \
                                                                                     \
		if (!lisp_on)                                                        \
			return f(n);                                                 \
		outer = nest_enter(FP);                                              \
		before = nest.bytes;                                                 \
		p = f(n);                                                            \
		nest_leave();                                                        \
		if (p && nest.bytes == before)                                       \
			nest.bytes += gcsize(p, n);                                  \
		if (outer && p)                                                      \
			RECORD(LISP_O);                                              \
		return p;                                                            \
	}

RAW(ecl_alloc, R_ALLOC)
RAW(ecl_alloc_atomic, R_ATOMIC)
RAW(ecl_alloc_unprotected, R_UNPROTECTED)
RAW(ecl_alloc_atomic_unprotected, R_ATOMIC_UNPROTECTED)
RAW(ecl_alloc_uncollectable, R_UNCOLLECTABLE)

/* ---- constructors: one object, with its storage ---- */

/* After a constructor made p (an untagged object, or NULL/immediate). */
#define MADE(p)                                                                      \
	do {                                                                         \
		if (outer && (p) && !((uintptr_t)(p) & 3))                          \
			RECORD(ihs_class_of(p));                                     \
	} while (0)

EXPORT void *ecl_alloc_instance(size_t slots)
{
	void *(*f)(size_t) = real_fn(R_INSTANCE);
	void *p;
	int outer;

	if (!lisp_on)
		return f(slots);
	outer = nest_enter(FP);
	p = f(slots);
	nest_leave();
	MADE(p);
	return p;
}

EXPORT void *ecl_allocate_instance(void *clas, size_t size)
{
	void *(*f)(void *, size_t) = real_fn(R_ALLOCATE_INSTANCE);
	void *p;
	int outer;

	if (!lisp_on)
		return f(clas, size);
	outer = nest_enter(FP);
	p = f(clas, size);
	nest_leave();
	MADE(p);
	return p;
}

/*
 * si_make_structure(narg, type, slot...): ECL passes up to 63 arguments
 * in C (ECL_C_ARGUMENTS_LIMIT), more on its own stack, where the real
 * function finds them as it would.  A variadic callee reads only the
 * arguments narg says, so passing the most there can be, the rest zero,
 * forwards any call.
 */
#define ARGS_C 62

EXPORT void *si_make_structure(long narg, void *type, ...)
{
	void *(*f)(long, void *, ...) = real_fn(R_MAKE_STRUCTURE);
	void *a[ARGS_C] = { 0 }, *p;
	long n = narg - 1 <= ARGS_C ? narg - 1 : 0;
	int outer, on = lisp_on != 0;
	va_list ap;

	va_start(ap, type);
	for (long i = 0; i < n; i++)
		a[i] = va_arg(ap, void *);
	va_end(ap);
	outer = on ? nest_enter(FP) : 0;
	p = f(narg, type, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10],
	      a[11], a[12], a[13], a[14], a[15], a[16], a[17], a[18], a[19], a[20], a[21], a[22],
	      a[23], a[24], a[25], a[26], a[27], a[28], a[29], a[30], a[31], a[32], a[33], a[34],
	      a[35], a[36], a[37], a[38], a[39], a[40], a[41], a[42], a[43], a[44], a[45], a[46],
	      a[47], a[48], a[49], a[50], a[51], a[52], a[53], a[54], a[55], a[56], a[57], a[58],
	      a[59], a[60], a[61]);
	if (!on)
		return p;
	nest_leave();
	MADE(p);
	return p;
}

EXPORT void *ecl_alloc_simple_vector(size_t l, int aet)
{
	void *(*f)(size_t, int) = real_fn(R_SIMPLE_VECTOR);
	void *p;
	int outer;

	if (!lisp_on)
		return f(l, aet);
	outer = nest_enter(FP);
	p = f(l, aet);
	nest_leave();
	MADE(p);
	return p;
}

#define ARRAY6(name, r)                                                              \
	EXPORT void *name(void *a, void *b, void *c, void *d, void *e, void *g)      \
	{                                                                            \
		void *(*f)(void *, void *, void *, void *, void *, void *) = real_fn(r); \
		void *p;                                                             \
		int outer;                                                           \
                                                                                     \
		if (!lisp_on)                                                        \
			return f(a, b, c, d, e, g);                                  \
		outer = nest_enter(FP);                                              \
		p = f(a, b, c, d, e, g);                                             \
		nest_leave();                                                        \
		MADE(p);                                                             \
		return p;                                                            \
	}

ARRAY6(si_make_vector, R_MAKE_VECTOR)
ARRAY6(si_make_pure_array, R_PURE_ARRAY)

/* The body of array x (made before: its header was an object of its own). */
EXPORT void ecl_array_allocself(void *x)
{
	void (*f)(void *) = real_fn(R_ALLOCSELF);
	int outer;

	if (!lisp_on) {
		f(x);
		return;
	}
	outer = nest_enter(FP);
	f(x);
	nest_leave();
	if (nest.bytes)
		MADE(x);
}

#define STRING1(name, r)                                                             \
	EXPORT void *name(size_t l)                                                  \
	{                                                                            \
		void *(*f)(size_t) = real_fn(r);                                     \
		void *p;                                                             \
		int outer;                                                           \
                                                                                     \
		if (!lisp_on)                                                        \
			return f(l);                                                 \
		outer = nest_enter(FP);                                              \
		p = f(l);                                                            \
		nest_leave();                                                        \
		MADE(p);                                                             \
		return p;                                                            \
	}

STRING1(ecl_alloc_adjustable_base_string, R_ADJ_BASE)
STRING1(ecl_alloc_adjustable_extended_string, R_ADJ_EXTENDED)

/* ---- compiled functions: their names ---- */

static void defun(void *cfun)
{
	int e = errno;

	/* Outside the monitor only: not from its own calls, never twice. */
	if (lisp_on == 1 && !mon_guard) {
		mon_guard = 1;
		ihs_defun(cfun);
		mon_guard = 0;
	}
	errno = e;
}

EXPORT void ecl_cmp_defun(void *cfun)
{
	void (*f)(void *) = real_fn(R_CMP_DEFUN);

	f(cfun);
	defun(cfun);
}

EXPORT void ecl_cmp_defmacro(void *cfun)
{
	void (*f)(void *) = real_fn(R_CMP_DEFMACRO);

	f(cfun);
	defun(cfun);
}
