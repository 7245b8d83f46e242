/*
 * python.h - the monitor's Python port (python.c): in a CPython process,
 * every object the interpreter makes is recorded with the Python frames
 * that made it (pyframes.h).
 */
#ifndef PYTHON_H
#define PYTHON_H

/* At the monitor's constructor, before the interpreter starts: if this
 * is CPython with a known layout and the exact monitor records (and
 * MPROF_PYTHON is not 0), put the monitor's hooks in front of its object
 * and memory allocators.  Caller holds the guard. */
void python_start(void);
/* The same for the sampled monitor, which keeps native stacks (it
 * samples malloc's blocks by bytes; pymalloc's objects are not among
 * them): said in INFO lang.frames, not left for the reader to wonder. */
void python_sampled(void);

#endif
