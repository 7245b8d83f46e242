/*
 * sink.h - where the sampler's hits go: its collector.  The sampler (this
 * folder) counts resources and decides when a sample is due, the same for
 * every collector; the collector decides what a sample is worth.
 *
 *   cpprof (runtime/cpprof)  the stack: walked (unwind.h), counted per
 *                            distinct stack (Hall & Goldberg)
 *   cfprof (runtime/cfprof)  the current function's logical path, kept by
 *                            the -finstrument-functions hooks; nothing is
 *                            walked (Appel, Duba & MacQueen)
 *
 * Each runtime library links one collector, which defines cp_sink.
 */
#ifndef CP_SINK_H
#define CP_SINK_H

#include <stdint.h>

struct cp_sink {
	const char *name;  /* "cpprof": messages and the watcher's name */
	const char *env;   /* its environment's prefix: "CPPROF_" (EVENTS,
			    * RANDOM, NO_PERF, OUT, ROOT_PID) */
	const char *out;   /* the default data file */
	const char *watcher; /* the watcher thread's name: "cpprof-watch" */
	/* Its FORMAT_KIND_* and its keep's layout signature (keep.h). */
	uint32_t kind;
	uint64_t layout;
	/* Configured (nres counters), before any sample.  0, or -1: nothing
	 * is sampled.  Not in signal context. */
	int (*start)(int nres);
	/*
	 * A stackless collector: hits of column col for what thread tid (0:
	 * the calling thread) is doing now.  Called in the thread's signal
	 * handler, in its interposed calls, and by the watcher for other
	 * threads.  Async-signal-safe.  NULL: the sampler walks the stack
	 * and calls stack instead.  pc: in the signal handler, the
	 * interrupted instruction; else 0.
	 */
	void (*here)(uint32_t tid, int col, uint64_t hits, uintptr_t pc);
	/* Hits of column col for a walked stack of thread tid.
	 * Async-signal-safe. */
	void (*stack)(const uint64_t *frames, int depth, uint32_t flags, uint32_t tid, int col,
		      uint64_t hits);
	/* A forked child starts empty.  0, or -1 (profiling stops). */
	int (*fork_child)(void);
	/* The calling thread ends (may be NULL). */
	void (*thread_exit)(void);
	/* At exit, once: write the data file; or, aside non-NULL, a file
	 * aside while sampling goes on (an image that execs: outfile.h).  0,
	 * or -1 after a warning. */
	int (*save)(const char *aside);
};

extern const struct cp_sink cp_sink;

#endif
