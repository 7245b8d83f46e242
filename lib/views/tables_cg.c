/*
 * tables_cg.c - owns mprof's table 4, the allocation call graph
 * (tables_cg_print): an entry per function and per cycle (listed twice:
 * its members, then as a whole), sorted by self+desc, each with its
 * ancestors above and its descendents below, the relatives in its own
 * cycle starred.  Fields and listings as mprof.1 (TABLE 4, ANCESTOR and
 * DESCENDENT LISTINGS), the layout gprof's.  The graph is callgraph.c's.
 */
#include "model/callgraph.h"
#include "model/model.h"
#include "views/tables.h"
#include "base/util.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static const struct model *sort_m;

/* An entry: a function, or a cycle (listed twice: members, then merged). */
struct entry {
	int is_cycle;
	uint32_t id;   /* function id, or cycle number */
	uint64_t sd;   /* sort key */
	uint32_t depth; /* ties: callers first */
	int index;
};

static int entry_cmp(const void *x, const void *y)
{
	const struct entry *a = x, *b = y;

	if (a->sd != b->sd)
		return a->sd > b->sd ? -1 : 1;
	if (a->is_cycle != b->is_cycle)
		return a->is_cycle ? -1 : 1;
	if (a->depth != b->depth)
		return a->depth < b->depth ? -1 : 1;
	if (a->is_cycle)
		return a->id < b->id ? -1 : 1;
	return strcmp(strtab_get(sort_m->fns, a->id), strtab_get(sort_m->fns, b->id));
}

struct cgctx {
	FILE *out;
	const struct model *m;
	const struct callgraph *g;
	int *fn_index;    /* function id -> entry index */
	int *cycle_index; /* cycle number -> entry index */
	uint64_t total;
};

/* "name <cycle k> [index]" for a node of a level (merged: may be a cycle). */
static void node_name(const struct cgctx *c, char *buf, size_t len, uint32_t v, int merged)
{
	const struct callgraph *g = c->g;

	if (merged && v >= g->nfns) {
		int k = (int)(v - g->nfns) + 1;
		snprintf(buf, len, "<cycle %d as a whole> [%d]", k, c->cycle_index[k]);
	} else if (g->fn.node[v].cycle) {
		snprintf(buf, len, "%s <cycle %d> [%d]", strtab_get(c->m->fns, v), g->fn.node[v].cycle,
			 c->fn_index[v]);
	} else {
		snprintf(buf, len, "%s [%d]", strtab_get(c->m->fns, v), c->fn_index[v]);
	}
}

static const struct cg_level *sort_lv;
static int edge_in_cmp(const void *x, const void *y)
{
	const struct cg_edge *a = &sort_lv->edge[*(const uint32_t *)x], *b = &sort_lv->edge[*(const uint32_t *)y];
	uint64_t sa = cg_sum(a->b), sb = cg_sum(b->b);
	if (sa != sb)
		return sa > sb ? -1 : 1;
	if (a->calls != b->calls)
		return a->calls > b->calls ? -1 : 1;
	return a->from < b->from ? -1 : a->from > b->from ? 1 : (a->to < b->to ? -1 : a->to > b->to);
}

/*
 * Every row of the call graph goes through here, so the header and the rows
 * share one layout.  pct NULL prints no "(%)" field.
 */
static void cg_row(FILE *out, const char *idx, const char *sd, const char *bytes, const char *pct,
		   const char *size, const char *frac, const char *called, char sep, const char *total,
		   const char *name)
{
	char p[8] = "    ";

	if (pct)
		snprintf(p, sizeof(p), "(%s)", pct);
	fprintf(out, "%-6s %9s %12s %4s  %-11s  %-11s %10s%c%-10s  %s\n", idx, sd, bytes, p, size, frac,
		called, sep, total, name);
}

static char *u64s(char *buf, uint64_t v)
{
	snprintf(buf, 24, "%" PRIu64, v);
	return buf;
}

/* One ancestor or descendent line.  starred: same cycle, the * fields are
 * omitted (mprof.1).  total NULL: a summary row, no total. */
static void relative(const struct cgctx *c, const uint64_t *b, uint64_t den, uint64_t called,
		     const uint64_t *total, int starred, const char *name, const char *sd)
{
	char ps[3], size[16], frac[16], nb[24], nc[24], nt[24];
	uint64_t bytes = cg_sum(b);

	if (starred) {
		cg_row(c->out, "", sd, "", NULL, "", "", u64s(nc, called), ' ', "", name);
		return;
	}
	tables_pct2(ps, bytes, den);
	tables_breakdown(size, b, bytes);
	tables_breakdown(frac, b, den);
	cg_row(c->out, "", sd, u64s(nb, bytes), ps, size, frac, u64s(nc, called), total ? '/' : ' ',
	       total ? u64s(nt, *total) : "", name);
}

static void entry_line(const struct cgctx *c, int index, const struct cg_node *x, const char *name)
{
	char psd[3], ps[3], size[16], idx[16], nb[24], nc[24], nr[24];
	uint64_t self = cg_sum(x->self_b), sd = cg_sum(x->sd_b);

	tables_pct2(psd, sd, c->total);
	tables_pct2(ps, self, sd);
	tables_breakdown(size, x->self_b, self);
	snprintf(idx, sizeof(idx), "[%d]", index);
	cg_row(c->out, idx, psd, u64s(nb, self), ps, size, "-----------", u64s(nc, x->called), '+',
	       u64s(nr, x->recur), name);
}

/*
 * Print a node's ancestors, the node, its descendents.  lv is the level the
 * node lives in; in the function level, relatives in the node's own cycle
 * are starred.
 */
static void node_entry(const struct cgctx *c, const struct cg_level *lv, uint32_t v, int merged,
		       int index, const char *name)
{
	const struct callgraph *g = c->g;
	const struct cg_node *x = &lv->node[v];
	uint32_t nin = lv->in_off[v + 1] - lv->in_off[v], nout = lv->out_off[v + 1] - lv->out_off[v];
	uint32_t *in = xcalloc(nin + 1, sizeof(uint32_t)), *outv = xcalloc(nout + 1, sizeof(uint32_t));
	uint64_t sd = cg_sum(x->sd_b), desc = cg_sum(x->desc_b);
	char nm[512];

	memcpy(in, lv->in_idx + lv->in_off[v], nin * sizeof(uint32_t));
	memcpy(outv, lv->out_idx + lv->out_off[v], nout * sizeof(uint32_t));
	sort_lv = lv;
	qsort(in, nin, sizeof(uint32_t), edge_in_cmp);
	qsort(outv, nout, sizeof(uint32_t), edge_in_cmp);

	/* mprof.1: the "all" summary rows are omitted when there is only one
	 * ancestor (descendent). */
	if (nin > 1) {
		uint64_t calls = 0;
		for (uint32_t i = 0; i < nin; i++)
			calls += lv->edge[in[i]].calls;
		relative(c, x->anc_b, sd, calls, NULL, 0, "", "all");
	}
	for (uint32_t i = 0; i < nin; i++) {
		const struct cg_edge *e = &lv->edge[in[i]];
		int star = !merged && x->cycle && g->fn.node[e->from].cycle == x->cycle;
		node_name(c, nm, sizeof(nm), e->from, merged);
		relative(c, e->b, sd, e->calls, &lv->node[e->from].out_calls, star, nm, "");
	}
	entry_line(c, index, x, name);
	for (uint32_t i = 0; i < nout; i++) {
		const struct cg_edge *e = &lv->edge[outv[i]];
		int star = !merged && x->cycle && g->fn.node[e->to].cycle == x->cycle;
		node_name(c, nm, sizeof(nm), e->to, merged);
		relative(c, e->b, desc, e->calls, &lv->node[e->to].called, star, nm, "");
	}
	if (nout > 1) {
		uint64_t calls = 0;
		for (uint32_t i = 0; i < nout; i++)
			calls += lv->edge[outv[i]].calls;
		relative(c, x->desc_b, desc, calls, NULL, 0, "", "all");
	}
	fprintf(c->out, "\n");
	free(in);
	free(outv);
}

/* The first listing of a cycle: its members and what each allocated
 * locally, by size and as a fraction of the whole cycle (mprof.1). */
static void cycle_members(const struct cgctx *c, int k, int index)
{
	const struct callgraph *g = c->g;
	const struct cg_node *cx = &g->merged.node[g->nfns + (size_t)k - 1];
	uint64_t sd = cg_sum(cx->sd_b);
	char psd[3], ps[3], idx[16], nm[512], nb[24], nc[24], nr[24], size[16], frac[16];

	tables_pct2(psd, sd, c->total);
	tables_pct2(ps, cg_sum(cx->self_b), sd);
	tables_breakdown(size, cx->self_b, cg_sum(cx->self_b));
	snprintf(idx, sizeof(idx), "[%d]", index);
	snprintf(nm, sizeof(nm), "<cycle %d as a whole> [%d], its members:", k, index);
	cg_row(c->out, idx, psd, u64s(nb, cg_sum(cx->self_b)), ps, size, "-----------",
	       u64s(nc, cx->called), '+', u64s(nr, cx->recur), nm);
	for (size_t i = 0; i < g->nmembers[k - 1]; i++) {
		uint32_t f = g->members[k - 1][i];
		const struct cg_node *x = &g->fn.node[f];
		uint64_t self = cg_sum(x->self_b);

		tables_pct2(ps, self, sd);
		tables_breakdown(size, x->self_b, self);
		tables_breakdown(frac, x->self_b, sd);
		node_name(c, nm, sizeof(nm), f, 0);
		cg_row(c->out, "", "", u64s(nb, self), ps, size, frac, u64s(nc, x->called), '+',
		       u64s(nr, x->recur), nm);
	}
	fprintf(c->out, "\n");
}

/* Bytes allocated in stacks cut short (outer callers not recorded: deeper
 * than the monitor keeps, a Python recursion 3,000 frames deep, or a walk
 * that could not go on): their callers' self+desc is low by as much. */
static void cut_note(FILE *out, const struct model *m)
{
	uint64_t ctr[FORMAT_MAX_COUNTERS], cut = 0, all = 0;

	if (m->nc > FORMAT_MAX_COUNTERS)
		return;
	for (size_t i = 0; i < m->nstacks; i++) {
		uint64_t b = model_bytes(model_counts(m, &m->stacks[i], ctr));

		all += b;
		if (m->stacks[i].cut)
			cut += b;
	}
	if (all && (double)cut / (double)all >= 0.001)
		fprintf(out,
			"(%.1f%% of the bytes were allocated in stacks cut short, deeper than the "
			"monitor keeps (1,024 frames) or past where the walk could go: their outer "
			"callers were not recorded, and those callers' self+desc is low by as "
			"much)\n",
			100.0 * (double)cut / (double)all);
}

/* cls: the class columns' labels, " s  m  l  x" by size, or by type
 * (" c  f  s  o": Lisp). */
void tables_cg_print(FILE *out, const struct model *m, const struct callgraph *g,
		     const char *cls, int by_type)
{
	size_t n = 0;
	struct entry *e = xcalloc(g->nfns + g->ncycles + 1, sizeof(*e));
	struct cgctx c = { out, m, g, NULL, NULL, cg_sum(g->tot_b) };
	char nm[512];

	c.fn_index = xcalloc(g->nfns + 1, sizeof(int));
	c.cycle_index = xcalloc(g->ncycles + 2, sizeof(int));
	for (size_t f = 0; f < g->nfns; f++)
		if (g->fn.node[f].called)
			e[n++] = (struct entry){ 0, (uint32_t)f, cg_sum(g->fn.node[f].sd_b),
						 g->fn.node[f].depth, 0 };
	for (size_t k = 1; k <= g->ncycles; k++)
		e[n++] = (struct entry){ 1, (uint32_t)k, cg_sum(g->merged.node[g->nfns + k - 1].sd_b),
					 g->merged.node[g->nfns + k - 1].depth, 0 };
	sort_m = m;
	qsort(e, n, sizeof(*e), entry_cmp);
	for (size_t i = 0; i < n; i++) {
		e[i].index = (int)i;
		if (e[i].is_cycle)
			c.cycle_index[e[i].id] = (int)i;
		else
			c.fn_index[e[i].id] = (int)i;
	}

	tables_rule(out, "ALLOCATION CALL GRAPH");
	cut_note(out, m);
	cg_row(out, "", "", "self", "%", by_type ? "type-ances" : "size-ances", "frac-ances", "called",
	       '/', "total", "ancestors");
	cg_row(out, "index", "self+desc", "self", "%", by_type ? "type-func" : "size-func", "", "called",
	       '+', "recur", "name [index]");
	cg_row(out, "", "", "self", "%", by_type ? "type-desc" : "size-desc", "frac-desc", "called",
	       '/', "total", "descendents");
	cg_row(out, "", "", "", NULL, cls, cls, "", ' ', "", "");
	fputc('\n', out);
	for (size_t i = 0; i < n; i++) {
		if (e[i].is_cycle) {
			cycle_members(&c, (int)e[i].id, e[i].index);
			snprintf(nm, sizeof(nm), "<cycle %u as a whole> [%d]", e[i].id, e[i].index);
			node_entry(&c, &g->merged, (uint32_t)(g->nfns + e[i].id - 1), 1, e[i].index, nm);
		} else {
			node_name(&c, nm, sizeof(nm), e[i].id, 0);
			node_entry(&c, &g->fn, e[i].id, 0, e[i].index, nm);
		}
	}
	free(e);
	free(c.fn_index);
	free(c.cycle_index);
}
