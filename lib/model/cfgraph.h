/*
 * cfgraph.h - the displays of current-function profiles (cfprof): prof's
 * flat profile (Appel, Duba & MacQueen, section 3) and gprof's call graph,
 * from weighted stacks with exact call counts.
 *
 * The difference from gprof (the paper's section 4): a caller's share of a
 * callee's time is not apportioned by call counts; it is the samples of
 * the paths on which that caller called it, which the stacks hold.
 */
#ifndef CFGRAPH_H
#define CFGRAPH_H

#include <stddef.h>
#include <stdint.h>

struct cp_input;

struct cfg_fn {
	uint64_t self;    /* hits while it was current */
	uint64_t incl;    /* hits of the stacks it is on (once per stack) */
	uint64_t calls;   /* all calls of it */
	uint64_t rcalls;  /* of those, calls from itself (recursion) */
	uint64_t spont;   /* calls with no instrumented caller */
	uint32_t index;   /* [N] in the call graph, 1-based; 0: not shown */
};

struct cfg_edge {
	uint32_t from, to; /* ids */
	uint64_t calls;    /* exact: from called to */
	uint64_t self;     /* hits of to's body on paths where from called it */
	uint64_t incl;     /* hits of the stacks holding the call (once each) */
};

struct cfg {
	size_t nids;
	struct cfg_fn *fn;      /* by id */
	struct cfg_edge *edge;  /* sorted by (from, to) */
	size_t nedges;
	uint64_t total;         /* hits of every stack */
	uint64_t unprofiled;    /* hits of the empty stack: no function current */
	uint32_t *into;         /* edge indices sorted by (to, from) */
	uint32_t *order;        /* ids shown, by decreasing incl (the graph) */
	size_t norder;
};

/* Build from in (weights, calls, paths).  0, or -1 when in->calls is NULL. */
int cfg_build(const struct cp_input *in, struct cfg *g);
void cfg_free(struct cfg *g);

/* The edges out of id: g->edge[*first ...], how many returned. */
size_t cfg_callees(const struct cfg *g, uint32_t id, size_t *first);
/* The edges into id: g->edge[g->into[*first ...]], how many returned. */
size_t cfg_callers(const struct cfg *g, uint32_t id, size_t *first);

#endif
