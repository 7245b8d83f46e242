/*
 * forward.c - the cheapest preload there is: malloc, free, calloc and
 * realloc passed on to libc's, nothing recorded.  bench/floor --callgrind
 * measures it beside the monitor's layers: what interposing alone costs,
 * the floor under any monitor that sits in front of malloc.
 *
 * Built by bench/floor: cc -O2 -shared -fPIC forward.c -o forward.so
 * (glibc's __libc_* entry points: no dlsym, so no allocation before the
 * first call is ready).
 */
#include <stddef.h>

extern void *__libc_malloc(size_t);
extern void __libc_free(void *);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);

void *malloc(size_t n)
{
	return __libc_malloc(n);
}

void free(void *p)
{
	__libc_free(p);
}

void *calloc(size_t k, size_t n)
{
	return __libc_calloc(k, n);
}

void *realloc(void *p, size_t n)
{
	return __libc_realloc(p, n);
}
