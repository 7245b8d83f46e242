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

struct prof_stack {
	uint32_t depth;
	uint32_t flags;    /* FORMAT_STACK_* */
	uint64_t *frames;  /* innermost first */
	uint64_t *counts;  /* profile.ncounters values */
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
	uint32_t version, kind;
	size_t ninfo;
	struct prof_kv *info;
	size_t nmodules;
	struct prof_module *modules;
	size_t ncounters;
	char **counter_names, **counter_units;
	size_t nstacks;
	struct prof_stack *stacks;
	uint64_t *slab; /* every stack's frames and counts, one allocation */
	size_t nbins;
	struct prof_bin *bins;
	int has_threads; /* the file had a THREADS section: stacks[].tid */
};

/*
 * Read and check path.  On success fill *p and return 0.  On failure return
 * -1 with a one-line reason in err ("truncated: section 4 needs 812 bytes,
 * 100 left"); the caller prints it after the file name.  *p is left empty.
 */
int reader_load(const char *path, struct profile *p, char *err, size_t errlen);
/* The same from a buffer already in memory (fuzzing, tests). */
int reader_parse(const unsigned char *buf, size_t len, struct profile *p, char *err, size_t errlen);
void reader_release(struct profile *p);

/* The value of an INFO key, or NULL. */
const char *reader_info(const struct profile *p, const char *key);
/* Index of a counter by name, or -1. */
int reader_counter(const struct profile *p, const char *name);

#endif
