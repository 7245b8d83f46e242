/*
 * exits.h - ending the process as the real _exit does, from a collector's
 * own _exit or _Exit (runtime/mprof/exit.c, runtime/sampler/exit.c),
 * which save first: a program that ends so runs no destructor.
 */
#ifndef EXITS_H
#define EXITS_H

typedef void exits_fn(int);

/*
 * Call the next definition of name ("_exit", "_Exit": libc's, or another
 * profiler's that saves too), found once into *cache; or, where there is
 * none to find (a static program), the exit_group system call.  dlsym may
 * allocate: a collector that wraps malloc holds its guard.
 */
__attribute__((noreturn)) void exits_next(const char *name, exits_fn **cache, int status);
/* The next definition of name, found into *cache if it is not there yet
 * (NULL: none).  A collector calls it early, where dlsym is safe, so that
 * _exit never has to: in a vfork child or a signal handler. */
exits_fn *exits_find(const char *name, exits_fn **cache);

#endif
