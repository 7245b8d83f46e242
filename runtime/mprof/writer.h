/*
 * writer.h - saving the profile: one whole data file (lib/format/format.h), written
 * to a temporary beside FILE (lib/format/newfile.h: created exclusively, under a
 * random name) and renamed over FILE, so a reader never sees half a file.
 * FILE is the caller's out, or out.PID in a process other than root_pid.
 *
 * The writer knows the stack table (stacks.h) and the module list, not the
 * monitor: what only the monitor has (its counts, its configuration, how it
 * reports trouble) comes in a struct writer_source, so the dependency goes
 * one way (the monitor, monitor_ctl.c, calls the writer; the writer calls
 * back only through the source).
 */
#ifndef WRITER_H
#define WRITER_H

#include <stdint.h>
#include <sys/types.h>

#include "format.h" /* MPROF_NCOUNTERS_SCAN */

/* Stacks whose counters a save reads at once (writer_source's read_counters). */
#define WRITER_BATCH 64

/* The save lock: one save at a time; also excludes mprof_restart. */
int writer_lock(void);    /* 0, or -1: not taken (lock.h) */
int writer_trylock(void); /* 0 when taken */
void writer_unlock(void);
void writer_lock_reinit(void);

/* INFO's totals (doc/format.md). */
struct writer_totals {
	uint64_t allocs, bytes, frees, freed; /* recorded objects */
	uint64_t unknown_frees;               /* frees of objects not in the map */
	uint64_t dropped;                     /* allocations not recorded */
};

/*
 * The profile so far, as its owner sums it over every thread's block.  The
 * read_* calls are made while the file is written, in the order of its
 * sections (INFO's totals, each stack's counters, the bins): a snapshot
 * while other threads run; exact once they are done.
 */
struct writer_source {
	const char *out;          /* FILE: an absolute path */
	pid_t root_pid;           /* the process that writes FILE; others FILE.PID */
	uint64_t start_ns;        /* INFO start_ns */
	uint64_t (*now_ns)(void); /* INFO end_ns */
	void (*read_totals)(struct writer_totals *t);
	/* ncounters counters for each of the n stacks idx..idx+n-1 (n at
	 * most WRITER_BATCH) into counters[0..n): MPROF_NCOUNTERS_ALL, or
	 * MPROF_NCOUNTERS_SCAN with the classes of a leak scan.  A batch,
	 * so that what is done per block is not done per stack. */
	unsigned ncounters;
	void (*read_counters)(uint32_t idx, uint32_t n, uint64_t (*counters)[MPROF_NCOUNTERS_SCAN]);
	/* FORMAT_NBINS x (allocs, frees, bytes, freed). */
	void (*read_bins)(uint64_t (*bins)[4]);
	/* More INFO entries (the category names): up to max (key, value)
	 * pairs into kv, their number; NULL for none. */
	size_t (*extra_info)(const char *kv[][2], size_t max);
	/* Yet more INFO entries, as many as they come (a Lisp profile's
	 * names): how many, then write exactly those (key, value) strings;
	 * NULL for none. */
	size_t (*more_info_count)(void);
	void (*more_info_put)(struct format_writer *w);
	/* The save failed (what, and the errno's name): report it, save no more. */
	void (*fail)(const char *what, const char *detail);
	/* How the program ended, INFO "ended" ("exit", "_exit(3)"); NULL
	 * while it runs (an autosave, mprof_stop). */
	const char *ended;
	/* A file aside: this suffix after the name (an image saved as it
	 * execs: ".exec1"), and the keep not told; NULL for the profile's
	 * own file. */
	const char *aside;
	/* The TIMELINE section (timeline.h's timeline_put): given the peak's
	 * bytes and objects (the stacks' shares summed) and the first stack's
	 * index; NULL for none. */
	void (*put_timeline)(struct format_writer *w, uint64_t peak, int64_t peak_objects,
			     uint32_t base);
};

/*
 * Write the profile now; reason is the INFO "reason" (exit, autosave, stop).
 * A save with src->ended, or for mprof_stop, is final: the keep's launcher
 * (keep.h) has nothing left to write.
 * Caller holds the save lock and the recursion guard.  0, or -1 after
 * reporting the failure through src->fail.  errno is left as it was.
 */
int writer_save(const char *reason, const struct writer_source *src);

#endif
