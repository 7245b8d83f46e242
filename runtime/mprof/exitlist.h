/*
 * exitlist.h - the blocks of glibc's list of exit functions (exitlist.c).
 */
#ifndef MPROF_EXITLIST_H
#define MPROF_EXITLIST_H

#include <stdint.h>

/*
 * At the exit save, before the leak scan: the blocks still allocated for
 * the exit functions registered through __cxa_atexit and on_exit, which
 * glibc frees once their functions have run, after the save, recorded as
 * freed.  How many.
 */
int exitlist_freed(void);
/* The i-th block exitlist_freed recorded freed, at *p, *n bytes (*p 0 if
 * that one was not); -1 past the last.  The leak scan's roots: the
 * arguments of the functions glibc runs after the save are reached
 * through them. */
int exitlist_block(int i, uintptr_t *p, uintptr_t *n);

#endif
