/*
 * thread.h - the threads the sampler knows: a registry the watcher walks,
 * and the set-up of each thread's events as it starts (pthread_create is
 * interposed) and their release as it ends.
 */
#ifndef CP_THREAD_H
#define CP_THREAD_H

#include <stdint.h>

#include "perf.h"

struct cp_thread;

#define TH_MAX 4096
#define SEG_UNKNOWN UINT64_MAX

enum { TH_FREE, TH_CLAIMED, TH_LIVE, TH_EXITED };

/* Shared between a thread and the watcher; fields written by one side each. */
struct cp_slot {
	int state;              /* TH_*, atomic */
	int tid;
	uintptr_t stack_lo, stack_hi; /* the thread's stack */
	uint64_t real_pending;  /* real-time hits for the thread to record at its
				 * next CPU-clock sample (watcher adds, thread takes) */
	/* the watcher's own */
	uint64_t real_carry;
	uint64_t seg_cpu;       /* its run time (schedstat) when last seen blocked,
				 * or SEG_UNKNOWN */
	uint64_t seg_hits;      /* hits made pending since then */
	int proc_fd, sched_fd;  /* /proc/self/task/TID/{syscall,schedstat} */
	struct pf_ring ring;    /* context switches (the resource) */
	struct pf_ring regs;    /* every switch-out, registers only (real: the
				 * bp of a blocked thread, which /proc lacks) */
	uint64_t last_ip, last_sp, last_bp; /* from the newest such record */
	uint64_t ring_last;     /* count at the previous ring sample */
	uint64_t ring_next;     /* next boundary, in counts */
	struct cp_thread *self; /* the thread's own state (its events), while TH_LIVE */
};

extern struct cp_slot th_slots[TH_MAX];
extern int th_nslots; /* slots ever used: the watcher scans [0, th_nslots) */
/*
 * Non-zero while the watcher runs (watch.c sets it, atomically): then it,
 * not the exiting thread, drains, closes and frees an exited thread's slot
 * (TH_EXITED).  Here rather than behind wt_running() so that this module
 * does not call the watcher that walks its slots.
 */
extern int th_watched;

/*
 * Set up the calling thread: stack bounds, frame buffers, its slot, its
 * events.  Outside signal context.  0, or -1 (the thread is not sampled).
 */
int th_setup(void);
/* Stop every live thread's events (ioctl and timer_settime, from this
 * thread): a seccomp sandbox begins (sampler.c). */
void th_quiet_all(void);
/* Close slot s's rings (the watcher, as it frees an exited thread's). */
void th_rings_close(struct cp_slot *s);
/* Stop sampling the calling thread and release what it holds. */
void th_teardown(void);
/* In a forked child: forget every other thread; set up this one again. */
void th_after_fork(void);
/* pthread_create without the set-up (the watcher). */
#include <pthread.h>
int th_create_unprofiled(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *),
			 void *arg);
/* Look up the real pthread_create now (the constructor, first thing). */
void th_lookup(void);
/* Key for the release at thread exit; once, at start. */
int th_init(void);

#endif
