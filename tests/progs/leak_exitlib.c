/*
 * leak_exitlib.c - a library whose constructor registers 100 exit
 * functions (a C++ library's static objects do so, by __cxa_atexit):
 * glibc allocates blocks for them, 32 functions to a block, and frees
 * those blocks only after the loader's _dl_fini, registered after them,
 * has run the destructors (tests/e2e/90-leaks.t; runtime/mprof/exitlist.c).
 */
#include <stdlib.h>

static int ran;

static void none(void)
{
	ran++;
}

__attribute__((constructor)) static void init(void)
{
	for (int i = 0; i < 100; i++)
		atexit(none);
}

int exitlib_ran(void)
{
	return ran;
}
