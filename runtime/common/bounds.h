/*
 * bounds.h - the calling thread's stack bounds, found without calling into
 * libc functions that take locks (bounds.c).
 */
#ifndef MPROF_BOUNDS_H
#define MPROF_BOUNDS_H

#include <stdint.h>

/*
 * bounds_thread: [*lo, *hi) is the calling thread's stack, readable from
 * any sp inside it up to hi; sp is the thread's stack pointer now (it may
 * be on another stack: a sigaltstack handler, a coroutine).  0, or -1
 * when the bounds cannot be known (then *lo and *hi are untouched).
 *
 * Safe from inside malloc, whatever locks the program holds: only raw
 * system calls (gettid, getpid, prlimit64, openat, read, close) and a
 * cache updated with try-locks, never waited on.  Not async-signal-safe
 * only in that a signal handler interrupting it and calling it again
 * reads /proc/self/maps again (no deadlock, no corruption).
 */
int bounds_thread(uintptr_t sp, uintptr_t *lo, uintptr_t *hi);

#endif
