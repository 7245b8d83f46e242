/*
 * real.c - owns the pointers to the real allocator (real_*).
 *
 * dlsym(RTLD_NEXT) finds the next definition after the monitor: glibc's when
 * libmprof.so is preloaded or linked, and also when libmprof.a is linked
 * into the executable.  dlsym may itself call malloc or calloc; the caller
 * holds the monitor's thread-local recursion guard, so those calls come
 * back here and, the pointers being still NULL, go to __libc_malloc and
 * friends, which glibc exports for exactly this purpose.
 */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <gnu/libc-version.h>
#include <link.h>
#include <stdint.h>

#include "real.h"

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
extern void *__libc_memalign(size_t, size_t);
extern void *__libc_valloc(size_t);
extern void *__libc_pvalloc(size_t);

/* Our own malloc (malloc.c; not `malloc`, which may be bound elsewhere). */
extern void *mon_malloc_self(size_t);

struct real_hot real_hot;

static struct {
	void *(*calloc)(size_t, size_t);
	void *(*realloc)(void *, size_t);
	int (*posix_memalign)(void **, size_t, size_t);
	void *(*aligned_alloc)(size_t, size_t);
	void *(*memalign)(size_t, size_t);
	void *(*valloc)(size_t);
	void *(*pvalloc)(size_t);
} real;

#define LOAD(f) __atomic_load_n(&real.f, __ATOMIC_ACQUIRE)
#define LOAD_HOT(f) __atomic_load_n(&real_hot.f, __ATOMIC_ACQUIRE)

static void *next(const char *name)
{
	void *p = dlsym(RTLD_NEXT, name);
	if (p == (void *)mon_malloc_self)
		return NULL; /* a strange link order: keep the __libc_* fallbacks */
	return p;
}

/*
 * Whether the symbol at f is a definition.  A program built without PIE
 * that takes malloc's address (Debian's python3) gives malloc a canonical
 * PLT entry: an undefined symbol with that entry's address as its value,
 * which is what dlsym(RTLD_DEFAULT) returns.  Calls through it reach the
 * first definition in the search order: the preloaded (or linked) monitor.
 */
static int defines(void *f)
{
	const ElfW(Sym) *sym = NULL;
	Dl_info info;

	if (!dladdr1(f, &info, (void **)&sym, RTLD_DL_SYMENT) || !sym)
		return 1; /* cannot tell: take it as another monitor's */
	return sym->st_shndx != SHN_UNDEF;
}

int real_init(void)
{
	/* Resolve everything first, publish after: no half-resolved pair. */
	void *f[9];
	static const char *const names[9] = {
		"malloc", "calloc", "realloc", "free", "posix_memalign",
		"aligned_alloc", "memalign", "valloc", "pvalloc",
	};
	int i;

	for (i = 0; i < 9; i++)
		f[i] = next(names[i]);
	/* malloc and free must come from the same allocator, or neither. */
	if (!f[0] || !f[3])
		return 1;
	__atomic_store_n((void **)&real.calloc, f[1], __ATOMIC_RELEASE);
	__atomic_store_n((void **)&real.realloc, f[2], __ATOMIC_RELEASE);
	__atomic_store_n((void **)&real.posix_memalign, f[4], __ATOMIC_RELEASE);
	__atomic_store_n((void **)&real.aligned_alloc, f[5], __ATOMIC_RELEASE);
	__atomic_store_n((void **)&real.memalign, f[6], __ATOMIC_RELEASE);
	__atomic_store_n((void **)&real.valloc, f[7], __ATOMIC_RELEASE);
	__atomic_store_n((void **)&real.pvalloc, f[8], __ATOMIC_RELEASE);
	__atomic_store_n((void **)&real_hot.free, f[3], __ATOMIC_RELEASE);
	__atomic_store_n((void **)&real_hot.malloc, f[0], __ATOMIC_RELEASE);
	f[0] = dlsym(RTLD_DEFAULT, "malloc");
	return !f[0] || f[0] == (void *)mon_malloc_self || !defines(f[0]);
}

/* Whether f (NULL: the __libc_* fallback, glibc's) lies in glibc's libc.
 * Not by comparing with __libc_malloc: tcmalloc defines that name too. */
/* Whether f is in the C library's object.  _dl_find_object (glibc 2.35)
 * is a binary search; dladdr, the fallback, scans a symbol table (330k
 * instructions at every start: as much as 1.5 allocations' monitoring a
 * program of 200k allocations pays for the rest of its run). */
static int in_glibc(void *f)
{
	struct dl_find_object x, y;
	Dl_info a, b;

	if (!f)
		return 1;
	if (_dl_find_object(f, &x) == 0 && _dl_find_object((void *)gnu_get_libc_version, &y) == 0)
		return x.dlfo_map_start == y.dlfo_map_start;
	return dladdr(f, &a) && dladdr((void *)gnu_get_libc_version, &b) &&
	       a.dli_fbase == b.dli_fbase;
}

int real_is_glibc(void)
{
	return in_glibc((void *)LOAD_HOT(malloc)) && in_glibc((void *)LOAD_HOT(free));
}

void *real_calloc(size_t n, size_t m)
{
	void *(*f)(size_t, size_t) = LOAD(calloc);
	return f ? f(n, m) : __libc_calloc(n, m);
}

void *real_realloc(void *p, size_t n)
{
	void *(*f)(void *, size_t) = LOAD(realloc);
	return f ? f(p, n) : __libc_realloc(p, n);
}


static int pow2(size_t a)
{
	return a && !(a & (a - 1));
}

int real_posix_memalign(void **out, size_t align, size_t n)
{
	int (*f)(void **, size_t, size_t) = LOAD(posix_memalign);
	void *p;

	if (f)
		return f(out, align, n);
	if (!pow2(align) || align % sizeof(void *))
		return EINVAL;
	p = __libc_memalign(align, n);
	if (!p)
		return ENOMEM;
	*out = p;
	return 0;
}

void *real_aligned_alloc(size_t align, size_t n)
{
	void *(*f)(size_t, size_t) = LOAD(aligned_alloc);
	return f ? f(align, n) : __libc_memalign(align, n);
}

void *real_memalign(size_t align, size_t n)
{
	void *(*f)(size_t, size_t) = LOAD(memalign);
	return f ? f(align, n) : __libc_memalign(align, n);
}

void *real_valloc(size_t n)
{
	void *(*f)(size_t) = LOAD(valloc);
	return f ? f(n) : __libc_valloc(n);
}

void *real_pvalloc(size_t n)
{
	void *(*f)(size_t) = LOAD(pvalloc);
	return f ? f(n) : __libc_pvalloc(n);
}
