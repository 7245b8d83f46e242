/*
 * io.h - the interposed I/O calls (io.c): read-bytes, write-bytes and
 * io-time.
 */
#ifndef CPPROF_IO_H
#define CPPROF_IO_H

/* Look up every real function now (the sampler's constructor), so that no
 * wrapper calls dlsym later: the loader's lock may be held by a thread
 * waiting for the caller, and a signal handler may be the caller. */
void io_init(void);

#endif
