/*
 * signals.h - the sampler's hold on CP_SIG (SIGPROF): the program may
 * install a handler for it too (its own ITIMER_PROF profiler, say); it
 * keeps believing its handler is installed, the sampler's stays, and every
 * SIGPROF that is not the sampler's is passed on to the program's.
 */
#ifndef CP_SIGNALS_H
#define CP_SIGNALS_H

#include <signal.h>

/* Install the sampler's handler, keeping what was there as the program's.
 * 0 or -1.  Outside signal context. */
int sg_install(void (*handler)(int, siginfo_t *, void *));
/* Look up the real sigaction and signal now (the constructor, first
 * thing): dlsym takes the loader's lock, so never later. */
void sg_lookup(void);
/* Give CP_SIG back to the program (sampling stopped for good: a seccomp
 * sandbox): pending ones dropped (SIG_IGN first), then its own action;
 * its masks from then on as it sets them. */
void sg_release(void);
/* A CP_SIG that is not the sampler's: do what the program asked for.
 * Async-signal-safe; called from the sampler's handler. */
void sg_chain(int sig, siginfo_t *si, void *uc);

#endif
