/*
 * cfprof.c - the cfprof command: current-function profiles of programs
 * built with -finstrument-functions (Appel, Duba & MacQueen, 1988).
 *
 *   cfprof record ... PROG    run PROG with libcfprof.so preloaded
 *   cfprof [a.out] [data]     the flat profile (prof's layout, the paper's
 *                             section 3) and the call graph (gprof's
 *                             layout, times from the real per-path samples)
 *
 * The data are weighted stacks like cpprof's, so `cpprof` reads them too.
 */
#include "model/callpath.h"
#include "model/cfgraph.h"
#include "symbols/elfsyms.h"
#include "export/export.h"
#include "format/format.h"
#include "base/escape.h"
#include "run/launch.h"
#include "merge/merge.h"
#include "model/model.h"
#include "read/reader.h"
#include "run/record.h"
#include "symbols/symbols.h"
#include "base/util.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define USAGE                                                                                  \
	"usage: cfprof [-p | -q] [-e RESOURCE] [--full-names] [a.out] [cfprof.data]\n"       \
	"       cfprof record [-e RESOURCE[:INTERVAL]]... [--unprofiled FUNC[,FUNC]...]\n"  \
	"                     [--no-random] [-o FILE] [--] PROG [ARGS...]\n"                    \
	"       cfprof export --format folded|pprof|html [--counter NAME] [--full-names] [-o OUT]\n" \
	"                     [--diff-base BASE] [a.out] [cfprof.data]\n"                       \
	"       cfprof merge FILES... -o OUT\n"                                                  \
	"       cfprof diff [--counter NAME] [--root F] [--threshold X] [--full-names] [a.out]\n" \
	"                   BASE NEW\n"
#define RECORD_USAGE                                                                           \
	"usage: cfprof record [-e RESOURCE[:INTERVAL]]... [--unprofiled FUNC[,FUNC]...] "     \
	"[--no-random] [-o FILE] [--] PROG [ARGS...]"

/* ---- record -------------------------------------------------------------- */

/* The next name of a list (a,b,c) from *at, cut in place; NULL at its
 * end.  A comma inside <>, () or [] is the name's (a C++ name in full:
 * std::vector<int, std::allocator<int> >::push_back). */
static char *next_name(char **at)
{
	char *b = *at, *p;
	int depth = 0;

	if (!b)
		return NULL;
	for (p = b; *p && !(*p == ',' && depth == 0); p++)
		depth += (*p == '<' || *p == '(' || *p == '[') - (*p == '>' || *p == ')' || *p == ']');
	*at = *p ? p + 1 : NULL;
	*p = 0;
	return b;
}

/* The link-time addresses of the functions named in list (a,b,c) in exe,
 * as CFPROF_UNPROFILED wants them: hex, comma-separated.  A name is a
 * symbol's, or a C++ function's as the views print it, short or in full
 * (elfsyms.h). */
static void unprofiled_env(const char *exe, const char *list, char *out, size_t len)
{
	char *copy = xstrdup(list), *at = copy, *name;
	size_t n = 0;

	out[0] = 0;
	while ((name = next_name(&at))) {
		uint64_t a[64];
		int k;

		if (!*name)
			continue;
		k = elfsyms_functions(exe, name, a, 64);

		if (k < 0)
			die("record: --unprofiled: cannot read the symbols of %s", exe);
		if (k == 0)
			die("record: --unprofiled: no function '%s' in %s", name, exe);
		for (int j = 0; j < k; j++) {
			int w = snprintf(out + n, len - n, "%s%" PRIx64, n ? "," : "", a[j]);
			if (w < 0 || (size_t)w >= len - n)
				die("record: --unprofiled: too many functions");
			n += (size_t)w;
		}
	}
	free(copy);
}

static int cmd_record(int argc, char **argv)
{
	struct record_opts o;
	char events[1024], unprof[4096] = "", exe[PATH_MAX], unlist[4096] = "";
	const char *why;
	int i, found;

	record_init(&o, "cfprof.data", "CFPROF_");
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--")) {
			i++;
			break;
		}
		if (record_option(&o, argc, argv, &i, RECORD_USAGE))
			continue;
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			record_help(RECORD_USAGE,
				    "  --unprofiled FUNC,...   charge their time to their callers\n"
				    "Runs PROG, built with -finstrument-functions, with the\n"
				    "profiler preloaded; it writes cfprof.data (or FILE).\n");
			return 0;
		}
		if (!strcmp(a, "--unprofiled") || !strncmp(a, "--unprofiled=", 13)) {
			const char *names = a[12] == '=' ? a + 13 : NULL;
			size_t n = strlen(unlist);

			if (!names && i + 1 >= argc)
				die("record: --unprofiled needs function names");
			if (!names)
				names = argv[++i];
			if (n + strlen(names) + 2 > sizeof unlist)
				die("record: --unprofiled: too many names");
			snprintf(unlist + n, sizeof unlist - n, "%s%s", n ? "," : "", names);
		} else if (a[0] == '-') {
			die("record: unknown option '%s' (" RECORD_USAGE ")", a);
		} else {
			break;
		}
	}
	if (i >= argc)
		die("record: no program given (" RECORD_USAGE ")");
	/* An ELF program that never calls the hooks cannot be profiled so;
	 * a script may run one that does. */
	found = launch_find_exe(argv[i], NULL, exe, sizeof exe, &why) == 0;
	if (found && launch_is_elf(exe) && elfsyms_mentions(exe, "__cyg_profile_func_enter") == 0)
		die("record: %s is not built with -finstrument-functions (it never calls "
		    "__cyg_profile_func_enter): rebuild it so, or sample it with cpprof record",
		    argv[i]);
	if (unlist[0]) {
		if (!found || !launch_is_elf(exe))
			die("record: --unprofiled: %s is not an ELF program whose functions can be "
			    "named", argv[i]);
		unprofiled_env(exe, unlist, unprof, sizeof unprof);
	}
	record_events(&o, events, sizeof events);
	{
		const char *env[] = { "CFPROF_EVENTS", events, "CFPROF_UNPROFILED", unprof,
				      "CFPROF_RANDOM", "0", NULL };
		struct launch l = { "record", "CFPROF_LIB", "libcfprof.so", o.out, "CFPROF_OUT",
				    "CFPROF_ROOT_PID", env, "CFPROF_KEEP" };
		char err[512];
		int st;

		if (o.random)
			env[4] = NULL; /* CFPROF_RANDOM only with --no-random */
		st = launch_run(&l, argv + i, err, sizeof(err));
		if (st < 0)
			die("record: %s", err);
		return st;
	}
}

/* ---- display ------------------------------------------------------------- */

struct view {
	struct profile p;
	struct symbols *sy;
	struct model m;
	const char *res;   /* the resource shown */
	uint64_t interval; /* gticks per sample */
	int time;          /* its gticks are nanoseconds */
	uint64_t *w, *calls;
	struct cp_input in;
	struct cfg g;
};

static uint32_t stack_fns(const void *ctx, size_t i, uint32_t *out)
{
	const struct view *v = ctx;
	uint32_t n = model_path(&v->m, &v->m.stacks[i], out);

	for (uint32_t j = 0; j < n; j++)
		out[j] = v->m.sites[out[j]].fn;
	return n;
}

/* Seconds (or the resource's units) for some hits. */
static double amount(const struct view *v, uint64_t hits)
{
	double x = (double)hits * (double)v->interval;
	return v->time ? x / 1e9 : x;
}

static const char *name_of(const struct view *v, uint32_t id)
{
	return strtab_get(v->m.fns, id);
}

static int by_self(const void *a, const void *b, void *ctx)
{
	const struct view *v = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	/* The (unprofiled) line is id nids: its self is g.unprofiled. */
	uint64_t sx = x == v->g.nids ? v->g.unprofiled : v->g.fn[x].self;
	uint64_t sy = y == v->g.nids ? v->g.unprofiled : v->g.fn[y].self;
	uint64_t cx = x == v->g.nids ? 0 : v->g.fn[x].calls, cy = y == v->g.nids ? 0 : v->g.fn[y].calls;

	if (sx != sy)
		return sx > sy ? -1 : 1;
	if (cx != cy)
		return cx > cy ? -1 : 1;
	return x < y ? -1 : x > y;
}

static void flat(struct view *v)
{
	uint32_t *ids = xcalloc(v->g.nids + 2, sizeof(uint32_t));
	size_t n = 0;
	double cum = 0;
	uint64_t calls = 0;

	for (uint32_t id = 0; id < v->g.nids; id++) {
		calls += v->g.fn[id].calls;
		if (v->g.fn[id].self || v->g.fn[id].calls)
			ids[n++] = id;
	}
	if (v->g.unprofiled || !n)
		ids[n++] = (uint32_t)v->g.nids;
	qsort_r(ids, n, sizeof(uint32_t), by_self, v);
	printf("Flat profile of %s: %" PRIu64 " samples, one every %" PRIu64 " %s; %" PRIu64
	       " calls\n",
	       v->res, v->g.total, v->interval, v->time ? "ns" : "events", calls);
	if (reader_ended(&v->p)) {
		fputs("run ended: ", stdout);
		escape_put(stdout, reader_ended(&v->p));
		putchar('\n');
	}
	putchar('\n');
	printf("%6s %8s %9s %8s  %s\n", "%time", v->time ? "cumsecs" : "cum", "#call",
	       v->time ? "ms/call" : "per/call", "name");
	for (size_t k = 0; k < n; k++) {
		uint32_t id = ids[k];
		uint64_t self = id == v->g.nids ? v->g.unprofiled : v->g.fn[id].self;
		uint64_t c = id == v->g.nids ? 0 : v->g.fn[id].calls;
		double pct = v->g.total ? 100.0 * (double)self / (double)v->g.total : 0;
		char per[32] = "";

		cum += amount(v, self);
		/* prof's three decimals; a smaller figure to its third
		 * significant digit rather than 0.000, in decimals too
		 * (test's 0.00000580 ms a call, not 5.8e-06 among 8.476s). */
		if (c) {
			double x = v->time ? amount(v, self) * 1000 / (double)c
					   : amount(v, self) / (double)c;
			int d = 3;

			while (x > 0 && x < 0.001 && d < 12 && x < pow(10, 2 - d))
				d++;
			snprintf(per, sizeof per, "%.*f", d, x);
		}
		printf("%6.1f %8.2f %9" PRIu64 " %8s  %s\n", pct, cum, c, per,
		       id == v->g.nids ? "(unprofiled)" : name_of(v, id));
	}
	free(ids);
}

static void edge_line(const struct view *v, const struct cfg_edge *e, uint32_t other,
		      uint64_t of)
{
	char called[64];

	snprintf(called, sizeof called, "%" PRIu64 "/%" PRIu64, e->calls, of);
	printf("%6s %6s %8.2f %9.2f %17s    %s [%u]\n", "", "", amount(v, e->self),
	       amount(v, e->incl - e->self), called, name_of(v, other), v->g.fn[other].index);
}

/* Edges g->edge[*x], *y: the larger share first (the time on the call's
 * paths), then the more calls, then by the functions' ids, as mprof's
 * call graph orders its rows (gprof's children too). */
static int by_edge_time(const void *x, const void *y, void *arg)
{
	const struct cfg *g = arg;
	const struct cfg_edge *a = &g->edge[*(const size_t *)x], *b = &g->edge[*(const size_t *)y];

	if (a->incl != b->incl)
		return a->incl > b->incl ? -1 : 1;
	if (a->calls != b->calls)
		return a->calls > b->calls ? -1 : 1;
	if (a->from != b->from)
		return a->from < b->from ? -1 : 1;
	return a->to < b->to ? -1 : a->to > b->to;
}

/* The n edges g->edge[into[first + j]] (into NULL: [first + j]), by_edge_time's order, in
 * *buf (grown as needed). */
static size_t *edges_sorted(const struct cfg *g, size_t first, size_t n, const uint32_t *into,
			    size_t **buf, size_t *cap)
{
	util_grow(buf, cap, n + 1, sizeof **buf);
	for (size_t j = 0; j < n; j++)
		(*buf)[j] = into ? into[first + j] : first + j;
	qsort_r(*buf, n, sizeof **buf, by_edge_time, (void *)g);
	return *buf;
}

static void graph(struct view *v)
{
	const struct cfg *g = &v->g;
	size_t *es = NULL, ecap = 0;

	printf("Call graph of %s: self and children from the samples of each call path, not\n"
	       "apportioned by call counts\n\n",
	       v->res);
	printf("%-6s %6s %8s %9s %17s    %s\n", "index", "%time", "self", "children", "called",
	       "name");
	printf("-----------------------------------------------\n");
	for (size_t k = 0; k < g->norder; k++) {
		uint32_t id = g->order[k];
		const struct cfg_fn *f = &g->fn[id];
		size_t first, n;
		char called[64], idx[16];

		n = cfg_callers(g, id, &first);
		if (f->spont)
			printf("%6s %6s %8s %9s %17" PRIu64 "    <spontaneous>\n", "", "", "", "",
			       f->spont);
		edges_sorted(g, first, n, g->into, &es, &ecap);
		for (size_t j = 0; j < n; j++) {
			const struct cfg_edge *e = &g->edge[es[j]];
			if (e->from != id)
				edge_line(v, e, e->from, f->calls - f->rcalls);
		}
		if (f->rcalls)
			snprintf(called, sizeof called, "%" PRIu64 "+%" PRIu64, f->calls - f->rcalls,
				 f->rcalls);
		else
			snprintf(called, sizeof called, "%" PRIu64, f->calls);
		snprintf(idx, sizeof idx, "[%u]", f->index);
		printf("%-6s %6.1f %8.2f %9.2f %17s    %s [%u]\n", idx,
		       g->total ? 100.0 * (double)f->incl / (double)g->total : 0, amount(v, f->self),
		       amount(v, f->incl - f->self), called, name_of(v, id), f->index);
		n = cfg_callees(g, id, &first);
		edges_sorted(g, first, n, NULL, &es, &ecap);
		for (size_t j = 0; j < n; j++) {
			const struct cfg_edge *e = &g->edge[es[j]];
			if (e->to != id)
				edge_line(v, e, e->to, g->fn[e->to].calls - g->fn[e->to].rcalls);
		}
		printf("-----------------------------------------------\n");
	}
	free(es);
}

static void usage(FILE *f)
{
	fputs(USAGE "Prints the flat profile and the call graph of cfprof.data (-p: the flat\n"
		    "profile only, -q: the call graph only) for RESOURCE (default: the first\n"
		    "sampled, cpu).  record runs PROG, built with -finstrument-functions, with\n"
		    "the profiler preloaded and writes cfprof.data (or FILE).  C++ names are\n"
		    "short (std::vector::push_back) unless --full-names.\n",
	      f);
}

int main(int argc, char **argv)
{
	static struct view v;
	const char *exe = NULL, *data = NULL, *args[2], *want = NULL, *why;
	int nargs = 0, show_flat = 1, show_graph = 1, col = -1, calls_col, full = 0;
	char err[256], exebuf[PATH_MAX];

	util_progname = "cfprof";
	if (argc > 1 && strcmp(argv[1], "record") == 0)
		return cmd_record(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "export") == 0)
		return export_main(argc - 1, argv + 1, "cfprof.data");
	if (argc > 1 && strcmp(argv[1], "merge") == 0)
		return merge_main(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "diff") == 0)
		return export_diff_main(argc - 1, argv + 1, 0);
	util_no_command(argc, argv, "record, export, merge, diff");
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-p") || !strcmp(argv[i], "--flat")) {
			show_graph = 0;
		} else if (!strcmp(argv[i], "-q") || !strcmp(argv[i], "--graph")) {
			show_flat = 0;
		} else if (!strcmp(argv[i], "-e")) {
			if (i + 1 >= argc)
				die("-e needs a resource");
			want = argv[++i];
		} else if (!strcmp(argv[i], "--full-names") || !strcmp(argv[i], "-full-names")) {
			full = 1;
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return 0;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			die("unknown option '%s' (cfprof --help)", argv[i]);
		} else if (nargs == 2) {
			die("too many arguments (cfprof --help)");
		} else {
			args[nargs++] = argv[i];
		}
	}
	if (!show_flat && !show_graph)
		die("-p (the flat profile only) and -q (the call graph only) exclude each other: "
		    "give neither for both");
	launch_operands(args, nargs, &exe, &data);
	if (!data && access("cfprof.data", F_OK) != 0 && errno == ENOENT)
		die("no cfprof.data here: give the profile's file (cfprof record PROG writes cfprof.data)");
	if (!data)
		data = "cfprof.data";
	if (reader_load(data, &v.p, err, sizeof(err)) < 0)
		die("%s: %s", data, err);
	if (v.p.kind != FORMAT_KIND_CFPROF)
		die("%s: not a cfprof profile (%s): read it with %s", data,
		    v.p.kind == FORMAT_KIND_MPROF ? "an mprof allocation profile" : "a cpprof sample profile",
		    v.p.kind == FORMAT_KIND_MPROF ? "mprof" : "cpprof");
	calls_col = reader_counter(&v.p, "calls");
	if (calls_col < 0)
		die("%s: corrupt: a cfprof profile without its 'calls' counter", data);
	for (size_t k = 0; k < v.p.ncounters && col < 0; k++)
		if ((int)k != calls_col && (!want || !strcmp(v.p.counter_names[k], want)))
			col = (int)k;
	if (col < 0) {
		if (want) {
			char names[1024] = "";

			for (size_t k = 0; k < v.p.ncounters; k++)
				if ((int)k != calls_col)
					snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s",
						 names[0] ? ", " : "", v.p.counter_names[k]);
			die("%s: no resource '%s' in this profile (it has %s)", data, want,
			    names[0] ? names : "none sampled");
		}
		die("%s: no sampled resource in this profile", data);
	}
	if (exe) {
		if (launch_find_exe(exe, reader_info(&v.p, "exe"), exebuf, sizeof(exebuf), &why) < 0)
			die("%s: %s", exe, why);
		exe = exebuf;
	}
	v.sy = symbols_open(&v.p, exe);
	if (!v.sy)
		die("out of memory opening symbols");
	symbols_full_names(v.sy, full);
	model_init(&v.m);
	if (model_from_profile(&v.m, &v.p, v.sy, 0, err, sizeof(err)) < 0)
		die("%s: %s", data, err);
	v.res = v.p.counter_names[col];
	{
		char key[300];
		const char *iv;
		snprintf(key, sizeof key, "interval.%s", v.res);
		iv = reader_info(&v.p, key);
		v.interval = iv ? strtoull(iv, NULL, 10) : 1;
		if (!v.interval)
			v.interval = 1;
		v.time = !strcmp(v.res, "cpu") || !strcmp(v.res, "real") || !strcmp(v.res, "io-time");
	}
	v.w = xcalloc(v.m.nstacks + 1, sizeof(uint64_t));
	v.calls = xcalloc(v.m.nstacks + 1, sizeof(uint64_t));
	for (size_t i = 0; i < v.m.nstacks; i++) {
		uint64_t c[FORMAT_MAX_COUNTERS];

		model_counts(&v.m, &v.m.stacks[i], c);
		v.w[i] = c[col];
		v.calls[i] = c[calls_col];
	}
	v.in.nstacks = v.m.nstacks;
	v.in.weight = v.w;
	v.in.calls = v.calls;
	v.in.path = stack_fns;
	v.in.ctx = &v;
	v.in.maxn = v.m.maxn;
	v.in.nids = strtab_count(v.m.fns);
	cfg_build(&v.in, &v.g);
	if (show_flat)
		flat(&v);
	if (show_flat && show_graph)
		printf("\n");
	if (show_graph)
		graph(&v);
	if (fflush(stdout) != 0)
		die("write error on standard output: %s", strerror(errno));
	return 0;
}
