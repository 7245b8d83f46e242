/* uw_lib.c - the shared-library half of uw_main.c: allocations made in a
 * library (reached through a lazily bound PLT the first time), and calls
 * back into the program.  Built as libuwlib.so, linked by uw_main.c; and as
 * plug1.so / plug2.so (-DPLUG=1 / 2: different code, same entry names) for
 * dlopen, dlclose and dlopen again at what is likely the same address. */
#include <stdlib.h>
#include <string.h>

#ifndef PLUG
#define PLUG 0
#endif

__attribute__((noinline)) void *uwlib_alloc(size_t n)
{
	char *p = malloc(n);
	if (p)
		memset(p, PLUG, n);
	__asm__ volatile("" ::: "memory");
	return p;
}

#if PLUG == 2
/* A different frame layout at the addresses plug1 used. */
__attribute__((noinline)) static void *pad(size_t n, int k)
{
	volatile char buf[256];
	buf[k & 255] = (char)k;
	void *p = k ? pad(n, k - 1) : uwlib_alloc(n + buf[0]);
	__asm__ volatile("" ::: "memory");
	return p;
}
#endif

__attribute__((noinline)) void *uwlib_chain(int depth, size_t n)
{
	void *p;
#if PLUG == 2
	p = depth ? uwlib_chain(depth - 1, n) : pad(n, 3);
#else
	p = depth ? uwlib_chain(depth - 1, n) : uwlib_alloc(n);
#endif
	__asm__ volatile("" ::: "memory");
	return p;
}

/* Call back into the program, which allocates. */
__attribute__((noinline)) void uwlib_callback(void (*fn)(int), int k)
{
	fn(k);
	__asm__ volatile("" ::: "memory");
}
