/*
 * tables.h - mprof's four tables (mprof.1: TABLE 1 to 4), printed from the
 * model and call graph in the gprof-like layout of the paper.
 */
#ifndef TABLES_H
#define TABLES_H

#include <stdint.h>
#include <stdio.h>

struct model;
struct callgraph;
struct profile;
struct symbols;

enum tables_verbosity { TABLES_TERSE, TABLES_NORMAL, TABLES_VERBOSE };

struct tables_opts {
	enum tables_verbosity verbosity;
	int leaktable; /* print table 2 */
	int offsets;   /* +n call-site offsets in leak paths */
	int lines;     /* file:line after each function in leak paths */
	int depth;     /* frames in a partial chain, the allocating one too (5) */
	int peaktable; /* print the heap peak's chains (files that have them) */
	int full_names; /* table 1: C++ types as demangled, not simplified */
};

/*
 * Print the header and the four tables, and after the leak table the
 * chains live at the heap's peak.  bins come from p (exact per size);
 * type names from the allocating frames of m's stacks and from s (may be
 * NULL: none of the program's types).
 */
void tables_print(FILE *out, const struct model *m, const struct callgraph *g,
		  const struct profile *p, struct symbols *s, const struct tables_opts *o);

/* Table 1's types column: the names of the DWARF types of this size (none
 * for s NULL or a size over 1024), at most about 60 columns of them, C++
 * ones written short unless full (tables_print adds the types allocating
 * frames name, which a model of differences does not have). */
void tables_print_types(FILE *out, struct symbols *s, uint32_t size, int full);
/*
 * `mprof timeline`: p's TIMELINE as a text chart with a key of the largest
 * stacks (named by m, which may be NULL), or with as_csv one CSV row a
 * point.  -1 (nothing printed) when p has no timeline.
 */
int tables_timeline(FILE *out, const struct profile *p, const struct model *m, int as_csv);
/* mprof diff's last section: BASE's and NEW's heaps over time in one chart
 * (each from its start), and each one's peak and end.  -1 (nothing
 * printed) unless both have a timeline. */
int tables_timeline_diff(FILE *out, const struct profile *base, const char *base_path,
			 const struct profile *new_, const char *new_path);

/*
 * A partial call chain of table 2: the innermost n frames of model stack
 * `stack` (cut: it had more callers, printed "..."), with the counters of
 * every stack that ends in it and keeps something (allocations or bytes
 * not all freed).
 */
struct tables_chain {
	uint32_t stack, n; /* the chain: the innermost n frames of stack */
	int cut;           /* more callers were present: "..." */
	uint64_t allocs, bytes, frees, freed;
	uint64_t peak, peak_n; /* live bytes, objects at the heap's peak */
	uint64_t cls[8];       /* bytes, objects kept of each leak class, in
				* format.h's order (lost first); 0 unscanned */
};

/*
 * Group m's stacks that keep something by their innermost depth frames of
 * the program's own (with offsets, call sites are told apart by their
 * +offset), as their rows print (fold: runs of library frames folded,
 * tables_library_run; lib: tables_library_fns).  *out (the caller frees
 * it) gets the chains in no particular order; returns how many.  Table 2
 * and its diff (tables_diff.c) print these.
 */
size_t tables_chains(const struct model *m, int depth, int offsets, int fold, const uint8_t *lib,
		     struct tables_chain **out);

/*
 * The model's functions that are a standard library's, one byte each (1:
 * the library's), the caller frees it: a chain's depth does not count
 * them.  C++'s (std::, operator new, _M_ members); Rust's (core::,
 * alloc::, ...) in a Rust program, where std's
 * __rust_begin_short_backtrace, which a thread's own code (main's, a
 * spawned closure's) runs under, is TABLES_LIB_BEGIN: a chain begins at
 * the program's first frame inside it, as Rust's backtraces do.
 */
#define TABLES_LIB_BEGIN 2
uint8_t *tables_library_fns(const struct model *m);
/*
 * Chains print a run of five or more library frames as its first frame,
 * "(N more)" and its last (what the program called, what allocated):
 * sites[0..n), outermost first; at k, the first of such a run, N, else 0.
 */
uint32_t tables_library_run(const struct model *m, const uint8_t *lib, const uint32_t *sites,
			    uint32_t n, uint32_t k);

/*
 * A two-column percentage (mprof.1, FIELDS IN THE OUTPUT): "  " for 0,
 * " ." below 1%, "**" for 100%, else the whole percent, truncated, at most
 * 99.  out must hold 3 bytes.
 */
void tables_pct2(char *out, uint64_t num, uint64_t den);

/* The four classes of v, each a share of den: "cc cc cc cc" (tables_pct2's
 * fields), into out (12 bytes). */
void tables_breakdown(char *out, const uint64_t *v, uint64_t den);

/*
 * A Lisp profile's header and tables 1 to 3 (tables_lisp.c), and in cls
 * (16 bytes) the labels of its class columns for table 4: 0; or -1, doing
 * nothing, when p is no Lisp profile.
 */
/* Table 3's functions (those that allocated directly), by bytes, then
 * objects, then name: a new array of *n function ids (the caller frees
 * it).  The Lisp table lists them as the C table does. */
uint32_t *tables_direct_order(const struct model *m, const struct callgraph *g, size_t *n);

int tables_lisp_print(FILE *out, const struct model *m, const struct callgraph *g,
		      const struct profile *p, const struct tables_opts *o, char *cls);

/* Threshold, in percent, a leak chain or bin must exceed to be printed at
 * this verbosity (verbose: -1, every one). */
double tables_threshold(enum tables_verbosity v);

/* Table 4, the allocation call graph (tables_cg.c), its class columns
 * labelled cls: " s  m  l  x" by size, or by type (by_type: a Lisp
 * profile's, tables_lisp_print's cls). */
void tables_cg_print(FILE *out, const struct model *m, const struct callgraph *g,
		     const char *cls, int by_type);

/* A table's title: "--------- title ---------" between blank lines. */
void tables_rule(FILE *out, const char *title);
/* Whether p is a running process's snapshot (INFO reason snapshot). */
int tables_snapshot(const struct profile *p);
/* The run a header is about: "CMDLINE (pid PID)" from p's INFO, escaped
 * (the command line may hold any byte); how it ended, or that it is a
 * snapshot; and whether its figures are a sampled profile's estimates. */
void tables_run(FILE *out, const struct profile *p);

#endif
