/*
 * resources.h - the catalogue of resources cpprof samples (Hall & Goldberg
 * section 2: monotonic resources, each a "generalized interval timer"
 * counting gticks), how each is measured, and whether this machine can.
 *
 * Compiled into the sampler (libcpprof.so) and into the cpprof command
 * (`cpprof list`, `cpprof record -e`), so both agree on names, units,
 * defaults and the reason a resource is missing.
 */
#ifndef CP_RESOURCES_H
#define CP_RESOURCES_H

#include <stddef.h>
#include <stdint.h>

enum res_id {
	RES_CPU,
	RES_REAL,
	RES_PAGE_FAULTS,
	RES_MINOR_FAULTS,
	RES_MAJOR_FAULTS,
	RES_CONTEXT_SWITCHES,
	RES_SYSCALLS,
	RES_READ_BYTES,
	RES_WRITE_BYTES,
	RES_IO_TIME,
	RES_N,
};

/* How the gticks of a resource are counted. */
enum res_how {
	RES_HOW_CLOCK,   /* cpu: perf task-clock, else a POSIX CPU-time timer */
	RES_HOW_REAL,    /* real: on-CPU through the CPU clock, blocked via /proc */
	RES_HOW_PERF,    /* a perf software event or tracepoint, overflow signal */
	RES_HOW_RING,    /* a perf event whose samples the kernel writes to a ring */
	RES_HOW_CALLS,   /* counted in the interposed read/write calls */
};

struct res_info {
	const char *name;
	const char *unit;     /* what one gtick is */
	uint64_t interval;    /* default mean interval, gticks */
	enum res_how how;
	uint32_t perf_type;   /* for RES_HOW_PERF / RES_HOW_RING */
	uint64_t perf_config;
	const char *what;     /* one line for `cpprof list` */
};

extern const struct res_info res_table[RES_N];

/* The id of a resource by name, or -1. */
int res_find(const char *name);

/*
 * Whether r is a fault event's.  Its overflow comes at the faulting
 * instruction, and its hits go there, never to another event's signal
 * (the CPU clock's, in code that faults no more: perl's regex engine had
 * 24% of its page faults), unless that is another fault event's, at the
 * same fault (two at interval 1 overflow at one fault, and their
 * signals make one).  Its boundaries crossed meanwhile wait for its next
 * overflow (sampler.c).
 */
static inline int res_is_fault(int r)
{
	return r == RES_PAGE_FAULTS || r == RES_MINOR_FAULTS || r == RES_MAJOR_FAULTS;
}

/*
 * Parse an interval for resource r: a decimal count of gticks, with an
 * optional unit suffix for time resources (ns, us, ms, s) and byte
 * resources (k, m: KiB, MiB).  0 and overflow are errors.  0 or -1.
 */
int res_parse_interval(int r, const char *s, uint64_t *out);

/*
 * Can resource r be sampled here?  0 if so (and `how` tells by what means,
 * e.g. "perf task-clock"), -1 if not, with the reason in `why`.  no_perf,
 * if not NULL, forces perf_event_open off, and names the variable that
 * did (CPPROF_NO_PERF=1 or CFPROF_NO_PERF=1, a test facility).  Opens
 * and closes probe events: call outside signal context.
 */
int res_probe(int r, const char *no_perf, char *how, size_t howlen, char *why, size_t whylen);

/* The raw_syscalls:sys_exit tracepoint id from tracefs, or -1 (why set). */
int64_t res_tracepoint_id(const char *event, char *why, size_t whylen);

#endif
