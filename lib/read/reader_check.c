/*
 * reader_check.c - owns the checks of what a decoded file says, once
 * reader.c has checked how it is built (reader_check; doc/format.md,
 * "What a reader checks"): the numbers INFO holds, and what the counters
 * and bins add up to.
 *
 * Sums: every view adds counters up (a table's total, a function's
 * bytes over four size classes, a chain's kept bytes, a call path's
 * hits) and diff subtracts two files' sums.  A file whose counters, all
 * of them over every stack, add up to less than 2^63 lets every such sum
 * be exact in 64 bits, and every difference of two in signed 64 bits;
 * one that adds up to more is refused rather than shown wrapped, a total
 * smaller than its rows.  Real files are far below: 2^63 bytes is eight
 * exbibytes allocated.
 *
 * INFO: the values the tools read as numbers (a resource's interval
 * scales every figure of an export) and those a collector writes as
 * numbers must be decimal numbers in their range; "-5", "12x" or a pid
 * of 2^40 is a corrupt file.
 */
#include "format/format.h"
#include "read/reader.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SUM_MAX ((uint64_t)INT64_MAX)

static const struct {
	const char *key; /* with a final '.': every key it begins */
	uint64_t min, max;
} numbers[] = {
	{ "pid", 1, 1u << 22 }, /* Linux's PID_MAX_LIMIT */
	{ "interval.", 1, 1ull << 62 }, /* as cpprof record takes them */
	{ "random", 0, 1 },
	{ "start_ns", 0, SUM_MAX },
	{ "end_ns", 0, SUM_MAX },
	{ "allocs", 0, SUM_MAX },
	{ "frees", 0, SUM_MAX },
	{ "bytes", 0, SUM_MAX },
	{ "bytes_freed", 0, SUM_MAX },
	{ "unknown_frees", 0, SUM_MAX },
	{ "dropped", 0, SUM_MAX },
	{ "leak_scan_ns", 0, SUM_MAX },
	{ "lisp.unmatched", 0, SUM_MAX },
	{ "paths", 0, SUM_MAX },
	{ "threads", 0, SUM_MAX },
	{ "threads_not_profiled", 0, SUM_MAX },
	{ "max_tree_depth", 0, SUM_MAX },
	{ "merged_files", 1, SUM_MAX },
	{ "duration_ns", 0, SUM_MAX },
};

/* s as a decimal number (digits only: strtoull alone would take a
 * space, a sign or hexadecimal); -1 if it is none or passes 2^64. */
static int decimal(const char *s, uint64_t *v)
{
	char *end;

	if (*s < '0' || *s > '9' || strspn(s, "0123456789") != strlen(s))
		return -1;
	errno = 0;
	*v = strtoull(s, &end, 10);
	return errno == ERANGE ? -1 : 0;
}

static int check_info(const struct profile *p, char *err, size_t errlen)
{
	for (size_t i = 0; i < p->ninfo; i++) {
		const char *key = p->info[i].key, *val = p->info[i].value;

		for (size_t k = 0; k < sizeof numbers / sizeof numbers[0]; k++) {
			size_t n = strlen(numbers[k].key);
			uint64_t v;

			if (numbers[k].key[n - 1] == '.' ? strncmp(key, numbers[k].key, n)
							   : strcmp(key, numbers[k].key))
				continue;
			if (decimal(val, &v) < 0 || v < numbers[k].min || v > numbers[k].max) {
				snprintf(err, errlen,
					 "corrupt info section: %.64s is '%.32s%s', not a number from %llu to %llu",
					 key, val, strlen(val) > 32 ? "..." : "",
					 (unsigned long long)numbers[k].min,
					 (unsigned long long)numbers[k].max);
				return -1;
			}
			break;
		}
	}
	return 0;
}

/* *sum += v, or -1 past SUM_MAX. */
static int add(uint64_t *sum, uint64_t v)
{
	if (v > SUM_MAX - *sum)
		return -1;
	*sum += v;
	return 0;
}

static int check_sums(struct profile *p, char *err, size_t errlen)
{
	uint64_t c[FORMAT_MAX_COUNTERS];

	p->counter_sum = 0;
	for (size_t i = 0; i < p->nstacks; i++) {
		reader_counts(p, i, c);
		for (size_t k = 0; k < p->ncounters; k++)
			if (add(&p->counter_sum, c[k]) < 0) {
				snprintf(err, errlen,
					 "corrupt stacks section: its counters add up to 2^63 or more "
					 "(at stack %zu, counter %s)",
					 i, p->counter_names[k]);
				return -1;
			}
	}
	p->bin_sum = 0;
	for (size_t i = 0; i < p->nbins; i++) {
		const struct prof_bin *b = &p->bins[i];
		if (add(&p->bin_sum, b->allocs) < 0 || add(&p->bin_sum, b->frees) < 0 ||
		    add(&p->bin_sum, b->bytes) < 0 || add(&p->bin_sum, b->freed) < 0) {
			snprintf(err, errlen,
				 "corrupt bins section: its figures add up to 2^63 or more (at bin %u)",
				 b->size);
			return -1;
		}
	}
	return 0;
}

int reader_check(struct profile *p, char *err, size_t errlen)
{
	if (check_info(p, err, errlen) < 0 || check_sums(p, err, errlen) < 0)
		return -1;
	/* Every cfprof file has its exact calls: without them the cfprof
	 * view refused it, while export, diff and merge read it (and merge
	 * wrote a file its own view refused). */
	if (p->kind == FORMAT_KIND_CFPROF && reader_counter(p, "calls") < 0) {
		snprintf(err, errlen, "corrupt: a cfprof profile without its 'calls' counter");
		return -1;
	}
	return 0;
}
