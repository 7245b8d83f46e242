/*
 * callgraph.h - the allocation call graph (mprof.1, TABLE 4) from full stacks.
 *
 * Because the monitor keeps whole stacks, a function's self + desc counts
 * each allocation once however often the function recurs on that stack (the
 * paper's F/G example: main, F and G are each credited 10 bytes, not 20).
 * Strongly connected components of the function graph are cycles; the graph
 * is computed twice: per function (cycle members keep their own entries) and
 * with every cycle merged into one node (the cycle's second listing).
 */
#ifndef CALLGRAPH_H
#define CALLGRAPH_H

#include <stddef.h>
#include <stdint.h>

#include "format/format.h"

struct model;

struct cg_node {
	uint64_t self_b[SIZE_NCLASSES];    /* bytes allocated with it innermost */
	uint64_t self_n[SIZE_NCLASSES];    /* allocations with it innermost */
	uint64_t self_kept[SIZE_NCLASSES]; /* of those, bytes never freed */
	uint64_t sd_b[SIZE_NCLASSES];      /* self + descendents, each allocation once */
	uint64_t anc_b[SIZE_NCLASSES];     /* on stacks where another function calls it */
	uint64_t desc_b[SIZE_NCLASSES];    /* on stacks where it calls another function */
	uint64_t called;    /* allocations during which it was on the stack */
	uint64_t recur;     /* its further (recursive) activations on those stacks */
	uint64_t out_calls; /* calls it made to other nodes, over all allocations */
	int cycle;          /* cycle number (1..) it belongs to, 0 if none */
	uint32_t depth;     /* least distance from the outermost frame: callers
			     * sort before callees of equal weight */
};

struct cg_edge {
	uint32_t from, to;
	uint64_t b[SIZE_NCLASSES]; /* bytes on stacks with this call, each once */
	uint64_t calls;            /* times from called to (all occurrences) */
};

struct cg_level {
	size_t nnodes, nedges;
	struct cg_node *node;
	struct cg_edge *edge;
	/* CSR adjacency: edges into node v are in_idx[in_off[v] .. in_off[v+1]). */
	uint32_t *in_off, *in_idx, *out_off, *out_idx;
};

struct callgraph {
	size_t nfns;
	struct cg_level fn;     /* node i is model function i */
	struct cg_level merged; /* node i < nfns is function i; nfns + k - 1 is cycle k;
				 * built only when there are cycles (ncycles > 0) */
	size_t ncycles;
	uint32_t **members; /* members[k - 1]: function ids of cycle k */
	size_t *nmembers;
	uint64_t tot_b[SIZE_NCLASSES], tot_n[SIZE_NCLASSES], tot_kept[SIZE_NCLASSES];
};

void callgraph_build(struct callgraph *g, const struct model *m);
void callgraph_release(struct callgraph *g);
/* The merged-level node of function fn (its cycle's node, or fn). */
uint32_t callgraph_node_of(const struct callgraph *g, uint32_t fn);
uint64_t cg_sum(const uint64_t *v);

#endif
