/*
 * model.h - weighted call stacks with symbolic frames: what every view reads.
 *
 * The data file holds stacks of addresses; the model holds the same stacks
 * as sequences of call sites (inline frames expanded), outermost first, each
 * with its counter vector.  A site is a function with its call offset and
 * source line; sites are pooled, and each distinct address is symbolized
 * once however many stacks it appears in.  Stacks are paths in a calling
 * context tree (a node per distinct sequence of sites from the outermost),
 * so the frames stacks share are stored once, as the data file stores them:
 * memory follows the file's size, not the frames its stacks add up to.
 * Distinct address stacks may become equal symbolic stacks; views aggregate
 * as they need.
 */
#ifndef MODEL_H
#define MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "format/format.h"

struct profile;
struct symbols;
struct strtab;
struct langview;
struct lispview;

#define MODEL_NO_OFFSET UINT32_MAX
#define MODEL_NO_LOC UINT32_MAX

struct model_site {
	uint32_t fn;      /* function id in model.fns */
	uint32_t offset;  /* return address - function entry (the "+n" of
			   * mprof -offsets), MODEL_NO_OFFSET if unknown or
			   * the frame is inlined */
	uint32_t loc;     /* "file:line" id in model.locs, or MODEL_NO_LOC */
	uint32_t inlined; /* inlined into the frame before it (its caller) */
	uint32_t atype;   /* the element type an allocating frame names
			   * (symbols.h: sym_frame.atype), an id in
			   * model.atypes, or MODEL_NONE */
	uint32_t decl;    /* a static C function's: the file that defines
			   * it (its path, an id in model.decls);
			   * MODEL_EXTERNAL an external C function's; else
			   * MODEL_NONE */
	uint64_t func_addr; /* entry of the real function, 0 if unknown */
};

#define MODEL_NONE UINT32_MAX
#define MODEL_EXTERNAL (UINT32_MAX - 1)

struct model_stack {
	uint32_t leaf;       /* node of the innermost frame, MODEL_NONE if n is 0 */
	uint32_t n;          /* frames: the innermost n nodes on the path from
			      * leaf to the tree's root (outer callers dropped
			      * stop short of the root) */
	uint32_t cut;        /* outer callers were dropped (truncated) */
	uint32_t run;        /* the run (below) leaf is in */
	const unsigned char *cv; /* model.nc counters, coded as the reader
				  * codes them (model_counts decodes) */
};

struct model {
	/* Every name here is printable: one with a control character in it
	 * is kept escaped (escape.h), in own_names. */
	struct strtab *fns;  /* function names: the symbolizer's (or
			      * model_add's caller's) strings, not copies:
			      * they must outlive the model */
	struct strtab *locs; /* "file:line" strings */
	struct strtab *own_names; /* copies of names made here ("[category]",
				   * Lisp names, escaped names) */
	struct strtab *decls;  /* the files sites' functions are defined in */
	/* Per function id (variant_cap of them, 0 past it): for a name
	 * shown with its file (tell_apart: a.c:load), its plain name's id +
	 * 1, else 0. */
	uint32_t *variant_of;
	size_t variant_cap;
	/* Their keys, "PATH\nNAME" (the file's path as the symbolizer gives
	 * it, the plain name), and per key its function id: NULL until one. */
	struct strtab *vkeys;
	uint32_t *vkey_fn;
	size_t vkey_cap;
	struct strtab *atypes; /* element types allocating frames name, as
				* demangled: the symbolizer's strings */
	uint64_t *atype_size;  /* sizeof each, 0 if unknown */
	size_t atype_cap;
	struct lispview *lisp;    /* a Lisp profile's view (lispview.h), or NULL */
	struct langview *lang;    /* its language frames (langview.h), or NULL */
	uint32_t toplevel_fn;     /* its "(top-level)" function, or MODEL_NONE */
	struct model_site *sites;
	size_t nsites, sites_cap;
	/* The calling context tree, as runs: a stack's own frames are
	 * consecutive nodes, each called from the one before; node k calls
	 * site[k], and the first node of run r is called from node
	 * runs[r].parent (MODEL_NONE: outermost), in run parent_run.  Runs
	 * are in node order. */
	uint32_t *site;
	size_t nnodes, nodes_cap;
	struct model_run {
		uint32_t first, parent, parent_run;
	} *runs;
	size_t nruns, runs_cap;
	size_t nstacks, cap;
	struct model_stack *stacks;
	uint32_t maxn;        /* the largest n: room model_path needs */
	uint32_t main_fn;     /* function id of main (frames outer to it drop) */
	int all_frames;       /* built with MODEL_KEEP_ABOVE_MAIN: they don't */
	/* Set before model_from_profile: the other side of a diff, whose
	 * language frames' modules its names take into account (langview.h):
	 * the two sides name a function alike. */
	const struct profile *peer;
	size_t nc;            /* counters per stack: MPROF_NCOUNTERS, or
			       * MPROF_NCOUNTERS_ALL with has_peak, or
			       * MPROF_NCOUNTERS_SCAN with has_scan too, in
			       * mprof order for allocation data, else the
			       * file's */
	int has_peak;         /* allocation data with the peak's counters
			       * (files from before issue 15 have none) */
	int has_scan;         /* and the leak classes' (MPROF_LEAKS=scan) */
	int has_temp;         /* the temporaries' counters (issue 24; zeros
			       * in the model for a file without them) */
	uint64_t tot[FORMAT_MAX_COUNTERS]; /* sums over all stacks */
	/* storage */
	unsigned char **owned; /* counter vectors the model coded, in chunks */
	size_t nowned, owned_cap, owned_fill;
	void *sitemap;        /* site dedup table */
	/* model_add's last stack, a frame per depth: the next stack shares
	 * the frames it has in common with it */
	struct model_frame {
		uint32_t site, node, run;
	} *last;
	size_t nlast, last_cap;
	/* Allocator wrappers (mprof --alloc-fn, as memcheck's): set before
	 * model_from_profile, each stack loses its outermost frame of one of
	 * these functions and every frame inside it, so its caller is the
	 * one that allocated (a short C++ name stands for its full ones). */
	const char *const *alloc_fns;
	size_t nalloc_fns;
	uint32_t *alloc_mark; /* per function: 0 not looked at, 1 none, i + 2 alloc_fns[i] */
	size_t alloc_mark_cap;
	uint8_t *alloc_used;  /* per alloc_fns[i]: some stack lost frames to it */
};

enum {
	MODEL_KEEP_ABOVE_MAIN = 1, /* keep _start, __libc_start_main, ... */
};

void model_init(struct model *m);
/* Whether model.alloc_fns[i] took frames off some stack (a name no stack
 * has, or only as its outermost frame, took none). */
int model_alloc_fn_used(const struct model *m, size_t i);
/*
 * Symbolize every stack of a profile.  For allocation data (kind mprof) the
 * counters are mprof's 16, matched by name, in MPROF_C_* order, then the
 * peak's two if the file has them (has_peak), then the leak classes' eight
 * if it has those too (has_scan); for other kinds they are the file's, in
 * its order.
 * Frames outer to main are dropped unless MODEL_KEEP_ABOVE_MAIN.  The model
 * points into p's counters: p must outlive it.  The stacks are read once,
 * in order, and given back as they are (reader_forget).  Returns 0, or -1 with a
 * reason in err when the profile lacks mprof's counters.
 */
int model_from_profile(struct model *m, const struct profile *p, struct symbols *s,
		       unsigned flags, char *err, size_t errlen);
/*
 * The two sides of a diff, each from model_from_profile: each shows after
 * its file (a.c:load) a C function whose name the other shows so, so
 * that one function is named alike in both (a run that met one of two
 * inlined static functions of a name shows it plain, a run that met both
 * after their files).
 */
void model_tell_apart_like(struct model *a, struct model *b);
/*
 * The name the model shows for function func (the symbolizer's name)
 * defined in file decl (sym_frame.decl): "FILE:func", FILE the last parts
 * of decl, where the model tells C's functions of that name apart
 * (tell_apart), else NULL.
 */
const char *model_shown_name(const struct model *m, const char *func, const char *decl);
/*
 * Add one stack by function names, outermost first (tests, synthetic data,
 * the difference of two runs).  The outer frames it has in common with
 * the stack added just before are that stack's nodes, not copies: stacks
 * added in the order of a depth-first walk of their tree cost one node
 * per node of the tree.
 */
void model_add(struct model *m, const char *const *names, uint32_t n, const uint64_t *c);
void model_release(struct model *m);

/* The site ids of stack s, outermost first, into out (room for m->maxn);
 * returns s->n.  O(n). */
uint32_t model_path(const struct model *m, const struct model_stack *s, uint32_t *out);
/* The same for its innermost k frames (k <= s->n). */
void model_inner(const struct model *m, const struct model_stack *s, uint32_t k, uint32_t *out);

/*
 * Mark in set (room for strtab_count(m->fns)) the functions a name a user
 * typed stands for: the function of that name; failing that, those whose
 * short C++ name (cxxname_simplify) is the typed name's, so that a name
 * typed in full finds its function among short names, and a short name
 * every instantiation among full ones (C's functions of one name in two
 * files, shown as a.c:load and b.c:load, are both load's); failing that
 * too, in a Python
 * profile, the functions whose own qualified name is NAME, each shown
 * after its module (m.load and json.load for load: langview.c).  Returns
 * how many were marked.
 */
size_t model_find_fns(const struct model *m, const char *name, uint8_t *set);

/* The counters of stack s into buf (room for m->nc); returns buf. */
const uint64_t *model_counts(const struct model *m, const struct model_stack *s, uint64_t *buf);

/* Convenience over the counter vector. */
uint64_t model_allocs(const uint64_t *c);
uint64_t model_bytes(const uint64_t *c);
uint64_t model_frees(const uint64_t *c);
uint64_t model_freed(const uint64_t *c);
/* Bytes (objects) the stack kept that the leak scan put in class k
 * (MPROF_CLASS_LOST ...); 0 without a scan. */
uint64_t model_class_bytes(const struct model *m, const uint64_t *c, int k);
uint64_t model_class_objects(const struct model *m, const uint64_t *c, int k);
/* Live bytes (objects) the stack held at the heap's peak; 0 without. */
uint64_t model_peak(const struct model *m, const uint64_t *c);
uint64_t model_peak_objects(const struct model *m, const uint64_t *c);

#endif
