/*
 * tables_diff.h - mprof's four tables of what changed between two runs
 * (issue 14, `mprof diff BASE NEW`): the tables of a difference model,
 * whose stacks carry NEW's counters minus BASE's.
 *
 * A difference is a model like any other: its counters are uint64, and
 * a change below zero is stored modulo 2^64.  Every figure the call graph
 * and table 2 derive is a sum of per-stack counters, and sums modulo 2^64
 * are the signed sums, so callgraph_build and tables_chains work on it
 * unchanged; only printing reads the figures as int64.  (Changes beyond
 * 2^63 bytes would not print right; no run allocates that much.)
 */
#ifndef TABLES_DIFF_H
#define TABLES_DIFF_H

#include <stdio.h>

struct model;
struct callgraph;
struct profile;
struct symbols;
struct tables_opts;

/* One of the two runs, as the header names it and table 1 reads it. */
struct tables_diff_side {
	const char *path;        /* its data file */
	const struct profile *p; /* its bins and run facts (cmdline, pid) */
	const struct model *m;   /* its stacks (allocation data), symbolized */
};

/*
 * Initialise d as the difference nw minus base: one stack per distinct
 * sequence of function names (with its truncation flag) in either model,
 * matched by name because the two runs load their code at different
 * addresses; the counters nw's minus base's, summed over the stacks of
 * that sequence.  Stacks whose change is zero in every counter are left
 * out, so a run against itself gives an empty model.  Call sites and
 * inline marks are not kept.  d borrows the function names of both
 * models: their symbolizers must outlive it.  Release with model_release.
 */
void tables_diff_model(struct model *d, const struct model *base, const struct model *nw);

/*
 * Print the header (both runs' totals and the change) and the four
 * tables of d (g built from d), every figure signed, rows in order of
 * the size of their change.  Table 1 is nw's bins minus base's, its
 * types column from s (may be NULL).  o: verbosity, leak table, depth.
 */
void tables_diff_print(FILE *out, const struct model *d, const struct callgraph *g,
		       const struct tables_diff_side *base, const struct tables_diff_side *nw,
		       struct symbols *s, const struct tables_opts *o);

#endif
