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

#include <stddef.h>

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

/*
 * A program's own allocators: pools, arenas, garbage collectors.
 *
 * mprof_alloc reports an object of size bytes at ptr, made by an allocator
 * malloc never sees, with the call stack of the function that reports it;
 * mprof_free reports its release.  category (0 for none) is a number from
 * mprof_category(name), which gives the same number for the same name (at
 * most 255 names): every view shows the category as the innermost frame
 * of the object's stacks, "[name]".  Objects may lie inside a block the
 * pool took from malloc: the block is counted too (under malloc), the
 * objects under their own stacks.
 *
 * These are inline calls through weak references: with no monitor loaded
 * (not run under `mprof run`, not linked with -lmprof) each is a test and
 * a branch, so a program can ship with them.  mprof_category then returns
 * 0.  The program must be position-independent (gcc's default on Debian)
 * for `mprof run` to bind them; with -no-pie, link with -lmprof.
 */
int mprof_report_category(const char *name) __attribute__((weak));
void mprof_report_alloc(const void *ptr, size_t size, int category) __attribute__((weak));
void mprof_report_free(const void *ptr) __attribute__((weak));

static inline __attribute__((always_inline, unused)) int mprof_category(const char *name)
{
	return mprof_report_category ? mprof_report_category(name) : 0;
}

static inline __attribute__((always_inline, unused)) void mprof_alloc(const void *ptr, size_t size,
								       int category)
{
	if (mprof_report_alloc)
		mprof_report_alloc(ptr, size, category);
}

static inline __attribute__((always_inline, unused)) void mprof_free(const void *ptr)
{
	if (mprof_report_free)
		mprof_report_free(ptr);
}

#ifdef __cplusplus
}
#endif

#endif
