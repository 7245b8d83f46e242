/*
 * tasks.h - the process's threads, from /proc/self/task, read with raw
 * system calls (opendir would allocate: the monitor never does).
 */
#ifndef TASKS_H
#define TASKS_H

/* Call fn(tid, arg) for every thread of the process, this one too, until
 * fn returns non-zero.  0 when all were seen; fn's non-zero value; -1 when
 * /proc/self/task cannot be read. */
int tasks_each(int (*fn)(long tid, void *arg), void *arg);

#endif
