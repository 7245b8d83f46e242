/*
 * export.h - profiles out of the terminal (issue 14): the counters every
 * kind of profile offers under the names other tools expect, and the
 * `export` verb the three commands share.
 *
 * Counters: mprof data gives pprof's heap sample types, alloc_objects,
 * alloc_space, inuse_objects, inuse_space (kept at exit); cpprof and cfprof
 * data one per sampled resource (its hits times its interval, in the
 * resource's unit: cpu in nanoseconds), and cfprof's exact calls.
 */
#ifndef EXPORT_H
#define EXPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct model;
struct profile;

#define EXPORT_MAX_COUNTERS 64

struct export_counter {
	char name[64];  /* alloc_space, cpu, calls, ... */
	char unit[32];  /* bytes, count, nanoseconds, ... */
	int col;        /* the model's counter column, -1: derived (mprof) */
	uint64_t scale; /* a hit is worth this many units (the interval) */
};

struct symbols;

struct export_data {
	const struct profile *p;
	const struct model *m;
	struct symbols *sy; /* pprof: locations are symbolized per address */
	int full_names;     /* C++ names in full (the HTML report's tables) */
	size_t n;
	struct export_counter c[EXPORT_MAX_COUNTERS];
	size_t dflt; /* the counter a tool shows first (pprof's default) */
	size_t nstacks; /* the file's stacks, kept when the export drops them:
			 * its sections that name stacks (TIMELINE, LIFETIMES)
			 * are the model's when m->nstacks equals it */
};

/* The counters of p (modelled in m).  0, or -1 with a reason in err. */
int export_prepare(struct export_data *d, const struct profile *p, const struct model *m,
		   char *err, size_t errlen);
/* Model stack i's counters into buf (room for FORMAT_MAX_COUNTERS);
 * returns buf, for export_value. */
const uint64_t *export_counts(const struct export_data *d, size_t i, uint64_t *buf);
/* Counter k's value for a stack of counters c (export_counts). */
uint64_t export_value(const struct export_data *d, const uint64_t *c, size_t k);
/* The index of a counter by name, or -1. */
int export_find(const struct export_data *d, const char *name);
/* The counter shown when none is asked for: the file's default, but for
 * a memory profile whose inuse_space is 0 in every stack (a program that
 * frees all it allocates: its export, flame graph and diff were empty,
 * nothing said), alloc_space, with *other set. */
size_t export_default(const struct export_data *d, int *other);

/* Folded stacks (FlameGraph's format): "main;f;g N" per distinct stack of
 * function names, outermost first, for counter k; stacks worth 0 left out.
 * 0, or -1 on a write error. */
int export_folded(const struct export_data *d, size_t k, FILE *out);

/* pprof's profile.proto, gzip-compressed: every counter a sample type,
 * dflt the default one; a function's name is the one views print, its
 * system_name the symbol's (mangled) name, as pprof itself fills them.  With base (the same kind and counters), its
 * samples too, negated, their addresses moved into d's address space:
 * the profile of the difference, pprof's own -diff_base view.  0, or -1
 * on a write error. */
int export_pprof(const struct export_data *d, size_t dflt, const struct export_data *base,
		 FILE *out);

/* What the HTML report shows beside the stacks. */
struct export_html_info {
	const char *title;  /* the page's title: tool, program and data file */
	const char *facts;  /* a line of facts under it */
	const char *tables; /* mprof's four tables as mprof prints them, or NULL */
	size_t dflt;        /* the counter shown first */
};

/* The HTML report (html.c): one self-contained page, a flame graph per
 * counter, the function view, callees and callers of any root, and
 * info->tables.  0, or -1 on a write error. */
int export_html(const struct export_data *d, const struct export_html_info *info, FILE *out);

/*
 * `TOOL export --format folded|pprof|html [--counter NAME] [--full-names] [-o OUT] [a.out]
 * [DATA]`: the verb as each command runs it (argv[0] is "export");
 * default_data is the tool's data file.  Returns the exit status.
 */
int export_main(int argc, char **argv, const char *default_data);

/* `TOOL diff [--paths] [--counter NAME] [--root F] [--threshold X] [table
 * options] [--full-names] [a.out] BASE NEW` (diff.c): with tables (mprof's command), on
 * allocation data, mprof's four tables of NEW minus BASE unless a call
 * path option is given; else call path fractions side by side.  The exit
 * status. */
int export_diff_main(int argc, char **argv, int tables);

#endif
