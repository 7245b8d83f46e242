/*
 * fuzz_tools.c - libFuzzer target for everything a data file goes
 * through: the reader, then, for a file it accepts, what `mprof dump`
 * walks, the symbolizer (module paths are input: /proc/self/exe names this
 * program, whose DWARF is then read), the model, mprof's call graph and
 * four tables, every cpprof view (function, body, tree, down and up
 * from main and from the innermost function, by function and by call
 * site), and for cfprof data (its calls counter) the views with calls and
 * cfprof's flat profile and call graph figures.  Any input must be accepted or rejected with a reason, and
 * never crash, leak, read out of bounds or trip UBSan; and the model,
 * which keeps shared frames shared, must give each stack the path the
 * same stacks written out whole give (oracle()).  Every other input
 * is shown with full C++ names, and every input is also read as a
 * demangled name by lib/symbols/cxxname.c (names come from binaries, which may be
 * anyone's).
 *
 * `make fuzz` runs it for FUZZ_SECONDS; tests/e2e/58-fuzz.t replays
 * tests/fuzz/corpus/ through it and fuzzes for a bounded time in
 * `make check`.
 */
#include "model/callgraph.h"
#include "model/callpath.h"
#include "model/cfgraph.h"
#include "symbols/cxxname.h"
#include "export/export.h"
#include "format/format.h"
#include "model/model.h"
#include "read/reader.h"
#include "symbols/symbols.h"
#include "views/tables.h"
#include "base/util.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static FILE *null_out;
static int by_site;

/* The stack's function ids, or site ids by_site, as cpprof gives them. */
static uint32_t stack_ids(const void *ctx, size_t i, uint32_t *out)
{
	const struct model *m = ctx;
	uint32_t n = model_path(m, &m->stacks[i], out);

	if (!by_site)
		for (uint32_t j = 0; j < n; j++)
			out[j] = m->sites[out[j]].fn;
	return n;
}

/* Spell out some entries' paths (all of them would cost the square of a
 * deep chain's depth, as printing them does, and teach the fuzzer nothing
 * more). */
static void spell(const struct cp_result *r)
{
	uint32_t *path = calloc((size_t)r->maxlen + 1, sizeof(uint32_t));

	for (size_t i = 0; i < r->n; i += i < 16 ? 1 : r->n / 16 + 1) {
		callpath_path(r, &r->e[i], path);
		fprintf(null_out, "%u %u %llu\n", path[0], path[r->e[i].len - 1],
			(unsigned long long)r->e[i].hits);
	}
	free(path);
}

/* Down and up profiles from the functions (or their sites) in fn. */
static void rooted(const struct model *m, struct cp_input *in, uint32_t fn)
{
	uint8_t *set = calloc(in->nids + 1, 1);
	struct cp_result r;

	for (size_t id = 0; id < in->nids; id++)
		set[id] = (by_site ? m->sites[id].fn : id) == fn;
	if (callpath_down(in, set, &r) == 0) {
		spell(&r);
		callpath_result_free(&r);
	}
	if (callpath_up(in, set, &r) == 0) {
		spell(&r);
		callpath_result_free(&r);
	}
	free(set);
}

/* cfprof's figures, read as cmd/cfprof.c prints them. */
static void graph(const struct cp_input *in)
{
	struct cfg g;
	uint64_t sum = 0;

	if (cfg_build(in, &g) < 0)
		return;
	for (size_t k = 0; k < g.norder; k++) {
		size_t first, n = cfg_callers(&g, g.order[k], &first);
		for (size_t j = 0; j < n; j++)
			sum += g.edge[g.into[first + j]].incl - g.edge[g.into[first + j]].self;
		n = cfg_callees(&g, g.order[k], &first);
		for (size_t j = 0; j < n; j++)
			sum += g.edge[first + j].calls;
	}
	(void)sum;
	cfg_free(&g);
}

static void views(const struct profile *p, const struct model *m)
{
	uint64_t *w = calloc(m->nstacks + 1, sizeof(uint64_t));
	uint64_t *calls = NULL;
	struct cp_input in = { 0 };
	struct cp_result r;
	int cf = p->kind == FORMAT_KIND_CFPROF && m->nc >= 2;

	if (cf)
		calls = calloc(m->nstacks + 1, sizeof(uint64_t));
	for (size_t i = 0; i < m->nstacks; i++) {
		uint64_t c[FORMAT_MAX_COUNTERS];

		model_counts(m, &m->stacks[i], c);
		w[i] = p->kind == FORMAT_KIND_MPROF ? model_bytes(c) : cf ? c[1] : m->nc ? c[0] : 0;
		if (cf)
			calls[i] = c[0];
	}
	in.calls = calls;
	in.nstacks = m->nstacks;
	in.weight = w;
	in.path = stack_ids;
	in.ctx = m;
	in.maxn = m->maxn;
	in.max_paths = m->nnodes + m->nstacks + (1u << 16);
	for (by_site = 0; by_site < 2; by_site++) {
		in.nids = by_site ? m->nsites : strtab_count(m->fns);
		callpath_functions(&in, &r);
		spell(&r);
		callpath_result_free(&r);
		callpath_bodies(&in, &r);
		spell(&r);
		callpath_result_free(&r);
		if (callpath_tree(&in, &r) == 0) {
			spell(&r);
			callpath_result_free(&r);
		}
		rooted(m, &in, m->main_fn);
		if (m->nstacks && m->stacks[0].n) {
			uint32_t *f = calloc((size_t)m->maxn + 1, sizeof(uint32_t));
			model_path(m, &m->stacks[0], f);
			rooted(m, &in, m->sites[f[m->stacks[0].n - 1]].fn);
			free(f);
		}
		if (cf)
			graph(&in);
	}
	free(w);
	free(calls);
}

/* What `mprof dump` prints: every frame of every stack. */
static void dump(const struct profile *p)
{
	static uint64_t frames[FORMAT_MAX_DEPTH];

	for (size_t i = 0; i < p->nstacks; i++) {
		uint32_t n = reader_frames(p, i, frames);
		if (n != p->stacks[i].depth)
			abort();
		fprintf(null_out, "%u %llx %llx\n", n, n ? (unsigned long long)frames[0] : 0ull,
			n ? (unsigned long long)frames[n - 1] : 0ull);
	}
}

/* Two sites say the same: function, offset, file:line, inlining. */
static int same_site(const struct model *a, uint32_t x, const struct model *b, uint32_t y)
{
	const struct model_site *s = &a->sites[x], *t = &b->sites[y];

	return strcmp(strtab_get(a->fns, s->fn), strtab_get(b->fns, t->fn)) == 0 &&
	       s->offset == t->offset && s->inlined == t->inlined &&
	       s->func_addr == t->func_addr &&
	       (s->loc == MODEL_NO_LOC ? t->loc == MODEL_NO_LOC
				       : t->loc != MODEL_NO_LOC &&
						 strcmp(strtab_get(a->locs, s->loc),
							strtab_get(b->locs, t->loc)) == 0);
}

/*
 * The oracle: the model keeps the file's shared frames shared, and must
 * give every stack the path the same stacks written out whole give (a pc
 * shared as a return address once did not).  Checked for files of a
 * bounded size (the whole copy costs what the references add up to).
 */
static void oracle(const struct profile *p, const struct model *m, struct symbols *sy)
{
	struct profile q = *p;
	struct model m2;
	uint32_t *x, *y;
	uint64_t total = 0;
	char err[256];

	for (size_t i = 0; i < p->nstacks; i++)
		total += p->stacks[i].depth;
	if (total > (1u << 16))
		return;
	q.stacks = calloc(p->nstacks + 1, sizeof(*q.stacks));
	uint64_t *f = calloc(FORMAT_MAX_DEPTH + 1, sizeof(uint64_t));
	unsigned char *frames = calloc(10 * total + 1, 1), *b = frames;
	for (size_t i = 0; i < p->nstacks; i++) {
		uint32_t n = reader_frames(p, i, f);
		q.stacks[i] = p->stacks[i];
		q.stacks[i].shared = q.stacks[i].ref = 0;
		q.stacks[i].own = b;
		q.stacks[i].own_len = (uint32_t)reader_pack(b, f, n, 1);
		q.stacks[i].outer = n ? f[n - 1] : 0;
		b += q.stacks[i].own_len;
	}
	free(f);
	model_init(&m2);
	if (model_from_profile(&m2, &q, sy, 0, err, sizeof(err)) == 0) {
		if (m2.nstacks != m->nstacks)
			abort();
		x = calloc((size_t)m->maxn + 1, sizeof(uint32_t));
		y = calloc((size_t)m2.maxn + 1, sizeof(uint32_t));
		for (size_t i = 0; i < m->nstacks; i++) {
			uint32_t n = model_path(m, &m->stacks[i], x);
			if (n != model_path(&m2, &m2.stacks[i], y))
				abort();
			for (uint32_t j = 0; j < n; j++)
				if (!same_site(m, x[j], &m2, y[j]))
					abort();
		}
		free(x);
		free(y);
	}
	model_release(&m2);
	free(frames);
	free(q.stacks);
}

/* Every export of every counter: folded, pprof and the HTML report. */
static void exports(const struct profile *p, const struct model *m, struct symbols *sy)
{
	struct export_html_info info = { "title", "facts", NULL, 0 };
	struct export_data d;
	char err[256];

	if (export_prepare(&d, p, m, err, sizeof(err)) < 0)
		return;
	d.sy = sy;
	for (size_t k = 0; k < d.n; k++)
		export_folded(&d, k, null_out);
	export_pprof(&d, d.dflt, NULL, null_out);
	info.dflt = d.dflt;
	export_html(&d, &info, null_out);
}

/* The input as a demangled name: each of cxxname's readings. */
static void names(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1), *r;
	enum cxxname_size how;

	if (!s)
		abort();
	memcpy(s, data, size);
	s[size] = 0;
	free(cxxname_simplify(s));
	free(cxxname_type(s));
	r = cxxname_alloc_type(s, &how);
	if (r)
		free(cxxname_type(r));
	free(r);
	cxxname_is_plumbing(s);
	cxxname_builtin_size(s);
	free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tables_opts o = { TABLES_VERBOSE, 1, 1, 1, 5, 1, (int)(size & 1) };
	struct profile p;
	struct symbols *sy;
	struct model m;
	char err[256];

	if (!null_out && !(null_out = fopen("/dev/null", "w")))
		abort();
	names(data, size);
	err[0] = 0;
	if (reader_parse(data, size, &p, err, sizeof(err)) < 0) {
		if (!err[0])
			abort(); /* a rejection must say why */
		return 0;
	}
	dump(&p);
	sy = symbols_open(&p, NULL);
	if (!sy)
		abort();
	symbols_full_names(sy, o.full_names);
	model_init(&m);
	err[0] = 0;
	if (model_from_profile(&m, &p, sy, 0, err, sizeof(err)) == 0) {
		if (p.kind == FORMAT_KIND_MPROF) {
			struct callgraph g;
			callgraph_build(&g, &m);
			tables_print(null_out, &m, &g, &p, sy, &o);
			callgraph_release(&g);
			/* The heap over time (issue 24): the chart, its key and
			 * the lifetimes, and the CSV. */
			tables_timeline(null_out, &p, &m, 0);
			tables_timeline(null_out, &p, NULL, 1);
		}
		views(&p, &m);
		exports(&p, &m, sy);
		oracle(&p, &m, sy);
	} else if (!err[0]) {
		abort();
	}
	model_release(&m);
	symbols_free(sy);
	reader_release(&p);
	return 0;
}
