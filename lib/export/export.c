/*
 * export.c - owns the export verb and the counters it offers (export_*).
 * One file per format beside it: folded.c, pprof.c.
 */
#include "export/export.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/callgraph.h"
#include "format/format.h"
#include "run/launch.h"
#include "merge/merge.h"
#include "model/model.h"
#include "format/newfile.h"
#include "read/reader.h"
#include "symbols/symbols.h"
#include "views/tables.h"
#include "base/util.h"

enum { MP_ALLOC_OBJECTS, MP_ALLOC_SPACE, MP_INUSE_OBJECTS, MP_INUSE_SPACE };

static void add(struct export_data *d, const char *name, const char *unit, int col, uint64_t scale)
{
	struct export_counter *c;

	if (d->n == EXPORT_MAX_COUNTERS)
		return;
	c = &d->c[d->n++];
	snprintf(c->name, sizeof c->name, "%s", name);
	snprintf(c->unit, sizeof c->unit, "%s", unit);
	c->col = col;
	c->scale = scale ? scale : 1;
}

/* A resource's unit as pprof names it. */
static const char *unit_of(const char *res, const char *file_unit)
{
	if (!strcmp(res, "cpu") || !strcmp(res, "real") || !strcmp(res, "io-time"))
		return "nanoseconds";
	if (!strcmp(res, "read-bytes") || !strcmp(res, "write-bytes"))
		return "bytes";
	if (!strcmp(file_unit, "calls"))
		return "count";
	return "count";
}

int export_prepare(struct export_data *d, const struct profile *p, const struct model *m,
		   char *err, size_t errlen)
{
	memset(d, 0, sizeof(*d));
	d->p = p;
	d->m = m;
	d->nstacks = p->nstacks;
	if (p->kind == FORMAT_KIND_MPROF) {
		/* pprof's heap profile order; inuse_space is its default.
		 * Then what each stack held at the heap's peak (a file from
		 * before issue 15 has no such counters). */
		add(d, "alloc_objects", "count", -1, 1);
		add(d, "alloc_space", "bytes", -1, 1);
		add(d, "inuse_objects", "count", -1, 1);
		add(d, "inuse_space", "bytes", -1, 1);
		if (m->has_peak) {
			add(d, "peak_objects", "count", MPROF_C_PEAK_OBJECTS, 1);
			add(d, "peak_space", "bytes", MPROF_C_PEAK_BYTES, 1);
		}
		/* Temporary allocations (freed by their thread with no other
		 * allocation between: heaptrack's), since issue 24. */
		if (m->has_temp) {
			add(d, "temp_objects", "count", MPROF_C_TEMP_OBJECTS, 1);
			add(d, "temp_space", "bytes", MPROF_C_TEMP_BYTES, 1);
		}
		/* What is kept, by the leak scan's classes (MPROF_LEAKS=scan),
		 * lost first: inuse_space split four ways. */
		if (m->has_scan) {
			static const char *const cls[MPROF_NCLASSES][2] = {
				{ "lost_objects", "lost_space" },
				{ "indirect_objects", "indirect_space" },
				{ "possible_objects", "possible_space" },
				{ "reachable_objects", "reachable_space" },
			};
			for (int k = 0; k < MPROF_NCLASSES; k++) {
				add(d, cls[k][0], "count", MPROF_C_LOST_OBJECTS + 2 * k, 1);
				add(d, cls[k][1], "bytes", MPROF_C_LOST_BYTES + 2 * k, 1);
			}
		}
		d->dflt = MP_INUSE_SPACE;
		return 0;
	}
	for (size_t k = 0; k < m->nc && k < p->ncounters; k++) {
		char key[300];
		const char *iv, *name = p->counter_names[k];
		uint64_t scale = 1;

		if (strcmp(name, "calls")) {
			snprintf(key, sizeof key, "interval.%s", name);
			iv = reader_info(p, key);
			scale = iv ? strtoull(iv, NULL, 10) : 1;
		}
		/* Hits times the interval (1..2^62, reader_check.c): every
		 * stack's value and every sum of them stays below 2^63, as
		 * pprof's signed values need. */
		if (scale > 1 && m->tot[k] > (uint64_t)INT64_MAX / scale) {
			snprintf(err, errlen,
				 "counter %s: %llu hits of %llu each add up to 2^63 or more", name,
				 (unsigned long long)m->tot[k], (unsigned long long)scale);
			return -1;
		}
		add(d, name, unit_of(name, p->counter_units[k]), (int)k, scale);
	}
	if (!d->n) {
		snprintf(err, errlen, "no counters to export");
		return -1;
	}
	/* cfprof: the first sampled resource, not the calls. */
	d->dflt = d->n > 1 && !strcmp(d->c[0].name, "calls") ? 1 : 0;
	return 0;
}

const uint64_t *export_counts(const struct export_data *d, size_t i, uint64_t *buf)
{
	return model_counts(d->m, &d->m->stacks[i], buf);
}

uint64_t export_value(const struct export_data *d, const uint64_t *c, size_t k)
{
	if (d->c[k].col >= 0)
		return c[d->c[k].col] * d->c[k].scale;
	switch (k) {
	case MP_ALLOC_OBJECTS:
		return model_allocs(c);
	case MP_ALLOC_SPACE:
		return model_bytes(c);
	case MP_INUSE_OBJECTS:
		return model_allocs(c) - model_frees(c);
	default:
		return model_bytes(c) - model_freed(c);
	}
}

size_t export_default(const struct export_data *d, int *other)
{
	uint64_t buf[FORMAT_MAX_COUNTERS], inuse = 0, alloc = 0;

	*other = 0;
	if (d->p->kind != FORMAT_KIND_MPROF || d->dflt != MP_INUSE_SPACE)
		return d->dflt;
	for (size_t i = 0; i < d->nstacks && !inuse; i++) {
		const uint64_t *c = export_counts(d, i, buf);

		inuse += export_value(d, c, MP_INUSE_SPACE);
		alloc += export_value(d, c, MP_ALLOC_SPACE);
	}
	if (inuse || !alloc)
		return d->dflt;
	*other = 1;
	return MP_ALLOC_SPACE;
}

int export_find(const struct export_data *d, const char *name)
{
	for (size_t k = 0; k < d->n; k++)
		if (!strcmp(d->c[k].name, name))
			return (int)k;
	return -1;
}

/* The HTML report of d, counter k first: its title and facts, and for
 * mprof data the four tables as `mprof` prints them by default. */
static int html(const struct export_data *d, size_t k, const char *data, FILE *f)
{
	const char *exe = reader_info(d->p, "exe"), *cmd = reader_info(d->p, "cmdline");
	const char *tool = d->p->kind == FORMAT_KIND_MPROF ? "mprof" : util_progname;
	struct export_html_info info = { 0 };
	char *tables = NULL, *title = NULL, *facts = NULL;
	size_t len = 0;
	int rc;

	if (d->p->kind == FORMAT_KIND_MPROF) {
		struct tables_opts o = { TABLES_NORMAL, 1, 0, 0, 5, 1, d->full_names };
		struct callgraph g;
		FILE *mem = open_memstream(&tables, &len);

		if (!mem)
			return -1;
		callgraph_build(&g, d->m);
		tables_print(mem, d->m, &g, d->p, d->sy, &o);
		callgraph_release(&g);
		if (fclose(mem) != 0)
			return -1;
	}
	title = xasprintf("%s: %s (%s)", tool, exe ? exe : "a program", data);
	if (tables) /* the tables' header: allocations, bytes, frees, kept */
		facts = xasprintf("%.*s", (int)strcspn(tables, "\n"), tables);
	else { /* and each counter's total, as the tool's own header has it */
		size_t flen = 0;
		FILE *fm = open_memstream(&facts, &flen);

		if (!fm)
			return -1;
		fprintf(fm, "%s%s%zu distinct stacks", cmd ? cmd : "", cmd ? " \u2014 " : "",
			d->m->nstacks);
		for (size_t j = 0; j < d->n; j++) {
			uint64_t sum = 0, c[FORMAT_MAX_COUNTERS];

			for (size_t i = 0; i < d->m->nstacks; i++)
				sum += export_value(d, export_counts(d, i, c), j);
			fprintf(fm, "%s %s %" PRIu64 "%s%s", j ? "," : ";", d->c[j].name, sum,
				strcmp(d->c[j].unit, "count") ? " " : "",
				strcmp(d->c[j].unit, "count") ? d->c[j].unit : "");
		}
		if (fclose(fm) != 0)
			return -1;
	}
	info.title = title;
	info.facts = facts;
	info.tables = tables;
	info.dflt = k;
	rc = export_html(d, &info, f);
	free(tables);
	free(title);
	free(facts);
	return rc;
}

#define EXPORT_USAGE                                                                           \
	"export --format folded|pprof|html [--counter NAME] [--diff-base BASE] [--full-names] "  \
	"[--alloc-fn NAME]... [-o OUT] [a.out] [DATA]"

static void help(const char *default_data)
{
	printf("usage: %s " EXPORT_USAGE "\n"
	       "Writes the profile in DATA (default %s) for other tools:\n"
	       "  --format folded   a line per distinct stack of names: main;f;g 1234\n"
	       "                    (flamegraph.pl, speedscope, inferno)\n"
	       "  --format pprof    pprof's profile.proto, gzip'd (binary: give -o, or redirect)\n"
	       "  --format html     one page that opens offline: flame graphs, functions,\n"
	       "                    callees and callers\n"
	       "  --counter NAME    the counter written (folded), or shown first\n"
	       "  --diff-base BASE  pprof: BASE's samples negated, for pprof's diff view\n"
	       "  --full-names      C++ names as demangled, in full\n"
	       "  --alloc-fn NAME   an allocator wrapper: each stack ends at its caller\n"
	       "                    (folded, html; as memcheck's --alloc-fn)\n"
	       "  -o OUT            write OUT (whole, through a temporary beside it)\n",
	       util_progname, default_data);
}

int export_main(int argc, char **argv, const char *default_data)
{
	const char *format = NULL, *counter = NULL, *out = NULL, *exe = NULL, *data = NULL;
	const char *base_path = NULL, **alloc_fns = NULL;
	size_t nalloc_fns = 0;
	struct profile bp;
	struct symbols *bsy = NULL;
	struct model bm;
	struct export_data bd;
	const char *args[2], *why;
	char err[256], exebuf[PATH_MAX], tmp[PATH_MAX + 64];
	int nargs = 0, rc, k, full = 0;
	struct profile p;
	struct symbols *sy;
	struct model m;
	struct export_data d;
	FILE *f = stdout;

	for (int i = 1; i < argc; i++) {
		if ((!strcmp(argv[i], "--format") || !strcmp(argv[i], "-f")) && i + 1 < argc) {
			format = argv[++i];
		} else if (!strncmp(argv[i], "--format=", 9)) {
			format = argv[i] + 9;
		} else if (!strcmp(argv[i], "--counter") && i + 1 < argc) {
			counter = argv[++i];
		} else if (!strcmp(argv[i], "-o") && i + 1 < argc) {
			out = argv[++i];
			if (!strcmp(out, "-")) /* standard output, as without -o */
				out = NULL;
		} else if (!strcmp(argv[i], "--diff-base") && i + 1 < argc) {
			base_path = argv[++i];
		} else if (!strcmp(argv[i], "--full-names") || !strcmp(argv[i], "-full-names")) {
			full = 1;
		} else if (((!strcmp(argv[i], "--alloc-fn") || !strcmp(argv[i], "-alloc-fn")) &&
			    i + 1 < argc) ||
			   !strncmp(argv[i], "--alloc-fn=", 11) || !strncmp(argv[i], "-alloc-fn=", 10)) {
			const char *eq = strchr(argv[i], '=');

			if (!alloc_fns)
				alloc_fns = xcalloc((size_t)argc + 1, sizeof(*alloc_fns));
			alloc_fns[nalloc_fns++] = eq ? eq + 1 : argv[++i];
		} else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			help(default_data);
			return 0;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			die("export: unknown option '%s' (usage: %s %s)", argv[i], util_progname,
			    EXPORT_USAGE);
		} else if (nargs == 2) {
			die("export: too many arguments (usage: %s %s)", util_progname, EXPORT_USAGE);
		} else {
			args[nargs++] = argv[i];
		}
	}
	if (!format)
		die("export: --format is needed (usage: %s %s)", util_progname, EXPORT_USAGE);
	if (strcmp(format, "folded") && strcmp(format, "pprof") && strcmp(format, "html"))
		die("export: unknown format '%s' (folded, pprof, html)", format);
	/* pprof's samples are the file's own frames: pprof's -prune_from
	 * drops what is inside a function there. */
	if (nalloc_fns && !strcmp(format, "pprof"))
		die("export: --alloc-fn is for folded and html (pprof: -prune_from=NAME keeps NAME "
		    "and drops what it calls)");
	launch_operands(args, nargs, &exe, &data);
	if (!data)
		data = default_data;
	if (reader_load(data, &p, err, sizeof(err)) < 0)
		die("%s: %s", data, err);
	if (exe) {
		if (launch_find_exe(exe, reader_info(&p, "exe"), exebuf, sizeof(exebuf), &why) < 0)
			die("%s: %s", exe, why);
		exe = exebuf;
	}
	sy = symbols_open(&p, exe);
	if (!sy)
		die("out of memory opening symbols");
	symbols_full_names(sy, full);
	/* A base first: each side's Python functions are named as both
	 * sides' files need (model.peer). */
	if (base_path) {
		if (strcmp(format, "pprof"))
			die("export: --diff-base is for --format pprof");
		if (reader_load(base_path, &bp, err, sizeof(err)) < 0)
			die("%s: %s", base_path, err);
		if (bp.kind != p.kind || bp.ncounters != p.ncounters)
			die("%s: not the same kind of profile as %s: no diff", base_path, data);
		for (size_t j = 0; j < p.ncounters; j++)
			if (strcmp(bp.counter_names[j], p.counter_names[j]))
				die("%s: other counters than %s: no diff", base_path, data);
	}
	model_init(&m);
	m.peer = base_path ? &bp : NULL;
	m.alloc_fns = alloc_fns;
	m.nalloc_fns = nalloc_fns;
	if (model_from_profile(&m, &p, sy, 0, err, sizeof(err)) < 0 ||
	    export_prepare(&d, &p, &m, err, sizeof(err)) < 0)
		die("%s: %s", data, err);
	/* Only pprof reads the file's frames again: the other formats keep
	 * the model, not the stacks it was made from. */
	if (strcmp(format, "pprof"))
		reader_drop_stacks(&p);
	d.sy = sy;
	d.full_names = full;
	if (counter) {
		k = export_find(&d, counter);
	} else {
		int other;

		k = (int)export_default(&d, &other);
		if (other)
			errx_("export: nothing is kept in %s (inuse_space is 0): this is alloc_space "
			      "(--counter NAME for another)", data);
	}
	if (k < 0) {
		char names[1024] = "";
		for (size_t j = 0; j < d.n; j++)
			snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", j ? ", " : "",
				 d.c[j].name);
		die("%s: no counter '%s' (it has %s)", data, counter, names);
	}
	if (base_path) {
		/* The a.out given is the profile's: the base's only if it
		 * is of the same build (else it is named from its own). */
		bsy = symbols_open(&bp, merge_same_program(&p, &bp) ? exe : NULL);
		if (!bsy)
			die("out of memory opening symbols");
		symbols_full_names(bsy, full);
		model_init(&bm);
		bm.peer = &p;
		if (model_from_profile(&bm, &bp, bsy, 0, err, sizeof(err)) < 0 ||
		    export_prepare(&bd, &bp, &bm, err, sizeof(err)) < 0)
			die("%s: %s", base_path, err);
		model_tell_apart_like(&bm, &m);
		bd.sy = bsy;
	}
	/* A temporary beside OUT, renamed over it when whole: never through a
	 * link another user planted (newfile.h). */
	if (out) {
		int fd = newfile_open(out, tmp, sizeof tmp);

		if (fd < 0 || !(f = fdopen(fd, "w")))
			die("export: cannot write %s: %s", out,
			    fd < 0 ? newfile_strerror(fd) : strerror(errno));
	}
	if (!out && !strcmp(format, "pprof") && isatty(fileno(f)))
		die("export: pprof's format is binary: give -o FILE, or redirect");
	if (!strcmp(format, "pprof"))
		rc = export_pprof(&d, (size_t)k, base_path ? &bd : NULL, f);
	else if (!strcmp(format, "html"))
		rc = html(&d, (size_t)k, data, f);
	else
		rc = export_folded(&d, (size_t)k, f);
	if (rc < 0 || fflush(f) != 0 || ferror(f) ||
	    (out && (fclose(f) != 0 || rename(tmp, out) < 0))) {
		int e = errno;

		if (out)
			unlink(tmp);
		die("export: write error on %s: %s", out ? out : "standard output", strerror(e));
	}
	if (base_path) {
		model_release(&bm);
		symbols_free(bsy);
		reader_release(&bp);
	}
	for (size_t i = 0; i < nalloc_fns; i++)
		if (!model_alloc_fn_used(&m, i))
			fprintf(stderr, "%s: export: --alloc-fn: no stack has a caller of '%s': nothing changed\n",
				util_progname, alloc_fns[i]);
	free(alloc_fns);
	model_release(&m);
	symbols_free(sy);
	reader_release(&p);
	return 0;
}
