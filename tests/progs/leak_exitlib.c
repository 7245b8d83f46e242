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

/* EXITLIB_ONEXIT set: one more, by on_exit, whose argument (100 bytes)
 * only its block points to, freed by the function as exit runs it. */
static void cleanup(int status, void *arg)
{
	(void)status;
	free(arg);
}

__attribute__((constructor)) static void init(void)
{
	for (int i = 0; i < 100; i++)
		atexit(none);
	if (getenv("EXITLIB_ONEXIT"))
		on_exit(cleanup, malloc(100));
}

int exitlib_ran(void)
{
	return ran;
}
