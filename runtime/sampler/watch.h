/*
 * watch.h - the watcher: a thread of the sampler's own (not profiled, all
 * signals blocked, no libc locks, no malloc) that samples what a signal
 * must not: the real time of threads blocked in the kernel, and the
 * context-switch ring buffers.
 */
#ifndef CP_WATCH_H
#define CP_WATCH_H

struct cp_slot;

/* Start it if real or context-switches is sampled.  0 or -1. */
int wt_start(void);
/* Ask it to stop and wait until it has (at exit, before the save). */
void wt_stop(void);
/* Non-zero while it runs (thread.h's th_watched). */
int wt_running(void);
/*
 * The /proc files the watcher reads of thread s (its syscall and
 * schedstat), opened by the thread itself as it is set up, before the
 * program's code runs: once the program changes its user (a daemon's
 * setuid), the process is not dumpable and its files are root's, 0400;
 * opened later, they failed and its blocked time went unsampled, nothing
 * said.  One that cannot be opened is not tried again (-2).  Past the
 * collectors' descriptor budget (fds.h), a thread keeps none open: the
 * watcher opens them for each look it takes, and closes them after
 * (WT_FILES_EACH_LOOK in proc_fd and sched_fd), in the budget's room
 * kept for that.
 */
void wt_thread_files(struct cp_slot *s);
#define WT_FILES_EACH_LOOK (-3)
/* In a forked child: the watcher did not come along; start another. */
void wt_after_fork(void);

#endif
