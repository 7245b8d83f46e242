/*
 * cpprof.c - the cpprof command: call path profiles of monotonic resources
 * (Hall & Goldberg, USENIX 1993), in the paper's command loop.
 *
 * Reads cpprof.data (sampled resources) and mprof.data (every allocation:
 * resources alloc-bytes, alloc-count, kept-bytes) alike: both are weighted
 * stacks.  Commands come from -c 'cmd; cmd', from standard input when it is
 * not a terminal, else from an interactive libedit loop with history and
 * tab completion of commands and function names.
 */
#include "model/callpath.h"
#include "export/export.h"
#include "format/format.h"
#include "base/escape.h"
#include "run/launch.h"
#include "model/lispview.h"
#include "merge/merge.h"
#include "model/model.h"
#include "model/root.h"
#include "read/reader.h"
#include "run/record.h"
#include "resources.h"
#include "symbols/symbols.h"
#include "base/util.h"

#include <editline/readline.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct resource {
	char *name;
	const char *title;
	uint64_t interval; /* gticks per sample */
	uint64_t *w;       /* hits per model stack */
	uint64_t total;
};

struct session {
	struct profile p;
	struct symbols *sy;
	struct model m;
	struct resource *res;
	size_t nres, cur;
	uint64_t *calls; /* cfprof data: exact calls per stack, else NULL */
	char *root;
	double threshold;
	int sites;
	uint32_t *same; /* with sites on: each site's first site printed the
			 * same (two calls on one line are one site), made
			 * on first use (site_ids), NULL until then */
	int full_names; /* C++ names as demangled, not simplified */
	int failed; /* a batch command failed: exit 2 */
};

static struct session *S; /* for the completion callbacks */

static const struct {
	const char *name, *title;
} titles[] = {
	{ "cpu", "CPU Time" },
	{ "real", "Real Time" },
	{ "page-faults", "Page Faults" },
	{ "minor-faults", "Minor Page Faults" },
	{ "major-faults", "Major Page Faults" },
	{ "context-switches", "Context Switches" },
	{ "syscalls", "System Calls" },
	{ "read-bytes", "Bytes Read" },
	{ "write-bytes", "Bytes Written" },
	{ "io-time", "I/O Time" },
	{ "fp-exceptions", "Floating Point Exceptions" },
	{ "alloc-bytes", "Allocated Bytes" },
	{ "alloc-count", "Allocations" },
	{ "kept-bytes", "Kept Bytes" },
};

static const char *title_of(const char *name)
{
	for (size_t i = 0; i < sizeof(titles) / sizeof(titles[0]); i++)
		if (strcmp(titles[i].name, name) == 0)
			return titles[i].title;
	return name;
}

static struct resource *add_res(struct session *s, const char *name, uint64_t interval)
{
	struct resource *r;

	s->res = xrealloc(s->res, (s->nres + 1) * sizeof(*s->res));
	r = &s->res[s->nres++];
	r->name = xstrdup(name);
	r->title = title_of(name);
	r->interval = interval ? interval : 1;
	r->w = xcalloc(s->m.nstacks + 1, sizeof(uint64_t));
	r->total = 0;
	return r;
}

/* Resources: allocation data yields three; sample data one per counter. */
static void make_resources(struct session *s)
{
	const struct model *m = &s->m;

	if (s->p.kind == FORMAT_KIND_MPROF) {
		struct resource *b, *n, *k;

		/* add_res moves the array: take the pointers once all are in. */
		add_res(s, "alloc-bytes", 1);
		add_res(s, "alloc-count", 1);
		add_res(s, "kept-bytes", 1);
		b = &s->res[s->nres - 3];
		n = &s->res[s->nres - 2];
		k = &s->res[s->nres - 1];
		for (size_t i = 0; i < m->nstacks; i++) {
			uint64_t ctr[FORMAT_MAX_COUNTERS];
			const uint64_t *c = model_counts(m, &m->stacks[i], ctr);
			b->w[i] = model_bytes(c);
			n->w[i] = model_allocs(c);
			k->w[i] = model_bytes(c) - model_freed(c);
		}
	} else {
		for (size_t k = 0; k < m->nc; k++) {
			uint64_t ctr[FORMAT_MAX_COUNTERS];
			char key[300];
			const char *iv;
			struct resource *r;

			/* cfprof's exact call counts are not a sampled
			 * resource: every view shows them beside the hits. */
			if (s->p.kind == FORMAT_KIND_CFPROF && !strcmp(s->p.counter_names[k], "calls")) {
				s->calls = xcalloc(m->nstacks + 1, sizeof(uint64_t));
				for (size_t i = 0; i < m->nstacks; i++)
					s->calls[i] = model_counts(m, &m->stacks[i], ctr)[k];
				continue;
			}

			snprintf(key, sizeof(key), "interval.%s", s->p.counter_names[k]);
			iv = reader_info(&s->p, key);
			r = add_res(s, s->p.counter_names[k], iv ? strtoull(iv, NULL, 10) : 1);
			for (size_t i = 0; i < m->nstacks; i++)
				r->w[i] = model_counts(m, &m->stacks[i], ctr)[k];
		}
	}
	for (size_t k = 0; k < s->nres; k++)
		for (size_t i = 0; i < m->nstacks; i++)
			s->res[k].total += s->res[k].w[i];
}

static size_t nids(const struct session *s)
{
	return s->sites ? s->m.nsites : strtab_count(s->m.fns);
}

/* The printed name of an id: a function, or with sites on a call site. */
static const char *id_name(const struct session *s, uint32_t id, char *buf, size_t len)
{
	const struct model_site *x;

	if (!s->sites)
		return strtab_get(s->m.fns, id);
	x = &s->m.sites[id];
	if (x->loc != MODEL_NO_LOC)
		snprintf(buf, len, "%s@%s", strtab_get(s->m.fns, x->fn), strtab_get(s->m.locs, x->loc));
	else if (x->offset != MODEL_NO_OFFSET)
		snprintf(buf, len, "%s+%u", strtab_get(s->m.fns, x->fn), x->offset);
	else
		snprintf(buf, len, "%s", strtab_get(s->m.fns, x->fn));
	return buf;
}

/* Sites are printed the same when their functions are, and their
 * file:line (or, without one, their offsets). */
static int site_cmp(const void *a, const void *b, void *ctx)
{
	const struct model_site *x = &((const struct session *)ctx)->m.sites[*(const uint32_t *)a];
	const struct model_site *y = &((const struct session *)ctx)->m.sites[*(const uint32_t *)b];
	uint32_t xo = x->loc == MODEL_NO_LOC ? x->offset : 0;
	uint32_t yo = y->loc == MODEL_NO_LOC ? y->offset : 0;

	if (x->fn != y->fn)
		return x->fn < y->fn ? -1 : 1;
	if (x->loc != y->loc)
		return x->loc < y->loc ? -1 : 1;
	if (xo != yo)
		return xo < yo ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

/* s->same, made: sorted by how they print, each group's first id. */
static void site_ids(struct session *s)
{
	uint32_t *order = xcalloc(s->m.nsites + 1, sizeof *order);

	s->same = xcalloc(s->m.nsites + 1, sizeof *s->same);
	for (size_t i = 0; i < s->m.nsites; i++)
		order[i] = (uint32_t)i;
	qsort_r(order, s->m.nsites, sizeof *order, site_cmp, s);
	for (size_t i = 0, first = 0; i < s->m.nsites; i++) {
		if (i) {
			const struct model_site *x = &s->m.sites[order[first]], *y = &s->m.sites[order[i]];
			if (x->fn != y->fn || x->loc != y->loc ||
			    (x->loc == MODEL_NO_LOC && x->offset != y->offset))
				first = i;
		}
		s->same[order[i]] = order[first];
	}
	free(order);
}

/* callpath's view of a stack: its sites (those printed the same as one),
 * or with sites off their functions. */
static uint32_t stack_ids(const void *ctx, size_t i, uint32_t *out)
{
	const struct session *s = ctx;
	uint32_t n = model_path(&s->m, &s->m.stacks[i], out);

	for (uint32_t j = 0; j < n; j++)
		out[j] = s->sites ? s->same[out[j]] : s->m.sites[out[j]].fn;
	return n;
}

/*
 * The input of every view.  A view may make at most max_paths call paths:
 * downward profiles and the tree make one per model node at most (the
 * synthetic 1M-stack profile's tree: 13M paths of 22M nodes and stacks),
 * upward ones may make one per frame walked, the square of a chain's
 * depth.  The bound is the more of that and what the file's budget (64
 * bytes a byte and 16 MB, doc/format.md) pays for at ~60 bytes a path:
 * a small file cannot ask for gigabytes, and a legitimate upward view of
 * a 400-deep chain (80k paths from 14 KB) is shown.
 */
static void input_of(const struct session *s, struct cp_input *in)
{
	in->nstacks = s->m.nstacks;
	in->weight = s->res[s->cur].w;
	in->path = stack_ids;
	in->ctx = s;
	in->maxn = s->m.maxn;
	in->nids = nids(s);
	in->calls = s->calls;
	in->max_paths = s->m.nnodes + s->m.nstacks + (1u << 16);
	if (in->max_paths < (64 * s->p.size + (16u << 20)) / 60)
		in->max_paths = (64 * s->p.size + (16u << 20)) / 60;
}

/*
 * The ids a root name stands for: the function of that name, or those its
 * C++ name stands for in the other form (model_find_fns: a full name
 * among short ones, every instantiation of a short one among full ones);
 * failing that, the functions whose entry address carries that name among
 * its aliases (read and __libc_read).  NULL (and a message) if none.
 */
/* Whether some stack's frame is in a function fnset marks. */
static int on_a_stack(const struct model *m, const uint8_t *fnset)
{
	for (size_t k = 0; k < m->nnodes; k++)
		if (fnset[m->sites[m->site[k]].fn])
			return 1;
	return 0;
}

/* The outermost functions of the stacks, up to four, ", "-separated in
 * buf (for the message of a profile without main: a stripped program). */
static void outermost(const struct session *s, char *buf, size_t len)
{
	uint32_t seen[4];
	size_t n = 0, at = 0;

	buf[0] = 0;
	for (size_t r = 0; r < s->m.nruns && n < 4; r++) {
		uint32_t fn;
		size_t k;

		if (s->m.runs[r].parent != MODEL_NONE)
			continue;
		fn = s->m.sites[s->m.site[s->m.runs[r].first]].fn;
		for (k = 0; k < n && seen[k] != fn; k++)
			;
		if (k < n)
			continue;
		seen[n++] = fn;
		at += (size_t)snprintf(buf + at, at < len ? len - at : 0, "%s%s", n > 1 ? ", " : "",
				       strtab_get(s->m.fns, fn));
		if (at >= len)
			break;
	}
}

static uint8_t *root_set(struct session *s, const char *name)
{
	size_t n = nids(s), hits = 0;
	uint8_t *set, *fnset;

	if (!name && !s->m.nnodes) /* no stack at all: an empty profile, as function prints */
		return xcalloc(n + 1, 1);
	if (!name) { /* no main in the profile, and none given */
		char out[256];

		outermost(s, out, sizeof out);
		errx_("no root function: no stack passes through main%s%s%s; give one (root "
		      "FUNCTION, or down FUNCTION)",
		      out[0] ? " (the outermost functions: " : "", out, out[0] ? ")" : "");
		return NULL;
	}
	set = xcalloc(n + 1, 1);
	fnset = xcalloc(strtab_count(s->m.fns) + 1, 1);
	if (!model_find_fns(&s->m, name, fnset)) {
		uint64_t addrs[64];
		size_t na = symbols_addrs_of(s->sy, name, addrs, 64);
		for (size_t i = 0; i < s->m.nsites; i++)
			for (size_t k = 0; k < na; k++)
				if (s->m.sites[i].func_addr == addrs[k])
					fnset[s->m.sites[i].fn] = 1;
	}
	for (size_t id = 0; id < n; id++) {
		uint32_t f = s->sites ? s->m.sites[id].fn : (uint32_t)id;
		set[id] = fnset[f];
		hits += set[id];
	}
	if (hits && !on_a_stack(&s->m, fnset))
		hits = 0; /* a name the model knows (main) but no frame has */
	free(fnset);
	if (!hits) {
		/* main asked for, in a stripped program: its main has an
		 * address for a name, the default root (model_default_root). */
		int named = !strcmp(name, "main") && s->root && strcmp(s->root, "main");

		errx_("no function named '%s' in this profile%s%s%s", name,
		      named ? " (the program has no symbols: its main is " : "",
		      named ? s->root : "", named ? ", the default root)" : "");
		free(set);
		return NULL;
	}
	return set;
}

static void header(const struct session *s, const char *what, const char *format)
{
	const struct resource *r = &s->res[s->cur];

	printf("%s for resource: %s\n", what, r->title);
	printf("%" PRIu64 " samples, sampled every %" PRIu64 " gticks\n", r->total, r->interval);
	if (reader_ended(&s->p)) {
		fputs("run ended: ", stdout);
		escape_put(stdout, reader_ended(&s->p));
		putchar('\n');
	}
	printf("format: %s%s\n", format, s->calls ? " {#calls}" : "");
	printf("-----------------------------------------------------\n");
}

static void footer(size_t hidden, double threshold)
{
	printf("-----------------------------------------------------\n");
	if (hidden)
		printf("(%zu %s below the threshold %g not shown)\n", hidden,
		       hidden == 1 ? "entry" : "entries", threshold);
}

/* The end of an entry's line: its exact calls, for cfprof data. */
static void print_calls(const struct session *s, const struct cp_entry *e)
{
	if (s->calls)
		printf(" {%" PRIu64 " %s}", e->calls, e->calls == 1 ? "call" : "calls");
	putchar('\n');
}

static void print_paths(struct session *s, const struct cp_result *r, int tree)
{
	char buf[1024];
	size_t hidden = 0;
	uint32_t *path = xcalloc((size_t)r->maxlen + 1, sizeof(uint32_t));

	for (size_t i = 0; i < r->n; i++) {
		const struct cp_entry *e = &r->e[i];
		double frac = r->total ? (double)e->hits / (double)r->total : 0;

		if (frac < s->threshold) {
			hidden++;
			continue;
		}
		callpath_path(r, e, path);
		if (tree) {
			printf("%*s%s (%.5f) [%" PRIu64 "]", 2 * (int)e->depth, "",
			       id_name(s, path[e->len - 1], buf, sizeof(buf)), frac, e->hits);
		} else {
			printf("%.5f (", frac);
			for (uint32_t j = 0; j < e->len; j++)
				printf("%s%s", j ? " " : "", id_name(s, path[j], buf, sizeof(buf)));
			printf(") [%" PRIu64 "]", e->hits);
		}
		print_calls(s, e);
	}
	footer(hidden, s->threshold);
	free(path);
}

/*
 * body (jit): samples in code no module holds are a JIT's, as a rule,
 * printed as bare addresses (javac: 40% of them): said below, with what
 * names them, unless the process's perf map was read.
 */
static void print_flat(struct session *s, const struct cp_result *r, int jit)
{
	char buf[1024];
	size_t hidden = 0;
	uint64_t bare = 0;

	for (size_t i = 0; i < r->n; i++) {
		double frac = r->total ? (double)r->e[i].hits / (double)r->total : 0;
		const char *name = id_name(s, r->e[i].node, buf, sizeof(buf));

		if (!strncmp(name, "0x", 2))
			bare += r->e[i].hits;
		if (frac < s->threshold) {
			hidden++;
			continue;
		}
		printf("%.5f %s [%" PRIu64 "]", frac, name, r->e[i].hits);
		print_calls(s, &r->e[i]);
	}
	footer(hidden, s->threshold);
	if (jit && r->total && (double)bare / (double)r->total >= 0.01 && !symbols_has_perfmap(s->sy))
		printf("(%.0f%% of the samples are in code no module holds, a JIT's as a rule: its "
		       "perf map names it, /tmp/perf-PID.map, as node --perf-basic-prof and java "
		       "-XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit write one)\n",
		       100.0 * (double)bare / (double)r->total);
}

enum view { V_DOWN, V_UP, V_FUNCTION, V_BODY, V_TREE };

/*
 * Samples in stacks cut short (their outer callers not recorded: deeper
 * than the recorder keeps, a Python recursion of 3,000 frames, or a walk
 * that could not go on): said below the profiles that count callers, whose
 * shares of those callers are low by as much.
 */
static void cut_note(const struct session *s)
{
	const uint64_t *w = s->res[s->cur].w;
	uint64_t cut = 0, all = 0;

	for (size_t i = 0; i < s->m.nstacks; i++) {
		all += w[i];
		if (s->m.stacks[i].cut)
			cut += w[i];
	}
	if (all && (double)cut / (double)all >= 0.001)
		printf("(%.1f%% of the samples are in stacks cut short, deeper than the recorder "
		       "keeps (1,024 frames) or past where the walk could go: their outer callers "
		       "were not recorded, and those callers' shares here are low by as much)\n",
		       100.0 * (double)cut / (double)all);
}

/* Whether a thread's stack begins with fn, the kernel's entry into it
 * (clone, clone3), which says nothing of the thread. */
static int thread_entry(const char *fn)
{
	return strstr(fn, "clone") != NULL && strlen(fn) <= 16;
}

/* Under a downward profile whose root (set) holds under half the
 * samples: where the rest are, by the outermost functions of their
 * stacks, the ones to start from (a threaded program's workers: the
 * profile from main showed 0.05 and said nothing of the 0.95; a cfprof
 * run's, under their start routine, not start_thread). */
static void outside(const struct session *s, const struct cp_result *r, const char *root,
		    const uint8_t *set)
{
	const uint64_t *w = s->res[s->cur].w;
	size_t nf = strtab_count(s->m.fns);
	uint64_t in = 0, *by = NULL;
	uint32_t *path, top[3] = { MODEL_NONE, MODEL_NONE, MODEL_NONE };

	for (size_t i = 0; i < r->n; i++)
		if (r->e[i].len == 1)
			in += r->e[i].hits;
	if (!r->total || 2 * in >= r->total)
		return;
	printf("(%.2f of the samples are not under %s: `threads` lists the threads, "
	       "`function` shows every function",
	       (double)(r->total - in) / (double)r->total, root ? root : s->root ? s->root : "the root");
	by = xcalloc(nf + 1, sizeof(*by));
	path = xcalloc((size_t)s->m.maxn + 1, sizeof(*path));
	for (size_t i = 0; i < s->m.nstacks; i++) {
		uint32_t n = w[i] ? model_path(&s->m, &s->m.stacks[i], path) : 0, k, j = 0;

		for (k = 0; k < n && !set[s->m.sites[path[k]].fn]; k++)
			;
		if (k < n || !n)
			continue;
		while (j + 1 < n && thread_entry(strtab_get(s->m.fns, s->m.sites[path[j]].fn)))
			j++;
		/* cfprof's hooks' own time (cfprof.1) is nowhere to start. */
		if (s->calls && !strcmp(strtab_get(s->m.fns, s->m.sites[path[j]].fn),
					"__cyg_profile_func_enter"))
			continue;
		by[s->m.sites[path[j]].fn] += w[i];
	}
	for (uint32_t f = 0; f < nf; f++)
		for (int t = 0; t < 3; t++)
			if (by[f] && (top[t] == MODEL_NONE || by[f] > by[top[t]])) {
				memmove(top + t + 1, top + t, (size_t)(2 - t) * sizeof(*top));
				top[t] = f;
				break;
			}
	for (int t = 0; t < 3 && top[t] != MODEL_NONE; t++)
		printf("%s`down %s` %.2f", t ? ", " : "; outside it: ", strtab_get(s->m.fns, top[t]),
		       (double)by[top[t]] / (double)r->total);
	printf(")\n");
	free(by);
	free(path);
}

static int show(struct session *s, enum view v, const char *root)
{
	static const char *const what[] = { "down", "up", "function", "body", "tree" };
	struct cp_input in;
	struct cp_result r;
	uint8_t *set = NULL;
	int rc = 0;

	if ((v == V_DOWN || v == V_UP) && !(set = root_set(s, root)))
		return -1;
	input_of(s, &in);
	switch (v) {
	case V_DOWN:
		if ((rc = callpath_down(&in, set, &r)) < 0)
			break;
		header(s, "Downward Call Path Profile", "usage_fraction (call_path) [#raw_samples]");
		print_paths(s, &r, 0);
		outside(s, &r, root, set);
		break;
	case V_UP:
		if ((rc = callpath_up(&in, set, &r)) < 0)
			break;
		header(s, "Upward Call Path Profile", "usage_fraction (call_path) [#raw_samples]");
		print_paths(s, &r, 0);
		break;
	case V_FUNCTION:
		callpath_functions(&in, &r);
		header(s, "Body+Descendants Function Profile", "usage_fraction function_name [#raw_samples]");
		print_flat(s, &r, 0);
		break;
	case V_BODY:
		callpath_bodies(&in, &r);
		header(s, "Body Function Profile", "usage_fraction function_name [#raw_samples]");
		print_flat(s, &r, 1);
		break;
	case V_TREE:
		if ((rc = callpath_tree(&in, &r)) < 0)
			break;
		header(s, "Sample Tree Profile", "frame_designator (usage_fraction) [#raw_samples]");
		print_paths(s, &r, 1);
		break;
	}
	if (rc >= 0 && v != V_BODY)
		cut_note(s);
	if (rc < 0)
		errx_("%s: %s: over %zu call paths, more than the file's %zu bytes pay for: not "
		       "shown",
		       s->p.path, what[v], in.max_paths, s->p.size);
	else
		callpath_result_free(&r);
	free(set);
	return rc;
}

/* Samples per thread (a cpprof file's THREADS section), busiest first. */
struct thread_row {
	uint32_t tid;
	uint64_t hits;
};

static int by_hits(const void *a, const void *b)
{
	const struct thread_row *x = a, *y = b;

	if (x->hits != y->hits)
		return x->hits < y->hits ? 1 : -1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static int show_threads(struct session *s)
{
	const struct resource *r = &s->res[s->cur];
	const char *pid = reader_info(&s->p, "pid");
	struct thread_row *row;
	size_t n = 0, hidden = 0;

	if (!s->p.has_threads || s->m.nstacks != s->p.nstacks) {
		errx_("threads: this profile does not say which thread a stack was in");
		return -1;
	}
	row = xcalloc(s->p.nstacks + 1, sizeof(*row));
	for (size_t i = 0; i < s->p.nstacks; i++) {
		size_t k;
		for (k = 0; k < n && row[k].tid != s->p.stacks[i].tid; k++)
			;
		if (k == n)
			row[n++].tid = s->p.stacks[i].tid;
		row[k].hits += r->w[i];
	}
	qsort(row, n, sizeof(*row), by_hits);
	header(s, "Thread Profile", "usage_fraction thread_id [#raw_samples]");
	for (size_t k = 0; k < n; k++) {
		double frac = r->total ? (double)row[k].hits / (double)r->total : 0;
		if (frac < s->threshold || !row[k].hits) {
			hidden += row[k].hits != 0;
			continue;
		}
		printf("%.5f %" PRIu32 "%s [%" PRIu64 "]\n", frac, row[k].tid,
		       pid && strtoul(pid, NULL, 10) == row[k].tid ? " (main)" : "", row[k].hits);
	}
	footer(hidden, s->threshold);
	free(row);
	return 0;
}

static const char *const commands[] = {
	"resources", "resource", "root", "threshold", "function", "body", "down", "up",
	"tree", "threads", "sites", "full-names", "help", "quit", NULL,
};

static void help(void)
{
	printf("commands:\n"
	       "  resources            list the resources in this profile (* = current)\n"
	       "  resource NAME        profile NAME from now on\n"
	       "  root FUNCTION        root of down and up profiles (any alias of its symbol)\n"
	       "  threshold FRACTION   hide entries below FRACTION of the total (0..1)\n"
	       "  function             body + descendants of every function\n"
	       "  body                 each function's body alone\n"
	       "  down [ROOT]          downward call path profile from ROOT\n"
	       "  up [ROOT]            upward call path profile to ROOT\n"
	       "  tree                 the sample tree\n"
	       "  threads              samples per thread (cpprof record data)\n"
	       "  sites on|off         tell call sites apart (function@file:line, function+offset)\n"
	       "  full-names on|off    C++ names as demangled, with template arguments and\n"
	       "                       parameters (default off: std::vector::push_back)\n"
	       "  help                 this text\n"
	       "  quit                 leave\n"
	       "Paths are printed depth first: a path, then its extensions, each level by\n"
	       "decreasing samples; function and body profiles by decreasing samples.\n"
	       "A FUNCTION is the rest of the line (operator new); a C++ name may be typed\n"
	       "short or in full.\n");
}

static void load_model(struct session *s)
{
	char err[256];

	symbols_full_names(s->sy, s->full_names);
	model_init(&s->m);
	if (model_from_profile(&s->m, &s->p, s->sy, 0, err, sizeof(err)) < 0)
		die("%s: %s", s->p.path, err);
	make_resources(s);
	if (s->nres == 0)
		die("%s: no resources in this profile", s->p.path);
}

/* full-names on|off: the model again, with the other names (the root's
 * name still finds its function: root_set reads both forms). */
static void set_full_names(struct session *s, int on)
{
	if (on == s->full_names)
		return;
	for (size_t k = 0; k < s->nres; k++) {
		free(s->res[k].name);
		free(s->res[k].w);
	}
	free(s->res);
	free(s->calls);
	s->res = NULL;
	s->calls = NULL;
	s->nres = 0;
	model_release(&s->m);
	s->full_names = on;
	load_model(s);
	free(s->same);
	s->same = NULL;
	if (s->sites)
		site_ids(s);
}

/*
 * The rest of a command line after its first word, spaces trimmed and
 * runs of them made one, into buf: a function name, which may hold
 * spaces (operator new, (anonymous namespace)::f).
 */
static char *rest_of(const char *line, char *buf, size_t len)
{
	size_t n = 0;

	line += strspn(line, " \t\r\n");
	line += strcspn(line, " \t\r\n");
	for (const char *p = line; *p && n + 1 < len; p++) {
		if (strchr(" \t\r\n", *p)) {
			if (n && buf[n - 1] != ' ')
				buf[n++] = ' ';
		} else {
			buf[n++] = *p;
		}
	}
	while (n && buf[n - 1] == ' ')
		n--;
	buf[n] = 0;
	return buf;
}

/* Run one command line; 1 means quit. */
static int run(struct session *s, char *line)
{
	char *argv[4], *save = NULL, *tok, namebuf[4096];
	const char *name = rest_of(line, namebuf, sizeof(namebuf));
	int argc = 0;

	for (tok = strtok_r(line, " \t\r\n", &save); tok && argc < 4; tok = strtok_r(NULL, " \t\r\n", &save))
		argv[argc++] = tok;
	if (argc == 0 || argv[0][0] == '#')
		return 0;
	if (!strcmp(argv[0], "quit") || !strcmp(argv[0], "exit") || !strcmp(argv[0], "q"))
		return 1;
	if (!strcmp(argv[0], "help") || !strcmp(argv[0], "?")) {
		help();
	} else if (!strcmp(argv[0], "resources") || (!strcmp(argv[0], "resource") && argc == 1)) {
		for (size_t i = 0; i < s->nres; i++)
			printf("%c %-16s %-26s %" PRIu64 " samples, sampled every %" PRIu64 " gticks\n",
			       i == s->cur ? '*' : ' ', s->res[i].name, s->res[i].title, s->res[i].total,
			       s->res[i].interval);
	} else if (!strcmp(argv[0], "resource") && argc == 2) {
		size_t i;
		for (i = 0; i < s->nres && strcmp(s->res[i].name, argv[1]); i++)
			;
		if (i == s->nres) {
			/* Say which it has: "bad argument" sent a user who
			 * asked for real in a cpu profile to the usage. */
			char have[512];
			size_t at = 0;

			have[0] = 0;
			for (i = 0; i < s->nres && at < sizeof have; i++)
				at += (size_t)snprintf(have + at, sizeof have - at, "%s%s", i ? ", " : "",
						       s->res[i].name);
			errx_("resource: this profile has no resource '%s'; it has: %s%s", argv[1], have,
			      s->p.kind == FORMAT_KIND_CPPROF ? " (cpprof record -e NAME samples another)"
							      : "");
			goto failed;
		}
		s->cur = i;
	} else if (!strcmp(argv[0], "root") && argc >= 2) {
		uint8_t *set = root_set(s, name);
		if (!set)
			goto failed;
		free(set);
		free(s->root);
		s->root = xstrdup(name);
	} else if (!strcmp(argv[0], "threshold") && argc == 2) {
		if (util_fraction(argv[1], &s->threshold) < 0)
			goto bad_arg;
	} else if (!strcmp(argv[0], "function") && argc == 1) {
		show(s, V_FUNCTION, NULL);
	} else if (!strcmp(argv[0], "body") && argc == 1) {
		show(s, V_BODY, NULL);
	} else if (!strcmp(argv[0], "down") || !strcmp(argv[0], "up")) {
		if (show(s, argv[0][0] == 'd' ? V_DOWN : V_UP, argc >= 2 ? name : s->root) < 0)
			goto failed;
	} else if (!strcmp(argv[0], "tree") && argc == 1) {
		if (show(s, V_TREE, NULL) < 0)
			goto failed;
	} else if (!strcmp(argv[0], "threads") && argc == 1) {
		if (show_threads(s) < 0)
			goto failed;
	} else if (!strcmp(argv[0], "sites") && argc == 2 &&
		   (!strcmp(argv[1], "on") || !strcmp(argv[1], "off"))) {
		s->sites = !strcmp(argv[1], "on");
		if (s->sites && !s->same)
			site_ids(s);
	} else if (!strcmp(argv[0], "full-names") && argc == 2 &&
		   (!strcmp(argv[1], "on") || !strcmp(argv[1], "off"))) {
		set_full_names(s, !strcmp(argv[1], "on"));
	} else {
		int known = 0;
		for (int i = 0; commands[i]; i++)
			known |= !strcmp(commands[i], argv[0]);
		if (known)
			errx_("%s: wrong arguments (help shows the usage)", argv[0]);
		else
			errx_("unknown command '%s' (help lists them)", argv[0]);
		goto failed;
	}
	fflush(stdout);
	return 0;
bad_arg:
	errx_("%s: bad argument '%s' (help shows the usage)", argv[0], argv[1]);
failed:
	s->failed = 1;
	fflush(stdout);
	return 0;
}

/* ---- interactive: libedit ------------------------------------------------ */

static char *gen_command(const char *text, int state)
{
	static int i;
	size_t len = strlen(text);

	if (!state)
		i = 0;
	while (commands[i])
		if (!strncmp(commands[i++], text, len))
			return strdup(commands[i - 1]);
	return NULL;
}

static char *gen_function(const char *text, int state)
{
	static size_t i;
	size_t len = strlen(text), n = strtab_count(S->m.fns);

	if (!state)
		i = 0;
	while (i < n) {
		const char *f = strtab_get(S->m.fns, (uint32_t)i++);
		if (!strncmp(f, text, len))
			return strdup(f);
	}
	return NULL;
}

static char **complete(const char *text, int start, int end)
{
	(void)end;
	rl_attempted_completion_over = 1;
	return rl_completion_matches(text, start == 0 ? gen_command : gen_function);
}

static void interactive(struct session *s)
{
	char *line;

	rl_readline_name = "cpprof";
	rl_attempted_completion_function = complete;
	using_history();
	printf("cpprof: %zu stacks; resource %s; root %s; 'help' lists the commands\n", s->m.nstacks,
	       s->res[s->cur].name, s->root ? s->root : "(none)");
	while ((line = readline("cpprof> ")) != NULL) {
		int done;
		if (*line)
			add_history(line);
		done = run(s, line);
		free(line);
		if (done)
			break;
	}
	s->failed = 0; /* interactive mistakes were answered already */
}

/* ---- start-up ------------------------------------------------------------ */

static void usage(FILE *f)
{
	fprintf(f, "usage: cpprof [-c 'CMD; CMD...'] [--full-names] [a.out] [cpprof.data]\n"
		   "       cpprof record [-e RESOURCE[:INTERVAL]]... [-o FILE] [--no-random] [--] PROG [ARGS...]\n"
		   "       cpprof list\n"
		   "       cpprof export --format folded|pprof|html [--counter NAME] [--full-names] [-o OUT]\n"
		   "                     [--diff-base BASE] [a.out] [DATA]\n"
		   "       cpprof merge FILES... -o OUT\n"
		   "       cpprof diff [--counter NAME] [--root F] [--threshold X] [--full-names] [a.out]\n"
		   "                   BASE NEW\n"
		   "Reads cpprof.data or mprof.data and answers the call path profile commands\n"
		   "('help' lists them) from -c, from standard input, or interactively.\n"
		   "record runs PROG with the sampler preloaded and writes cpprof.data (or FILE);\n"
		   "list shows the resources this machine can sample.  C++ names are short\n"
		   "(std::vector::push_back) unless --full-names.\n");
}

/* ---- record and list: running a program under the sampler ------------- */

static const char *no_perf(void)
{
	const char *s = getenv("CPPROF_NO_PERF");
	return s && s[0] == '1' ? "CPPROF_NO_PERF" : NULL;
}

static void fmt_interval(int r, uint64_t v, char *buf, size_t len)
{
	if (!strcmp(res_table[r].unit, "ns") && v % 1000000 == 0)
		snprintf(buf, len, "%" PRIu64 "ms", v / 1000000);
	else if (!strcmp(res_table[r].unit, "ns") && v % 1000 == 0)
		snprintf(buf, len, "%" PRIu64 "us", v / 1000);
	else
		snprintf(buf, len, "%" PRIu64, v);
}

static int cmd_list(int argc, char **argv)
{
	char how[512], why[512], iv[32];
	int missing = 0;

	if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		printf("usage: cpprof list\nLists the resources this machine can sample, and why "
		       "any other cannot.\n");
		return 0;
	}
	if (argc > 1)
		die("list: no arguments expected (usage: cpprof list)");
	printf("resources sampled here (cpprof record -e NAME[:INTERVAL]):\n");
	printf("  %-17s %-9s %-9s %s\n", "name", "gtick", "default", "what; how it is sampled");
	for (int r = 0; r < RES_N; r++) {
		if (res_probe(r, no_perf(), how, sizeof how, why, sizeof why) < 0) {
			missing++;
			continue;
		}
		fmt_interval(r, res_table[r].interval, iv, sizeof iv);
		printf("  %-17s %-9s %-9s %s; %s\n", res_table[r].name, res_table[r].unit, iv,
		       res_table[r].what, how);
	}
	if (missing) {
		printf("not available here:\n");
		for (int r = 0; r < RES_N; r++)
			if (res_probe(r, no_perf(), how, sizeof how, why, sizeof why) < 0)
				printf("  %-17s %s\n", res_table[r].name, why);
	}
	return 0;
}

#define RECORD_USAGE "usage: cpprof record [-e RESOURCE[:INTERVAL]]... [-o FILE] [--no-random] [--] PROG [ARGS...]"

static int cmd_record(int argc, char **argv)
{
	struct record_opts o;
	char events[1024];
	int i;

	record_init(&o, "cpprof.data", "CPPROF_");
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
				    "Runs PROG with the sampler preloaded; it writes cpprof.data\n"
				    "(or FILE).\n");
			return 0;
		}
		if (a[0] == '-')
			die("record: unknown option '%s' (" RECORD_USAGE ")", a);
		break;
	}
	if (i >= argc)
		die("record: no program given (" RECORD_USAGE ")");
	record_events(&o, events, sizeof events);
	{
		const char *env[] = { "CPPROF_EVENTS", events, "CPPROF_RANDOM", "0", NULL };
		struct launch l = { "record", "CPPROF_LIB", "libcpprof.so", o.out, "CPPROF_OUT",
				    "CPPROF_ROOT_PID", env, "CPPROF_KEEP" };
		char err[512];
		int st;

		if (o.random)
			env[2] = NULL; /* CPPROF_RANDOM only with --no-random */
		st = launch_run(&l, argv + i, err, sizeof(err));
		if (st < 0)
			die("record: %s", err);
		return st;
	}
}

int main(int argc, char **argv)
{
	static struct session s;
	const char *cmds = NULL, *exe = NULL, *data = NULL, *args[2];
	int nargs = 0;
	char err[256], exebuf[PATH_MAX];
	const char *why;

	util_progname = "cpprof";
	if (argc > 1 && strcmp(argv[1], "record") == 0)
		return cmd_record(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "list") == 0)
		return cmd_list(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "export") == 0)
		return export_main(argc - 1, argv + 1,
				   access("mprof.data", F_OK) == 0 && access("cpprof.data", F_OK) != 0
					   ? "mprof.data"
					   : "cpprof.data");
	if (argc > 1 && strcmp(argv[1], "merge") == 0)
		return merge_main(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "diff") == 0)
		return export_diff_main(argc - 1, argv + 1, 0);
	util_no_command(argc, argv, "record, list, export, merge, diff");
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-c")) {
			if (i + 1 >= argc)
				die("-c needs commands");
			cmds = argv[++i];
		} else if (!strcmp(argv[i], "--full-names") || !strcmp(argv[i], "-full-names")) {
			s.full_names = 1;
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return 0;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			die("unknown option '%s' (cpprof --help)", argv[i]);
		} else if (nargs == 2) {
			die("too many arguments (usage: cpprof [-c CMDS] [a.out] [cpprof.data])");
		} else {
			args[nargs++] = argv[i];
		}
	}
	launch_operands(args, nargs, &exe, &data);
	if (!data && access("cpprof.data", F_OK) != 0 && access("mprof.data", F_OK) != 0)
		die("no cpprof.data or mprof.data here: give the profile's file (cpprof record PROG "
		    "writes cpprof.data)");
	if (!data)
		data = access("cpprof.data", F_OK) == 0 ? "cpprof.data" : "mprof.data";
	if (reader_load(data, &s.p, err, sizeof(err)) < 0)
		die("%s: %s", data, err);
	if (exe) {
		/* A bare name is the recorded executable, else a command in PATH. */
		if (launch_find_exe(exe, reader_info(&s.p, "exe"), exebuf, sizeof(exebuf), &why) < 0)
			die("%s: %s", exe, why);
		exe = exebuf;
	}
	s.sy = symbols_open(&s.p, exe);
	if (!s.sy)
		die("out of memory opening symbols");
	load_model(&s);
	s.threshold = 0.01;
	if (model_default_root(&s.p, &s.m))
		s.root = xstrdup(model_default_root(&s.p, &s.m));
	S = &s;

	if (cmds) {
		char *copy = xstrdup(cmds), *save = NULL;
		for (char *c = strtok_r(copy, ";", &save); c; c = strtok_r(NULL, ";", &save))
			if (run(&s, c))
				break;
		free(copy);
	} else if (!isatty(0)) {
		char line[4096];
		int any = 0;

		while (fgets(line, sizeof(line), stdin)) {
			any = 1;
			if (run(&s, line))
				break;
		}
		/* Run from a script or an editor with nothing on its input: it
		 * printed nothing and said nothing. */
		if (!any)
			fprintf(stderr, "cpprof: no commands on standard input (not a terminal): give "
					"them with -c, as -c 'function; down'\n");
	} else {
		interactive(&s);
	}
	if (fflush(stdout) != 0)
		die("write error on standard output: %s", strerror(errno));
	return s.failed ? 2 : 0;
}
