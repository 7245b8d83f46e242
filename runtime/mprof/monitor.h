/*
 * monitor.h - the monitor's state and the operations the interposed entry
 * points (malloc.c) and the public API (api.c) use.  One module in two
 * files: monitor.c records (the hot path), monitor_ctl.c initialises,
 * configures, saves, stops and restarts, and handles fork and exit.
 *
 * States: UNINIT -> INITING -> ON <-> STOPPED (mprof_stop / mprof_restart),
 * where ON is MON_SAMPLING instead in the sampled monitor (MPROF_SAMPLE:
 * sample.h; mon.on says which, mon_on() tests for either),
 * ON -> TROUBLE (a failure: one line on stderr, everything passes through),
 * INITING -> OFF for good (another monitor's malloc is the one in use).
 *
 * Locks, always taken in this order, never held across anything that may
 * allocate: the writer's save lock, the block-pool lock, the orphan-block
 * lock, the stacks lock, the address map's leaf lock, the custom
 * allocation map's lock (custom.h).  The hot path takes
 * none of them: stack lookups are lock-free, counts go to the thread's own
 * block, and the address map is a shadow only an object's owner touches.
 * The epoch changes only with the save and stacks locks held
 * (mprof_restart), and stack indices go on from where they were, so an
 * index in the map from before a restart is recognisably old.  A thread's
 * block is zeroed by its owner when it sees the epoch change, and the saver
 * reads only blocks of the current epoch.
 */
#ifndef MONITOR_H
#define MONITOR_H

#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "format.h"

enum { MON_UNINIT, MON_INITING, MON_ON, MON_STOPPED, MON_TROUBLE, MON_OFF, MON_SAMPLING };

/* Larger requests (possible with overcommit) are not recorded. */
#define MON_SIZE_BITS 40

struct mon {
	int state;
	int configured;    /* mon_config(): 0 not yet, 1 under way, 2 done */
	int nosave;        /* a save failed: write no more */
	int tainted;       /* a forked child whose tables may be half-updated:
			    * never profile again, not even after a restart */
	int autosave;      /* save every this many allocations; 0: at exit */
	int no_freeres;    /* MPROF_FREERES=0: keep libc's buffers at exit */
	int leak_scan;     /* MPROF_LEAKS=scan: classify what is kept at exit */
	uint64_t epoch;    /* bumped by every restart */
	uint64_t start_ns; /* CLOCK_REALTIME at init or restart */
	pid_t root_pid;    /* the process that writes FILE; others FILE.PID */
	uint64_t dropped;  /* allocations not recorded (shared: rare) */
	uint64_t nallocs;  /* allocations, counted only while autosave is on */
	uint64_t sample;   /* MPROF_SAMPLE: the mean bytes between samples; 0: every
			    * allocation is recorded (the exact monitor) */
	int on;            /* MON_ON, or MON_SAMPLING when sample is set */
	char out[PATH_MAX]; /* absolute output path */
};

extern struct mon mon __attribute__((visibility("hidden")));
/* Non-zero while this thread is inside the monitor: allocate for real. */
extern __thread int mon_guard __attribute__((visibility("hidden")));
/* The sampled monitor: the thread's last sample, 0 after any free (its
 * temporaries; blocks_thread's last_p is the exact monitor's).  In the
 * address map's thread variable (addrmap.h), which free_sampled's fast
 * path looks up anyway: clearing it there is one store. */
#define mon_sample_last (addrmap_last.sample_last)

/*
 * errno across the monitor: the exact monitor's hot path (malloc_on,
 * free_on: a remembered stack counted, the address map's slot) makes no
 * system call and leaves errno alone, so it keeps nothing; every
 * out-of-line path it may take that can change errno (a walk, a new
 * block, chunk of counters or leaf of the address map, trouble, the
 * orphan block's lock, an autosave) keeps it itself, with this first in
 * its body: errno is put back on every return.
 */
static inline void mon_errno_back(const int *e)
{
	errno = *e;
}
#define MON_KEEP_ERRNO int mon_errno_kept_ __attribute__((cleanup(mon_errno_back))) = errno

/* Enter the monitor for one call: 1 = record (the guard is now set; call
 * mon_leave), 0 = pass straight through, 2 = the sampled monitor is on
 * (the guard is not set: the caller counts the event down, mon_sample_*,
 * and enters for a sample only). */
int mon_enter_slow(int is_alloc);
static inline __attribute__((always_inline)) int mon_enter(int is_alloc)
{
	int st;

	/* The common cases in a few instructions: inside already, or on.
	 * The exact monitor's path is the first: the sampled one costs it
	 * nothing. */
	if (__builtin_expect(mon_guard, 0))
		return 0;
	st = __atomic_load_n(&mon.state, __ATOMIC_ACQUIRE);
	if (__builtin_expect(st != MON_ON, 0)) {
		if (st == MON_SAMPLING)
			return 2;
		return mon_enter_slow(is_alloc);
	}
	mon_guard = 1;
	return 1;
}
/* After any change of mon.state: where malloc and free go (malloc.c). */
void mon_dispatch(void);
/* Whether state st is one that records (exact or sampled). */
static inline int mon_on(int st)
{
	return st == MON_ON || st == MON_SAMPLING;
}
static inline void mon_leave(void)
{
	mon_guard = 0;
}

void mon_init(void);
/* Read the environment and the start directory (once libc can). */
void mon_config(void);

/* Record the allocation of n bytes at p, made from frame 0 f0 (unwind.h). */
struct unwind_frame0;
void mon_alloc(void *p, size_t n, const struct unwind_frame0 *f0);
/* Record the free of p; call before giving p to the real free. */
void mon_free(void *p);
/* Record the free of p, an object that libc frees after the exit save,
 * if it is an object of want bytes and still(p) says it still is what it
 * was (exitlist.h): 1, or 0 (not recorded). */
int mon_free_sized(void *p, uint64_t want, int (*still)(const void *p));
/* This thread's last allocation, if no free came since (the temporaries'
 * t->last_p), replaced by v; 0 if none or no block yet. */
uintptr_t mon_last_swap(uintptr_t v);

/* An object the program reports itself (mprof.h, custom.h): n bytes at p
 * in category (0: none), made from frame 0 f0; and its free. */
void mon_alloc_custom(const void *p, size_t n, int category, const struct unwind_frame0 *f0);
void mon_free_custom(const void *p);

/* A Lisp object (lisp.c): n bytes of class cls (lisp_ihs.h), made from
 * frame 0 f0; rewrite(frames, depth) names the captured stack's Lisp
 * frames and says whether it changed any.  Never freed. */
void mon_alloc_lisp(size_t n, int cls, const struct unwind_frame0 *f0,
		    int (*rewrite)(uint64_t *frames, int depth));

/* An object of an interpreted language (python.c): n bytes at p, made
 * from frame 0 f0, its stack the C stack with the language's frames that
 * ops give (lang.h) in place of the interpreter's; obj: one of the
 * language's objects, whose kind ops can tell.  Freed by mon_free_lang. */
struct lang_ops;
void mon_alloc_lang(void *p, size_t n, const struct unwind_frame0 *f0, const struct lang_ops *ops,
		    int obj);
/* The free of such an object (python.c's hooks; mon_free is free_on's). */
void mon_free_lang(void *p);
/* The same for malloc's blocks in such a process (malloc.c's free_lang). */
void mon_free_lang_malloc(void *p);
/* Set (before mon_dispatch) in an interpreter's process: every
 * allocation, malloc's too, is recorded by mon_alloc_lang with it. */
extern const struct lang_ops *mon_lang __attribute__((visibility("hidden")));

/* realloc: take p out of the map before the real call, then settle. */
struct mon_old {
	uint64_t size;
	uint32_t idx;
	int found;
	int fine; /* found in the fine shadow (addrmap.h) */
};
void mon_realloc_take(void *p, struct mon_old *o);
void mon_realloc_failed(void *p, const struct mon_old *o); /* p still live */
void mon_realloc_freed(void *p, const struct mon_old *o);  /* p is gone */

/* Stop profiling: print "mprof: <what>; profiling stopped" once. */
void mon_trouble(const char *what, const char *detail);

/* Save, unless a save is under way (it will do): every mon.autosave
 * allocations.  Only monitor.c calls it. */
void mon_autosave(void);

/* The public API (api.c calls them; monitor_ctl.c has them). */
void mon_set_autosave(int count);
void mon_stop(void);
void mon_restart(const char *filename);

uint64_t mon_now_ns(void);

/*
 * The sampled monitor (sample.h).  The entry points count an allocation
 * of n bytes down in the thread's block (malloc.c: exact totals, a few
 * instructions) and, when it is due, call mon_sample_alloc (counted: the
 * countdown was done; 0 when the thread had no block yet), which records
 * it with its stack, counting it the allocations it stands for (it may
 * find it is not a sample after all).  An object in the address map is a
 * sample: its free (or realloc's) calls mon_sample_freed, with what
 * addrmap_take_sampled said (up: its count's fraction, sample.h).  Both
 * keep errno as it was.
 */
void mon_sample_alloc(void *p, size_t n, const struct unwind_frame0 *f0, int counted);
void mon_sample_freed(void *p, uint32_t idx, uint64_t size, int up);

/* The program calls _exit(status) (exit.c): save if that is for us. */
void mon_exit_now(int status);
/* exit.c: find the real _exit and _Exit (at the configuration). */
void exit_lookup(void);

#endif
