/*
 * exitlist.h - the blocks of glibc's list of exit functions (exitlist.c).
 */
#ifndef MPROF_EXITLIST_H
#define MPROF_EXITLIST_H

/*
 * At the exit save, before the leak scan: the blocks still allocated for
 * the exit functions registered through __cxa_atexit and on_exit, which
 * glibc frees once their functions have run, after the save, recorded as
 * freed.  How many.
 */
int exitlist_freed(void);

#endif
