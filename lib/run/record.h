/*
 * record.h - the options `cpprof record` and `cfprof record` share: which
 * resources to sample and how often (-e), the data file (-o), fixed
 * intervals (--no-random), turned into the sampler's environment.
 */
#ifndef RECORD_H
#define RECORD_H

#include <stddef.h>
#include <stdint.h>

#include "resources.h"

struct record_opts {
	int want[RES_N];
	uint64_t interval[RES_N];
	int nwant;
	int random;
	const char *out;
	const char *no_perf; /* "CPPROF_NO_PERF", "CFPROF_NO_PERF": the
			      * collector's variable, read as it reads it */
};

/* Defaults: nothing asked (cpu then), random intervals, out; env, the
 * collector's variables' prefix ("CPPROF_", "CFPROF_"). */
void record_init(struct record_opts *r, const char *out, const char *env);

/*
 * If argv[*i] is -e/--event, -o/--output or --no-random, take it and its
 * argument (advancing *i) and return 1; else 0.  A bad argument dies with
 * a message that quotes usage.
 */
int record_option(struct record_opts *r, int argc, char **argv, int *i, const char *usage);

/* `record --help`: usage, then the options above, then the command's own
 * (extra: lines of text, or NULL), on standard output. */
void record_help(const char *usage, const char *extra);

/*
 * The sampler's event list ("cpu:1000000,page-faults:1000") of the
 * resources asked for (cpu when none) that this machine can sample; says
 * on stderr why each other one is not, and what the CPU clock falls back
 * to.  Dies when none can be sampled.
 */
void record_events(const struct record_opts *r, char *events, size_t len);

#endif
