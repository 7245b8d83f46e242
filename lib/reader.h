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
 */
struct prof_stack {
	uint32_t depth;    /* frames in all */
	uint32_t flags;    /* FORMAT_STACK_* */
	uint64_t *frames;  /* its own depth - shared frames, innermost first */
	uint64_t *counts;  /* profile.ncounters values */
	uint32_t shared;   /* outermost frames held by stacks[ref] */
	uint32_t ref;      /* with shared > 0: an earlier stack whose own frames
			    * hold frame depth - shared (its stacks[ref].depth -
			    * shared'th), with stacks[ref].shared < shared */
	uint32_t tid;      /* the sampled thread (THREADS section), else 0 */
};

struct prof_bin {
	uint32_t size; /* 0..1024, 1025 = larger */
	uint64_t allocs, frees, bytes, freed;
};

struct prof_kv {
	char *key, *value;
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
	uint64_t *slab; /* every stack's own frames and counts, one allocation */
	uint64_t nvalues; /* frames and counters of every stack, references
			   * followed: what views may walk (bounded) */
	size_t nbins;
	struct prof_bin *bins;
	int has_threads; /* the file had a THREADS section: stacks[].tid */
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

#endif
