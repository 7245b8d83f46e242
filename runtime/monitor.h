/*
 * monitor.h - the monitor's state and the operations the interposed entry
 * points (malloc.c), the public API (api.c) and the writer (writer.c) use.
 *
 * States: UNINIT -> INITING -> ON <-> STOPPED (mprof_stop / mprof_restart),
 * ON -> TROUBLE (a failure: one line on stderr, everything passes through),
 * INITING -> OFF for good (another monitor's malloc is the one in use).
 *
 * Locks, always taken in this order, never held across anything that may
 * allocate: the writer's save lock, the frame-buffer pool lock, the stacks
 * lock, the address-map shard locks (several only in lock-all order).
 * The epoch changes only with all of them held (mprof_restart), so a value
 * read under any one of them is consistent with the table it guards.
 */
#ifndef MONITOR_H
#define MONITOR_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "format.h"

enum { MON_UNINIT, MON_INITING, MON_ON, MON_STOPPED, MON_TROUBLE, MON_OFF };

/* Frames kept per stack (the innermost); deeper stacks are truncated. */
#define MON_MAX_DEPTH 1024
/* An object's requested size shares 64 bits with a 24-bit stack index. */
#define MON_SIZE_BITS 40

struct mon_totals {
	uint64_t allocs, bytes, frees, freed; /* recorded objects */
	uint64_t unknown_frees;               /* frees of objects not in the map */
	uint64_t dropped;                     /* allocations not recorded */
};

struct mon {
	int state;
	int configured;    /* mon_config(): 0 not yet, 1 under way, 2 done */
	int nosave;        /* a save failed: write no more */
	int autosave;      /* save every this many allocations; 0: at exit */
	uint64_t epoch;    /* bumped by every restart */
	uint64_t start_ns; /* CLOCK_REALTIME at init or restart */
	pid_t root_pid;    /* the process that writes FILE; others FILE.PID */
	struct mon_totals totals;
	uint64_t bins[FORMAT_NBINS][4]; /* allocs, frees, bytes, bytes freed */
	char out[PATH_MAX];             /* absolute output path */
};

extern struct mon mon;
/* Non-zero while this thread is inside the monitor: allocate for real. */
extern __thread int mon_guard;

/* Enter the monitor for one call: 1 = record (the guard is now set; call
 * mon_leave), 0 = pass straight through. */
int mon_enter(int is_alloc);
static inline void mon_leave(void)
{
	mon_guard = 0;
}

void mon_init(void);
/* Read the environment and the start directory (once libc can). */
void mon_config(void);

/* Record the allocation of n bytes at p; ret = the entry's return address. */
void mon_alloc(void *p, size_t n, void *ret);
/* Record the free of p; call before giving p to the real free. */
void mon_free(void *p);

/* realloc: take p out of the map before the real call, then settle. */
struct mon_old {
	uint64_t val, epoch;
	int found;
};
void mon_realloc_take(void *p, struct mon_old *o);
void mon_realloc_failed(void *p, const struct mon_old *o); /* p still live */
void mon_realloc_freed(void *p, const struct mon_old *o);  /* p is gone */

/* Stop profiling: print "mprof: <what>; profiling stopped" once. */
void mon_trouble(const char *what, const char *detail);

/* The public API (api.c). */
void mon_set_autosave(int count);
void mon_stop(void);
void mon_restart(const char *filename);

uint64_t mon_now_ns(void);

#endif
