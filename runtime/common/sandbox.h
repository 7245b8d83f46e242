/*
 * sandbox.h - a program entering a seccomp sandbox (sandbox.c): the
 * collector is told before the filter goes in, and stops there.
 */
#ifndef SANDBOX_H
#define SANDBOX_H

/* The collector's hook, called once, in the thread that installs the
 * first filter, before it is installed (every system call allowed). */
void sandbox_on(void (*fn)(void));
/* Whether the program has entered one: from then on, no system call of
 * the collector's own (its exit paths return at once). */
int sandbox_entered(void);
/* The system call n itself, past the interposed syscall() (libc's, or the
 * instruction before it is found): for the collectors' own where the
 * interposed one would take it for the program's (fds.c's close). */
long sandbox_syscall(long n, long a1, long a2, long a3);

#endif
