/*
 * lock.h - the monitor's locks (lock.c): futex mutexes whose waits are
 * bounded, the watchdog against deadlocks with the program.
 */
#ifndef MPROF_LOCK_H
#define MPROF_LOCK_H

#include <stdint.h>

struct lock {
	int v; /* 0 free, 1 held, 2 held and someone may be waiting */
};
#define LOCK_INIT { 0 }

/*
 * lock_take: 0 once l is held; -1 if it could not be had within the
 * bound (lock_set_bound: time the process ran, not time it was stopped),
 * after calling the timeout hook with name: the caller then goes on
 * without the lock, touching nothing it guards.  A wait that long means a cycle with a lock of the program's
 * (the program holds it and waits on us, or we hold l and wait on it), and
 * profiling must stop rather than hang the program.
 * lock_try: 0 when taken at once, never waits.
 * lock_give: release (only a lock this thread holds).
 * lock_reinit: free, in a forked child (whoever held it is gone).
 */
int lock_take(struct lock *l, const char *name);
/* lock_await: wait until *word holds value (another thread's one-time set-up
 * finishing), bounded and reported as lock_take's waits; 0 or -1. */
int lock_await(const int *word, int value, const char *name);
int lock_try(struct lock *l);
void lock_give(struct lock *l);
void lock_reinit(struct lock *l);

/* The bound of every wait, in ms (default LOCK_BOUND_MS), and the hook
 * called with the lock's name when one runs out. */
#define LOCK_BOUND_MS 10000
void lock_set_bound(uint64_t ms);
void lock_on_timeout(void (*hook)(const char *name, uint64_t ms));

#endif
