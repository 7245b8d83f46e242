/*
 * mprof.h - the public interface of the mprof allocation monitor.
 *
 * Link with -lmprof (libmprof.so, or libmprof.a at the end of the link line)
 * or run under `mprof run`.  Every allocation and free is recorded with its
 * call stack; the profile is written when the program exits, to mprof.data
 * in the directory the program started in, or to the file named by the
 * MPROF_OUT environment variable, or by mprof_restart().  See mprof(1).
 *
 * These functions are safe to call from any thread, and do nothing when the
 * monitor is not loaded behind them (a program may call them through weak
 * references).
 */
#ifndef MPROF_H
#define MPROF_H

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Save the profile every `count` allocations, replacing the previous save
 * whole (a reader never sees a half-written file).  0, the default, saves
 * only at exit.  The environment variable MPROF_AUTOSAVE=count does the same
 * from the start of the program.
 */
void set_mprof_autosave(int count);

/* Stop profiling and write the profile data to the output file now. */
void mprof_stop(void);

/*
 * Restart profiling with an empty profile, to be written to filename (at
 * exit, at the next autosave or at mprof_stop()).  Frees of objects
 * allocated before the restart are not counted.  filename NULL keeps the
 * current output file.
 */
void mprof_restart(const char *filename);

#ifdef __cplusplus
}
#endif

#endif
