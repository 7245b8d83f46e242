/*
 * real.h - the allocator the monitor wraps ("the real one").
 *
 * The real functions are found lazily with dlsym(RTLD_NEXT, ...).  Until
 * real_init() has finished (and while dlsym itself runs, since it may
 * allocate), calls go to glibc's exported __libc_* entry points, which are
 * the same allocator.  Every call the monitor makes for itself goes here,
 * never through the interposed symbols.
 */
#ifndef REAL_H
#define REAL_H

#include <stddef.h>

/*
 * Resolve the real functions.  Call once, with the recursion guard set.
 * Returns 0 when the process's malloc is not this monitor's (a program
 * linked with libmprof.a and also run with libmprof.so preloaded carries
 * two monitors; only the one whose malloc is called may write).
 */
int real_init(void);

/* Whether the real malloc and free are glibc's (after real_init). */
int real_is_glibc(void);

/* malloc and free, inline: they are on every event's path. */
struct real_hot {
	void *(*malloc)(size_t);
	void (*free)(void *);
};
extern struct real_hot real_hot __attribute__((visibility("hidden")));
extern void *__libc_malloc(size_t);
extern void __libc_free(void *);

static inline void *real_malloc(size_t n)
{
	void *(*f)(size_t) = __atomic_load_n(&real_hot.malloc, __ATOMIC_ACQUIRE);
	return f ? f(n) : __libc_malloc(n);
}

static inline void real_free(void *p)
{
	void (*f)(void *) = __atomic_load_n(&real_hot.free, __ATOMIC_ACQUIRE);
	if (f)
		f(p);
	else
		__libc_free(p);
}

void *real_calloc(size_t n, size_t m);
void *real_realloc(void *p, size_t n);
int real_posix_memalign(void **out, size_t align, size_t n);
void *real_aligned_alloc(size_t align, size_t n);
void *real_memalign(size_t align, size_t n);
void *real_valloc(size_t n);
void *real_pvalloc(size_t n);

#endif
