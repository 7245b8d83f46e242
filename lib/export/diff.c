/*
 * diff.c - owns the diff verb (export_diff_main): what grew and shrank
 * between two profiles of a program.  mprof's allocation data is shown
 * as mprof's four tables of NEW minus BASE (tables_diff.c).  Otherwise,
 * or with --paths, as call path fractions side by side (Hall & Goldberg's
 * downward profile from a root, main by default, a Lisp profile's
 * top-level forms): each canonical call
 * path's share of BASE's total and of NEW's, and the change, largest
 * change first.  Every kind of profile, any counter (export.h names
 * them).
 */
#include "export/export.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/callgraph.h"
#include "model/callpath.h"
#include "base/escape.h"
#include "run/launch.h"
#include "model/lispview.h"
#include "merge/merge.h"
#include "model/model.h"
#include "model/root.h"
#include "read/reader.h"
#include "symbols/symbols.h"
#include "views/tables.h"
#include "views/tables_diff.h"
#include "base/util.h"

struct side {
	const char *path;
	struct profile p;
	struct symbols *sy;
	struct model m;
	struct export_data d;
	uint64_t *w;
	struct cp_result r;
	uint64_t total;
};

static uint32_t fn_ids(const void *ctx, size_t i, uint32_t *out)
{
	const struct model *m = ctx;
	uint32_t n = model_path(m, &m->stacks[i], out);

	for (uint32_t j = 0; j < n; j++)
		out[j] = m->sites[out[j]].fn;
	return n;
}

/* -alloc-fn's allocator wrappers (model.h), both sides'. */
static const char **alloc_fns;
static size_t nalloc_fns;

static void read_side(struct side *s)
{
	char err[256];

	if (reader_load(s->path, &s->p, err, sizeof err) < 0)
		die("%s: %s", s->path, err);
}

/* s's model and counters (its language frames named as peer's need too:
 * langview.h); exe, the a.out given, is NEW's: BASE's too only
 * when both are of one build (before a change, BASE is of another, and
 * read in that one's symbols it was misnamed: main _fini, main atol). */
static void load(struct side *s, const char *exe, const struct side *new_side, unsigned mflags,
		 int full, const struct profile *peer)
{
	char err[256];

	if (s != new_side && !merge_same_program(&s->p, &new_side->p))
		exe = NULL;
	s->sy = symbols_open(&s->p, exe);
	if (!s->sy)
		die("out of memory opening symbols");
	symbols_full_names(s->sy, full);
	model_init(&s->m);
	s->m.peer = peer;
	s->m.alloc_fns = alloc_fns;
	s->m.nalloc_fns = nalloc_fns;
	if (model_from_profile(&s->m, &s->p, s->sy, mflags, err, sizeof err) < 0 ||
	    export_prepare(&s->d, &s->p, &s->m, err, sizeof err) < 0)
		die("%s: %s", s->path, err);
}

/* The down profile from root (by name) for counter k; the path's names
 * joined by spaces are its key.  *found: whether root is a function of
 * this side's. */
static int profile(struct side *s, size_t k, const char *root, int *found)
{
	struct cp_input in = { 0 };
	uint8_t *set = xcalloc(strtab_count(s->m.fns) + 1, 1);
	int rc;

	*found = model_find_fns(&s->m, root, set) != 0;

	s->w = xcalloc(s->m.nstacks + 1, sizeof(uint64_t));
	/* cfprof's own row, the hooks' time (cfprof.1): the cost of the
	 * instrumentation, not the program's, and from run to run it moved
	 * between 34% and 44% of gawk's samples, and every path's share
	 * with it.  The shares are of the program's time. */
	int64_t hooks = s->p.kind == FORMAT_KIND_CFPROF
				? strtab_find(s->m.fns, "__cyg_profile_func_enter")
				: -1;
	uint32_t *path = hooks >= 0 ? xcalloc((size_t)s->m.maxn + 1, sizeof *path) : NULL;

	for (size_t i = 0; i < s->m.nstacks; i++) {
		uint64_t c[FORMAT_MAX_COUNTERS];

		s->w[i] = export_value(&s->d, export_counts(&s->d, i, c), k);
		if (hooks >= 0 && fn_ids(&s->m, i, path) == 1 && path[0] == (uint32_t)hooks)
			s->w[i] = 0;
		s->total += s->w[i];
	}
	free(path);
	in.nstacks = s->m.nstacks;
	in.weight = s->w;
	in.path = fn_ids;
	in.ctx = &s->m;
	in.maxn = s->m.maxn;
	in.nids = strtab_count(s->m.fns);
	in.max_paths = s->m.nnodes + s->m.nstacks + (1u << 16);
	rc = callpath_down(&in, set, &s->r);
	free(set);
	return rc;
}

static void release(struct side *s)
{
	callpath_result_free(&s->r);
	free(s->w);
	model_release(&s->m);
	symbols_free(s->sy);
	reader_release(&s->p);
}

static char *key_of(const struct side *s, const struct cp_entry *e)
{
	uint32_t *path = xcalloc((size_t)s->r.maxlen + 1, sizeof(uint32_t));
	size_t len = 0, cap = 0;
	char *k = NULL;

	callpath_path(&s->r, e, path);
	for (uint32_t j = 0; j < e->len; j++) {
		const char *name = strtab_get(s->m.fns, path[j]);
		size_t n = strlen(name);
		util_grow(&k, &cap, len + n + 2, 1);
		if (j)
			k[len++] = ' ';
		memcpy(k + len, name, n);
		len += n;
		k[len] = 0;
	}
	free(path);
	return k ? k : xstrdup("");
}

struct row {
	char *key;
	double base, new;
};

static int by_change(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	double dx = fabs(x->new - x->base), dy = fabs(y->new - y->base);

	if (dx != dy)
		return dx > dy ? -1 : 1;
	return strcmp(x->key, y->key);
}

static int by_key(const void *a, const void *b)
{
	return strcmp(((const struct row *)a)->key, ((const struct row *)b)->key);
}

/* diff --help (tables: mprof's, which has the four tables too). */
static void help(int tables)
{
	int w = (int)strlen(util_progname) + 13; /* "usage: PROG diff " */

	if (tables)
		printf("usage: %s diff [-verbose|-normal|-terse] [-noleaktable] [-depth N] "
		       "[-all-frames]\n"
		       "%*s[--full-names] [a.out] BASE NEW\n"
		       "       %s diff --paths [--counter NAME] [--root FUNCTION] "
		       "[--threshold FRACTION]\n"
		       "%*s[--full-names] [a.out] BASE NEW\n"
		       "The first prints the four tables of NEW minus BASE, two runs of a\n"
		       "program, stacks matched by their functions (options as the display takes\n"
		       "them).  The second (also with --counter, --root or --threshold)\n"
		       "prints the call path fractions.\n",
		       util_progname, w, "", util_progname, w, "");
	else
		printf("usage: %s diff [--counter NAME] [--root FUNCTION] [--threshold FRACTION]\n"
		       "%*s[--full-names] [a.out] BASE NEW\n",
		       util_progname, w, "");
	printf("Call path fractions: each call path's share of BASE's total and of NEW's,\n"
	       "downward from --root (down's: main), of --counter (the one export writes by\n"
	       "default), largest change first; paths below --threshold (0.01) in both and\n"
	       "in their change are left out.  --full-names: C++ names in full.\n");
}

/* mprof's four tables of the difference, NEW's stacks minus BASE's. */
static void diff_tables(const struct side *b, const struct side *n, const struct tables_opts *o)
{
	struct tables_diff_side bs = { b->path, &b->p, &b->m }, ns = { n->path, &n->p, &n->m };
	struct model d;
	struct callgraph g;

	tables_diff_model(&d, &b->m, &n->m);
	callgraph_build(&g, &d);
	/* Type names as NEW's program has them: the one being looked at. */
	tables_diff_print(stdout, &d, &g, &bs, &ns, n->sy, o);
	/* The two heaps over time, where both runs recorded them. */
	tables_timeline_diff(stdout, &b->p, b->path, &n->p, n->path);
	callgraph_release(&g);
	model_release(&d);
}

/* The table options (one dash or two), as the display takes them: 1 if
 * argv[*i] is one (*i moved past its argument), 0 if not. */
static int table_option(int argc, char **argv, int *i, struct tables_opts *o, unsigned *mflags)
{
	const char *a = argv[*i];

	if (a[0] == '-' && a[1] == '-' && a[2])
		a++;
	if (!strcmp(a, "-verbose"))
		o->verbosity = TABLES_VERBOSE;
	else if (!strcmp(a, "-normal"))
		o->verbosity = TABLES_NORMAL;
	else if (!strcmp(a, "-terse"))
		o->verbosity = TABLES_TERSE;
	else if (!strcmp(a, "-leaktable"))
		o->leaktable = 1;
	else if (!strcmp(a, "-noleaktable"))
		o->leaktable = 0;
	else if (!strcmp(a, "-all-frames"))
		*mflags |= MODEL_KEEP_ABOVE_MAIN;
	else if (!strcmp(a, "-alloc-fn") || !strncmp(a, "-alloc-fn=", 10)) {
		if (!a[9] && *i + 1 >= argc)
			die("diff: -alloc-fn needs a function's name");
		if (!alloc_fns)
			alloc_fns = xcalloc((size_t)argc + 1, sizeof(*alloc_fns));
		alloc_fns[nalloc_fns++] = a[9] ? a + 10 : argv[++*i];
	} else if (!strcmp(a, "-depth") || !strncmp(a, "-depth=", 7)) {
		/* -depth N, or -depth=N, as the tables take it */
		const char *v;
		char *end;
		long d;
		if (!a[6] && *i + 1 >= argc)
			die("diff: -depth needs a number");
		v = a[6] ? a + 7 : argv[++*i];
		d = strtol(v, &end, 10);
		if (!*v || *end || d < 1 || d > 1000)
			die("diff: -depth: '%s' is not a number from 1 to 1000", v);
		o->depth = (int)d;
	} else
		return 0;
	return 1;
}

int export_diff_main(int argc, char **argv, int tables)
{
	const char *counter = NULL, *root = NULL, *args[3], *exe = NULL, *why;
	const char *path_opt = NULL, *table_opt = NULL, *opt; /* the first of each given */
	char exebuf[PATH_MAX];
	double threshold = 0.01;
	int nargs = 0, kb, kn, full = 0, fb, fn, root_given;
	struct side b = { 0 }, n = { 0 };
	struct row *rows;
	size_t nrows = 0, shown = 0;
	struct tables_opts o = { TABLES_NORMAL, 1, 0, 0, 5, 0, 0 };
	unsigned mflags = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--paths")) {
			path_opt = argv[i];
		} else if (!strcmp(argv[i], "--counter") && i + 1 < argc) {
			path_opt = argv[i];
			counter = argv[++i];
		} else if (!strcmp(argv[i], "--root") && i + 1 < argc) {
			path_opt = argv[i];
			root = argv[++i];
		} else if (!strcmp(argv[i], "--threshold") && i + 1 < argc) {
			path_opt = argv[i];
			if (util_fraction(argv[++i], &threshold) < 0)
				die("diff: --threshold: '%s' is not a fraction from 0 to 1",
				    argv[i]);
		} else if (!strcmp(argv[i], "--full-names") || !strcmp(argv[i], "-full-names")) {
			full = 1;
		} else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			help(tables);
			return 0;
		} else if (argv[i][0] == '-' && argv[i][1] &&
			   (opt = argv[i], table_option(argc, argv, &i, &o, &mflags))) {
			table_opt = table_opt ? table_opt : opt;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			die("diff: unknown option '%s' (%s diff --help shows the usage)", argv[i],
			    util_progname);
		} else if (nargs == 3) {
			die("diff: too many arguments (%s diff --help shows the usage)",
			    util_progname);
		} else {
			args[nargs++] = argv[i];
		}
	}
	if (nargs < 2)
		die("diff: BASE and NEW are needed (%s diff --help shows the usage)",
		    util_progname);
	b.path = args[nargs - 2];
	n.path = args[nargs - 1];
	read_side(&b);
	read_side(&n);
	/* A bare name that is no file here is found as the one view finds
	 * it: the executable either file recorded, or on PATH. */
	if (nargs == 3) {
		if (launch_find_exe(args[0], reader_info(&n.p, "exe"), exebuf, sizeof exebuf, &why) < 0 &&
		    launch_find_exe(args[0], reader_info(&b.p, "exe"), exebuf, sizeof exebuf, &why) < 0)
			die("%s: %s", args[0], why);
		exe = exebuf;
	}
	load(&b, exe, &n, mflags, full, &n.p);
	load(&n, exe, &n, mflags, full, &b.p);
	model_tell_apart_like(&b.m, &n.m);
	for (size_t i = 0; i < nalloc_fns; i++)
		if (!model_alloc_fn_used(&b.m, i) && !model_alloc_fn_used(&n.m, i))
			fprintf(stderr, "%s: diff: -alloc-fn: no stack of either has a caller of '%s': "
					"nothing changed\n",
				util_progname, alloc_fns[i]);
	o.full_names = full;
	if (b.p.kind != n.p.kind)
		die("%s: not the same kind of profile as %s: no diff", n.path, b.path);
	tables = tables && b.p.kind == FORMAT_KIND_MPROF && !path_opt;
	if (table_opt && !tables)
		die("diff: %s is an option of mprof's tables, not of call path fractions%s", table_opt,
		    path_opt ? " (given with --paths, --counter, --root or --threshold)" : "");
	if (tables) {
		diff_tables(&b, &n, &o);
		release(&b);
		release(&n);
		if (fflush(stdout) != 0 || ferror(stdout))
			die("write error on standard output: %s", strerror(errno));
		return 0;
	}
	root_given = root != NULL;
	/* The root cpprof's down starts from: a stripped program's main is
	 * the function glibc's start calls (xz+0x36a0); "main" gave an empty
	 * table and exit 0. */
	if (!root)
		root = model_default_root(&n.p, &n.m);
	if (!root)
		root = model_default_root(&b.p, &b.m);
	if (!root)
		root = "main";
	if (counter) {
		kb = export_find(&b.d, counter);
		kn = export_find(&n.d, counter);
	} else {
		int ob, on;

		kb = (int)export_default(&b.d, &ob);
		kn = (int)export_default(&n.d, &on);
		/* Both kept nothing: what both allocated. */
		if (ob && on)
			errx_("diff: nothing is kept in %s or %s (inuse_space is 0): this is "
			      "alloc_space (--counter NAME for another)", b.path, n.path);
		else
			kb = kn = (int)b.d.dflt;
	}
	if (kb < 0 || kn < 0 || strcmp(b.d.c[kb].name, n.d.c[kn].name))
		die("%s: no counter '%s' in both files", kb < 0 ? b.path : n.path,
		    counter ? counter : n.d.c[kn].name);
	if (profile(&b, (size_t)kb, root, &fb) < 0 || profile(&n, (size_t)kn, root, &fn) < 0)
		die("diff: too many call paths");
	/* A root neither side has gave an empty table and exit 0. */
	if (!fb && !fn)
		die("diff: no function named '%s' in %s or %s%s", root, b.path, n.path,
		    root_given ? "" : " (give the root with --root FUNCTION)");
	rows = xcalloc(b.r.n + n.r.n + 1, sizeof(*rows));
	for (size_t i = 0; i < b.r.n; i++)
		rows[nrows++] = (struct row){ key_of(&b, &b.r.e[i]),
					      b.total ? (double)b.r.e[i].hits / (double)b.total : 0, 0 };
	qsort(rows, nrows, sizeof(*rows), by_key);
	{
		size_t nb = nrows;
		for (size_t i = 0; i < n.r.n; i++) {
			struct row key = { key_of(&n, &n.r.e[i]), 0, 0 };
			struct row *hit = nb ? bsearch(&key, rows, nb, sizeof(*rows), by_key) : NULL;
			double f = n.total ? (double)n.r.e[i].hits / (double)n.total : 0;
			if (hit) {
				hit->new = f;
				free(key.key);
			} else {
				key.new = f;
				rows[nrows++] = key;
			}
		}
	}
	qsort(rows, nrows, sizeof(*rows), by_change);
	/* The paths and the root as typed, escaped like every name. */
	printf("Call path fractions of %s, downward from ", n.d.c[kn].name);
	escape_put(stdout, root);
	fputs(": BASE ", stdout);
	escape_put(stdout, b.path);
	printf(" (%llu %s), NEW ", (unsigned long long)b.total, b.d.c[kb].unit);
	escape_put(stdout, n.path);
	printf(" (%llu %s)\n", (unsigned long long)n.total, n.d.c[kn].unit);
	printf("format: base_fraction new_fraction change (call_path), largest change first\n");
	printf("-----------------------------------------------------\n");
	for (size_t i = 0; i < nrows; i++) {
		if (fabs(rows[i].new - rows[i].base) < threshold && rows[i].new < threshold &&
		    rows[i].base < threshold)
			continue;
		double d = rows[i].new - rows[i].base;

		/* A change that rounds to 0 prints +0.00000, never -0.00000. */
		printf("%.5f %.5f %+.5f (%s)\n", rows[i].base, rows[i].new, fabs(d) < 5e-6 ? 0.0 : d,
		       rows[i].key);
		shown++;
	}
	printf("-----------------------------------------------------\n");
	if (shown < nrows)
		printf("(%zu %s below the threshold %g, in both and in %s change, not shown)\n",
		       nrows - shown, nrows - shown == 1 ? "path" : "paths", threshold,
		       nrows - shown == 1 ? "its" : "their");
	for (size_t i = 0; i < nrows; i++)
		free(rows[i].key);
	free(rows);
	release(&b);
	release(&n);
	if (fflush(stdout) != 0 || ferror(stdout))
		die("write error on standard output: %s", strerror(errno));
	return 0;
}
