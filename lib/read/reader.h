/*
 * reader.h - load a profile data file (doc/format.md) into memory, checked.
 *
 * The file is hostile input: every length, count and offset is checked
 * against what is left before it is used, every section's CRC is verified,
 * and a file that fails any check is rejected whole with a one-line reason.
 * Unknown section types are skipped (a newer writer may add some).
 */
#ifndef READER_H
#define READER_H

#include <stddef.h>
#include <stdint.h>

#include "format/format.h"

struct prof_module {
	uint64_t start, end; /* absolute address range */
	uint64_t bias;       /* load address minus link-time address */
	uint64_t offset;     /* file offset of the first PT_LOAD */
	char *path;
	unsigned char *build_id;
	uint32_t build_id_len;
};

/*
 * A stack as the file keeps it (doc/format.md, STACKS): its own inner
 * frames, and its outer `shared` frames by reference to an earlier stack,
 * never copied out, so that memory follows the file's size however deep
 * the stacks its references make (a 200 KB file can describe 160M frames).
 * The reader resolves references so that stacks[ref] holds the first of
 * them among its own frames: walking a stack (reader_frames) gets at least
 * one frame per stack it visits.
 *
 * Frames and counters stay coded as the file codes them (LEB128; frames
 * as zigzag deltas, innermost first, the first from 0), decoded when a
 * view asks (reader_own, reader_counts): a profile of 1M stacks holds 19M
 * frames and 16M counters, 280 MB as 64-bit numbers and 19 MB of
 * counters coded.  The own frames are read where they are in the file,
 * which reader_load maps rather than copies, so they cost memory while a
 * view reads them (reader_forget gives them back); the counters are
 * copied, together, into one slab.
 */
struct prof_stack {
	uint32_t depth;    /* frames in all */
	uint32_t flags;    /* FORMAT_STACK_* */
	uint32_t shared;   /* outermost frames held by stacks[ref] */
	uint32_t ref;      /* with shared > 0: an earlier stack whose own frames
			    * hold frame depth - shared (its stacks[ref].depth -
			    * shared'th), with stacks[ref].shared < shared */
	uint32_t tid;      /* the sampled thread (THREADS section), else 0 */
	uint32_t own_len;  /* bytes at own */
	const unsigned char *own; /* its depth - shared own frames, coded */
	const unsigned char *cv;  /* its profile.ncounters counters, coded */
	uint64_t outer;    /* its outermost own frame (0 if none): own frames
			    * decode from either end */
};

struct prof_bin {
	uint32_t size; /* 0..1024, 1025 = larger */
	uint64_t allocs, frees, bytes, freed;
};

struct prof_kv {
	char *key, *value;
};

/* TIMELINE (format.h; issue 24): the heap over time. */
struct prof_tl_top {
	uint32_t slot;  /* into prof_timeline's track */
	uint64_t bytes; /* that stack's live bytes at the point */
};
struct prof_tl_point {
	uint64_t ns; /* since INFO start_ns */
	uint64_t live, objects, allocated;
	uint32_t flags, ntop; /* FORMAT_TL_PEAK, FORMAT_TL_END */
	struct prof_tl_top top[FORMAT_TL_TOP];
};
/* LIFETIMES (format.h; issue 24): one stack's sampled objects by life. */
struct prof_lifetime {
	uint64_t stack;   /* its index in stacks[] */
	uint64_t samples; /* objects sampled */
	uint64_t t[FORMAT_LT_BUCKETS], b[FORMAT_LT_BUCKETS]; /* freed, by time, by bytes */
	uint64_t live;    /* not freed when the file was written */
};
struct prof_timeline {
	uint32_t flags;  /* FORMAT_TL_ESTIMATES */
	uint32_t ntrack; /* stacks whose live bytes points give */
	uint64_t track[FORMAT_TL_TRACK]; /* their indices in stacks[] */
	uint32_t npoints;
	struct prof_tl_point *points; /* in time order */
};

struct profile {
	char *path; /* the file it was read from */
	size_t size; /* its length in bytes: what views may spend is bounded by it */
	uint32_t version, kind;
	size_t ninfo;
	struct prof_kv *info;
	size_t nmodules;
	struct prof_module *modules;
	size_t ncounters;
	char **counter_names, **counter_units;
	size_t nstacks;
	struct prof_stack *stacks;
	const unsigned char *bytes; /* the file: mapped (reader_load) or a copy */
	size_t nbytes;
	int mapped;
	size_t forgotten; /* bytes of the mapping given back (reader_forget) */
	unsigned char *cslab; /* every stack's counters, coded */
	unsigned char *fslab; /* own frames coded here when the file does not
			       * code them so (version 1) */
	uint64_t nvalues; /* frames and counters of every stack, references
			   * followed: what views may walk (bounded) */
	size_t nbins;
	struct prof_bin *bins;
	int has_threads; /* the file had a THREADS section: stacks[].tid */
	struct prof_timeline *timeline; /* the file's TIMELINE, or NULL */
	size_t nlifetimes;
	struct prof_lifetime *lifetimes; /* the file's LIFETIMES, or NULL */
	/* Every counter of every stack, and every figure of every bin,
	 * added up: each below 2^63 (reader_check), so that any sum of
	 * them a view makes is exact in 64 bits. */
	uint64_t counter_sum, bin_sum;
};

/*
 * Read and check path.  On success fill *p and return 0.  On failure return
 * -1 with a one-line reason in err ("truncated: section 4 needs 812 bytes,
 * 100 left"); the caller prints it after the file name.  *p is left empty.
 */
int reader_load(const char *path, struct profile *p, char *err, size_t errlen);
/* The same from a buffer already in memory (fuzzing, tests). */
int reader_parse(const unsigned char *buf, size_t len, struct profile *p, char *err, size_t errlen);
/*
 * What the decoded file says, checked (reader_check.c; reader_parse runs
 * it): INFO's numbers are decimal numbers in their range, and the
 * counters (the bins) add up to less than 2^63; fills counter_sum and
 * bin_sum.  0, or -1 with a reason in err.
 */
int reader_check(struct profile *p, char *err, size_t errlen);
void reader_release(struct profile *p);

/* The value of an INFO key, or NULL. */
const char *reader_info(const struct profile *p, const char *key);
/* How the run ended when that is news (INFO ended, unless it is "exit"):
 * "killed by signal 9 (SIGKILL)", "_exit(3)"; else NULL.  The views say
 * it in their first lines. */
const char *reader_ended(const struct profile *p);
/* The sampled monitor's mean bytes between samples (INFO sample_bytes):
 * the profile's counters are estimates; 0 for an exact profile. */
uint64_t reader_sampled(const struct profile *p);
/* Index of a counter by name, or -1. */
int reader_counter(const struct profile *p, const char *name);

/* The frames of stack i, innermost first, into out (room for its depth,
 * at most FORMAT_MAX_DEPTH); returns the depth.  O(depth). */
uint32_t reader_frames(const struct profile *p, size_t i, uint64_t *out);
/* Own frames from..depth - shared of stack i (from <= that), innermost
 * first, into out; returns how many.  O(own frames - from). */
uint32_t reader_own(const struct profile *p, size_t i, uint32_t from, uint64_t *out);
/* The counters of stack i into out (room for ncounters); returns out. */
const uint64_t *reader_counts(const struct profile *p, size_t i, uint64_t *out);
/*
 * The stacks before i will not be read again soon: the pages of the
 * mapped file that hold only their frames leave this process's memory
 * (read back from the page cache if a view does read them).  A hint for
 * views that walk the stacks once, in order; nothing for a copy.
 */
void reader_forget(const struct profile *p, size_t i);
/*
 * The stacks themselves are no longer needed (a view made its model,
 * which keeps their counters, not them): their index goes, and the file
 * with it.  stacks becomes NULL, nstacks 0; the counters stay.
 */
void reader_drop_stacks(struct profile *p);

/*
 * The coding, for stacks made by hand (tests): n values as LEB128 into
 * out (room for 10 n bytes), as zigzag deltas from the one before (the
 * first from 0) if deltas; returns the bytes used.  reader_unpack
 * decodes n plain values, returning the byte after them.
 */
size_t reader_pack(unsigned char *out, const uint64_t *v, size_t n, int deltas);
const unsigned char *reader_unpack(const unsigned char *b, uint64_t *out, size_t n);

#endif
