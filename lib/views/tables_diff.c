/*
 * tables_diff.c - owns mprof's four tables of a difference (tables_diff.h):
 * the difference model of two runs, their stacks matched by function
 * names, and its tables printed with signed figures.
 *
 * The layout is tables.c's, with these changes, all for reading a change
 * at a glance (doc/mprof.1, DIFF):
 *  - every figure is NEW minus BASE, with its sign ("0" when unchanged);
 *  - every (%) is that change as a percent of BASE's total of the same
 *    figure (bytes allocated, bytes kept), as pprof's -diff_base reports
 *    a diff against the base: a share of a signed total means nothing;
 *  - rows come in order of the size of their change, growth before a
 *    shrink of the same size (bins stay in size order: a histogram);
 *  - rows whose change is zero are not printed, so two equal runs give
 *    tables that each say "(no change)";
 *  - the size-class breakdowns (s m l x) are left out, for the same reason
 *    as the shares.
 */
#include "views/tables_diff.h"
#include "model/callgraph.h"
#include "base/escape.h"
#include "model/lispview.h"
#include "model/model.h"
#include "read/reader.h"
#include "views/tables.h"
#include "base/util.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* ---- The difference model ------------------------------------------------ */

/*
 * The stacks of both runs as a tree of function names (node 0 the root,
 * outside every stack), so that the key of a stack costs a node per name
 * prefix, as the model's own tree does, not a copy of its every frame
 * (deep stacks that share their outer frames would expand a
 * thousandfold).
 */
struct tnode {
	uint32_t parent, fn;    /* fn: the difference model's function id */
	uint32_t child, next;   /* first child, next sibling (0: none) */
	uint32_t end[2];        /* counters + 1 of the stack ending here, by cut */
};

struct trie {
	struct tnode *t;
	size_t n, cap;
	uint32_t *slot; /* node + 1, hashed on (parent, fn) */
	size_t nslots;
	uint64_t (*c)[MPROF_NCOUNTERS];
	size_t nc, ccap;
};

static size_t thash(uint32_t parent, uint32_t fn, size_t mask)
{
	uint64_t k = ((uint64_t)parent << 32 | fn) * 0x9e3779b97f4a7c15ull;

	/* The high half: a, in the key's high half, reaches only bits 32 and
	 * up of the product (bits 20 on took 4 bits of it). */
	return (size_t)(k >> 32) & mask;
}

static uint32_t trie_child(struct trie *tr, uint32_t parent, uint32_t fn)
{
	size_t i, mask;

	if (2 * (tr->n + 1) > tr->nslots) {
		tr->nslots = tr->nslots ? 2 * tr->nslots : 1024;
		free(tr->slot);
		tr->slot = xcalloc(tr->nslots, sizeof(uint32_t));
		mask = tr->nslots - 1;
		for (size_t v = 1; v < tr->n; v++) {
			for (i = thash(tr->t[v].parent, tr->t[v].fn, mask); tr->slot[i]; i = (i + 1) & mask)
				;
			tr->slot[i] = (uint32_t)v + 1;
		}
	}
	mask = tr->nslots - 1;
	for (i = thash(parent, fn, mask); tr->slot[i]; i = (i + 1) & mask) {
		const struct tnode *x = &tr->t[tr->slot[i] - 1];
		if (x->parent == parent && x->fn == fn)
			return tr->slot[i] - 1;
	}
	util_grow(&tr->t, &tr->cap, tr->n + 1, sizeof(*tr->t));
	tr->t[tr->n] = (struct tnode){ parent, fn, 0, 0, { 0, 0 } };
	tr->slot[i] = (uint32_t)++tr->n;
	return (uint32_t)tr->n - 1;
}

/* Add (sub 0) or subtract (sub 1) every stack of m. */
static void trie_side(struct trie *tr, struct model *d, const struct model *m, int sub)
{
	size_t nf = strtab_count(m->fns);
	uint32_t *map = xcalloc(nf + 1, sizeof(uint32_t));
	uint32_t *path = xcalloc((size_t)m->maxn + 1, sizeof(uint32_t));

	/* Names, not ids, match: each run numbers its functions as met. */
	for (size_t f = 0; f < nf; f++)
		map[f] = strtab_intern(d->fns, strtab_get(m->fns, (uint32_t)f));
	for (size_t i = 0; i < m->nstacks; i++) {
		const struct model_stack *s = &m->stacks[i];
		uint32_t n = model_path(m, s, path), v = 0, cut = s->cut ? 1 : 0;
		uint64_t *c, sc[FORMAT_MAX_COUNTERS];

		for (uint32_t j = 0; j < n; j++)
			v = trie_child(tr, v, map[m->sites[path[j]].fn]);
		if (!tr->t[v].end[cut]) {
			util_grow(&tr->c, &tr->ccap, tr->nc + 1, sizeof(*tr->c));
			memset(tr->c[tr->nc], 0, sizeof(*tr->c));
			tr->t[v].end[cut] = (uint32_t)++tr->nc;
		}
		c = tr->c[tr->t[v].end[cut] - 1];
		/* Modulo 2^64: a shrink is stored as its two's complement. */
		model_counts(m, s, sc);
		for (size_t k = 0; k < MPROF_NCOUNTERS; k++)
			c[k] = sub ? c[k] - sc[k] : c[k] + sc[k];
	}
	free(map);
	free(path);
}

static int nonzero(const uint64_t *c)
{
	for (size_t k = 0; k < MPROF_NCOUNTERS; k++)
		if (c[k])
			return 1;
	return 0;
}

void tables_diff_model(struct model *d, const struct model *base, const struct model *nw)
{
	struct trie tr = { 0 };
	uint32_t maxn = base->maxn > nw->maxn ? base->maxn : nw->maxn;
	const char **names = xcalloc((size_t)maxn + 1, sizeof(char *));
	uint32_t *todo, *depth;
	size_t sp = 0;

	model_init(d);
	util_grow(&tr.t, &tr.cap, 1, sizeof(*tr.t));
	tr.t[tr.n++] = (struct tnode){ 0 }; /* the root, never looked up */
	trie_side(&tr, d, base, 1);
	trie_side(&tr, d, nw, 0);
	for (size_t v = tr.n; v-- > 1;) {
		tr.t[v].next = tr.t[tr.t[v].parent].child;
		tr.t[tr.t[v].parent].child = (uint32_t)v;
	}
	/* Depth first, so that model_add shares each stack's outer frames
	 * with the one before: the model costs a node per tree node. */
	todo = xcalloc(tr.n + 1, sizeof(uint32_t));
	depth = xcalloc(tr.n + 1, sizeof(uint32_t));
	todo[sp++] = 0;
	while (sp) {
		uint32_t v = todo[--sp], dv = depth[v];

		if (v)
			names[dv - 1] = strtab_get(d->fns, tr.t[v].fn);
		for (int cut = 0; cut < 2; cut++) {
			uint32_t e = tr.t[v].end[cut];
			if (e && nonzero(tr.c[e - 1])) {
				model_add(d, names, dv, tr.c[e - 1]);
				d->stacks[d->nstacks - 1].cut = (uint32_t)cut;
			}
		}
		for (uint32_t w = tr.t[v].child; w; w = tr.t[w].next) {
			depth[w] = dv + 1;
			todo[sp++] = w;
		}
	}
	free(todo);
	free(depth);
	free(names);
	free(tr.t);
	free(tr.slot);
	free(tr.c);
}

/* ---- Signed figures ---------------------------------------------------- */

/* A change stored modulo 2^64, read back. */
static int64_t sv(uint64_t v)
{
	return (int64_t)v;
}

static uint64_t mag(uint64_t v)
{
	return sv(v) < 0 ? -v : v;
}

/* Larger changes first, growth before a shrink of the same size; 0 if
 * equal. */
static int by_change(uint64_t a, uint64_t b)
{
	if (mag(a) != mag(b))
		return mag(a) > mag(b) ? -1 : 1;
	if (a != b)
		return sv(a) > sv(b) ? -1 : 1;
	return 0;
}

/* "+12", "-5", "0". buf: 24 bytes. */
static const char *sgn(char *buf, uint64_t v)
{
	if (!v)
		return "0";
	snprintf(buf, 24, "%+" PRId64, sv(v));
	return buf;
}

/*
 * The change v as a whole percent of base (BASE's total of the figure),
 * truncated: "+12", "-." below 1%, "+**" from 10000%; "" for no change or
 * no base.  buf: 16 bytes.
 */
static const char *pct(char *buf, uint64_t v, uint64_t base)
{
	__int128 p;

	buf[0] = 0;
	if (!v || !base)
		return buf;
	/* 128-bit: the change times 100 overflows 64 bits for huge counts. */
	p = (__int128)sv(v) * 100 / (__int128)base;
	if (p == 0)
		snprintf(buf, 16, "%c.", sv(v) < 0 ? '-' : '+');
	else if (p >= 10000 || p <= -10000)
		snprintf(buf, 16, "%c**", p < 0 ? '-' : '+');
	else
		snprintf(buf, 16, "%+d", (int)p);
	return buf;
}

/* The same in parentheses, for a "(%)" column: blank when empty. */
static const char *ppct(char *buf, uint64_t v, uint64_t base)
{
	char p[16];

	if (!*pct(p, v, base))
		return "";
	snprintf(buf, 24, "(%s)", p);
	return buf;
}

/* A change is printed when it is over the verbosity's threshold as a
 * percent of BASE's total (any change, without a BASE total). */
static int over(uint64_t v, uint64_t base, double th)
{
	if (!v)
		return 0;
	if (th < 0 || !base)
		return 1;
	return (double)mag(v) * 100.0 > th * (double)base;
}

static void rule(FILE *out, const char *title)
{
	fprintf(out, "\n--------- %s (NEW minus BASE) ---------\n\n", title);
}

/* BASE's totals: the denominators of every (%). */
struct totals {
	uint64_t allocs, bytes, kept;
};

/* ---- The header ---------------------------------------------------------- */

static void side_line(FILE *out, const char *label, const struct tables_diff_side *s)
{
	uint64_t bytes = model_bytes(s->m->tot), freed = model_freed(s->m->tot);

	fprintf(out, "%s ", label);
	escape_put(out, s->path);
	fputs(": ", out);
	tables_run(out, s->p);
	fprintf(out, ": %" PRIu64 " allocations of %" PRIu64 " bytes, %" PRIu64 " frees of %" PRIu64
		" bytes, %" PRIu64 " bytes kept\n",
		model_allocs(s->m->tot), bytes, model_frees(s->m->tot), freed, bytes - freed);
}

/* One figure of the change line: "-7200 bytes (-13%)". */
static void change(FILE *out, const char *sep, uint64_t b, uint64_t n, const char *what)
{
	char s[24], p[16];

	fprintf(out, "%s%s %s", sep, sgn(s, n - b), what);
	/* Not a column: a change of 10000% or more in full ("+10352%"),
	 * where the tables print "+**". */
	if (b && n - b && (__int128)mag(n - b) * 100 >= (__int128)b * 10000)
		fprintf(out, " (%+.0f%%)", (double)sv(n - b) * 100.0 / (double)b);
	else if (*pct(p, n - b, b))
		fprintf(out, " (%s%%)", p);
}

static void header(FILE *out, const struct tables_diff_side *b, const struct tables_diff_side *n)
{
	const uint64_t *x = b->m->tot, *y = n->m->tot;

	fprintf(out, "mprof diff: the tables of NEW minus BASE, stacks matched by their functions\n");
	side_line(out, "BASE", b);
	side_line(out, "NEW ", n);
	change(out, "change: ", model_allocs(x), model_allocs(y), "allocations");
	change(out, ", ", model_bytes(x), model_bytes(y), "bytes");
	change(out, ", ", model_frees(x), model_frees(y), "frees");
	change(out, ", ", model_freed(x), model_freed(y), "bytes freed");
	change(out, ", ", model_bytes(x) - model_freed(x), model_bytes(y) - model_freed(y), "bytes kept");
	fputc('\n', out);
}

/* ---- Table 1: allocation bins ---------------------------------------- */

struct dbin {
	uint64_t allocs, frees, bytes, freed;
};

static void bins_add(struct dbin *d, const struct profile *p, int sub)
{
	for (size_t i = 0; i < p->nbins; i++) {
		const struct prof_bin *b = &p->bins[i];
		struct dbin *x = &d[b->size < FORMAT_NBINS ? b->size : FORMAT_NBINS - 1];

		x->allocs += sub ? -b->allocs : b->allocs;
		x->frees += sub ? -b->frees : b->frees;
		x->bytes += sub ? -b->bytes : b->bytes;
		x->freed += sub ? -b->freed : b->freed;
	}
}

static void table_bins(FILE *out, const struct tables_diff_side *b,
		       const struct tables_diff_side *n, struct symbols *s,
		       const struct tables_opts *o, const struct totals *t)
{
	struct dbin *d = xcalloc(FORMAT_NBINS, sizeof(*d));
	double th = tables_threshold(o->verbosity);
	size_t hidden = 0, shown = 0;

	bins_add(d, b->p, 1);
	bins_add(d, n->p, 0);
	rule(out, "ALLOCATION BINS");
	fprintf(out, "%9s %9s %12s %7s %9s %12s %7s  types\n", "size", "allocs", "bytes", "(%)", "frees",
		"kept", "(%)");
	for (uint32_t i = 0; i < FORMAT_NBINS; i++) {
		const struct dbin *x = &d[i];
		uint64_t kept = x->bytes - x->freed;
		char size[16], sa[24], sb[24], sf[24], sk[24], pb[24], pk[24];

		if (!x->allocs && !x->frees && !x->bytes && !x->freed)
			continue;
		if (!over(x->bytes, t->bytes, th) && !over(kept, t->kept, th) &&
		    !over(x->allocs, t->allocs, th)) {
			hidden++;
			continue;
		}
		if (i > 1024)
			snprintf(size, sizeof(size), ">1024");
		else
			snprintf(size, sizeof(size), "%u", i);
		fprintf(out, "%9s %9s %12s %7s %9s %12s %7s  ", size, sgn(sa, x->allocs), sgn(sb, x->bytes),
			ppct(pb, x->bytes, t->bytes), sgn(sf, x->frees), sgn(sk, kept), ppct(pk, kept, t->kept));
		tables_print_types(out, s, i, o->full_names);
		fputc('\n', out);
		shown++;
	}
	if (hidden)
		fprintf(out, "  (%zu %s of smaller change not shown; -verbose shows every bin)\n",
			hidden, hidden == 1 ? "bin" : "bins");
	else if (!shown)
		fprintf(out, "  (no change)\n");
	free(d);
}

/* ---- Table 2: memory leaks --------------------------------------------- */

static const struct tables_chain *sort_lk;
static const struct model *sort_m;
static uint32_t *sort_fa, *sort_fb;

static int leak_cmp(const void *xp, const void *yp)
{
	const struct tables_chain *a = &sort_lk[*(const uint32_t *)xp];
	const struct tables_chain *b = &sort_lk[*(const uint32_t *)yp];
	int r;

	if ((r = by_change(a->bytes - a->freed, b->bytes - b->freed)) ||
	    (r = by_change(a->allocs - a->frees, b->allocs - b->frees)))
		return r;
	if (a->n != b->n)
		return a->n < b->n ? -1 : 1;
	model_inner(sort_m, &sort_m->stacks[a->stack], a->n, sort_fa);
	model_inner(sort_m, &sort_m->stacks[b->stack], b->n, sort_fb);
	for (uint32_t i = 0; i < a->n; i++) {
		uint32_t fa = sort_m->sites[sort_fa[i]].fn, fb = sort_m->sites[sort_fb[i]].fn;
		if (fa != fb)
			return strcmp(strtab_get(sort_m->fns, fa), strtab_get(sort_m->fns, fb));
	}
	return a->cut - b->cut;
}

static void table_leaks(FILE *out, const struct model *d, const struct tables_opts *o,
			const struct totals *t)
{
	int depth = o->depth > 0 ? o->depth : 5;
	struct tables_chain *lk;
	uint8_t *lib = tables_library_fns(d);
	int fold = o->verbosity != TABLES_VERBOSE;
	size_t nl = tables_chains(d, depth, 0, fold, lib, &lk), hidden = 0, shown = 0;
	uint32_t *order = xcalloc(nl + 1, sizeof(uint32_t));
	uint32_t *f = xcalloc((size_t)d->maxn + 1, sizeof(uint32_t));
	uint32_t *g = xcalloc((size_t)d->maxn + 1, sizeof(uint32_t));

	for (size_t i = 0; i < nl; i++)
		order[i] = (uint32_t)i;
	sort_lk = lk;
	sort_m = d;
	sort_fa = f;
	sort_fb = g;
	qsort(order, nl, sizeof(uint32_t), leak_cmp);

	rule(out, "MEMORY LEAKS");
	fprintf(out, "%13s %7s %9s %12s %7s %9s %12s  path\n", "kept bytes", "(%)", "allocs", "bytes",
		"(%)", "frees", "bytes freed");
	for (size_t i = 0; i < nl; i++) {
		const struct tables_chain *l = &lk[order[i]];
		uint64_t kept = l->bytes - l->freed;
		char sk[24], pk[24], sa[24], sb[24], pb[24], sf[24], sd[24];

		if (!kept && l->allocs == l->frees)
			continue;
		if (!over(kept, t->kept, tables_threshold(o->verbosity))) {
			hidden++;
			continue;
		}
		fprintf(out, "%13s %7s %9s %12s %7s ", sgn(sk, kept), ppct(pk, kept, t->kept),
			sgn(sa, l->allocs), sgn(sb, l->bytes), ppct(pb, l->bytes, t->bytes));
		/* As table 2 leaves out frees when nothing was freed. */
		if (l->frees || l->freed)
			fprintf(out, "%9s %12s  ", sgn(sf, l->frees), sgn(sd, l->freed));
		else
			fprintf(out, "%9s %12s  ", "", "");
		if (l->cut)
			fputs("... > ", out);
		model_inner(d, &d->stacks[l->stack], l->n, f);
		for (uint32_t k = 0; k < l->n; k++) {
			uint32_t more = fold ? tables_library_run(d, lib, f, l->n, k) : 0;

			fprintf(out, "%s%s", k ? " > " : "", strtab_get(d->fns, d->sites[f[k]].fn));
			if (more) {
				fprintf(out, " > (%u more)", more);
				k += more;
			}
		}
		fputc('\n', out);
		shown++;
	}
	if (hidden)
		fprintf(out, "  (%zu %s of smaller change not shown; -verbose shows every chain)\n",
			hidden, hidden == 1 ? "chain" : "chains");
	else if (!shown)
		fprintf(out, "  (no change)\n");
	free(order);
	free(lk);
	free(f);
	free(g);
	free(lib);
}

/* ---- Table 3: direct allocation ---------------------------------------- */

static const struct callgraph *sort_g;

static int direct_cmp(const void *x, const void *y)
{
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
	const struct cg_node *p = &sort_g->fn.node[a], *q = &sort_g->fn.node[b];
	int r;

	if ((r = by_change(cg_sum(p->self_b), cg_sum(q->self_b))) ||
	    (r = by_change(cg_sum(p->self_kept), cg_sum(q->self_kept))) ||
	    (r = by_change(cg_sum(p->self_n), cg_sum(q->self_n))))
		return r;
	return strcmp(strtab_get(sort_m->fns, a), strtab_get(sort_m->fns, b));
}

static void direct_row(FILE *out, uint64_t b, uint64_t kept, uint64_t calls, const struct totals *t,
		       const char *name)
{
	char sb[24], pb[24], sk[24], pk[24], sc[24];

	fprintf(out, "%13s %7s %13s %7s %11s  %s\n", sgn(sb, b), ppct(pb, b, t->bytes), sgn(sk, kept),
		ppct(pk, kept, t->kept), sgn(sc, calls), name);
}

static void table_direct(FILE *out, const struct model *d, const struct callgraph *g,
			 const struct totals *t)
{
	uint32_t *ids = xcalloc(g->nfns + 1, sizeof(uint32_t));
	size_t n = 0;

	for (size_t f = 0; f < g->nfns; f++) {
		const struct cg_node *x = &g->fn.node[f];
		if (cg_sum(x->self_b) || cg_sum(x->self_kept) || cg_sum(x->self_n))
			ids[n++] = (uint32_t)f;
	}
	sort_g = g;
	sort_m = d;
	qsort(ids, n, sizeof(*ids), direct_cmp);
	rule(out, "DIRECT ALLOCATION");
	fprintf(out, "%13s %7s %13s %7s %11s  name\n", "bytes", "(%)", "bytes kept", "(%)", "calls");
	direct_row(out, cg_sum(g->tot_b), cg_sum(g->tot_kept), cg_sum(g->tot_n), t, "<TOTAL>");
	for (size_t i = 0; i < n; i++) {
		const struct cg_node *x = &g->fn.node[ids[i]];
		direct_row(out, cg_sum(x->self_b), cg_sum(x->self_kept), cg_sum(x->self_n), t,
			   strtab_get(d->fns, ids[i]));
	}
	if (!n)
		fprintf(out, "  (no change)\n");
	free(ids);
}

/* ---- Table 4: the allocation call graph ---------------------------------- */

struct entry {
	int is_cycle;
	uint32_t id;    /* function id, or cycle number */
	uint64_t sd;    /* sort key: the change in self + descendents */
	uint32_t depth; /* ties: callers first */
};

static int entry_cmp(const void *x, const void *y)
{
	const struct entry *a = x, *b = y;
	int r = by_change(a->sd, b->sd);

	if (r)
		return r;
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
	int *fn_index;    /* function id -> entry index, -1: not listed */
	int *cycle_index; /* cycle number -> entry index */
	const struct totals *t;
};

static int edge_live(const struct cg_edge *e)
{
	return cg_sum(e->b) || e->calls;
}

/* A node is listed when anything of it changed, or a call to or from it. */
static int node_live(const struct cg_level *lv, uint32_t v)
{
	const struct cg_node *x = &lv->node[v];

	if (cg_sum(x->sd_b) || cg_sum(x->self_b) || cg_sum(x->self_n) || x->called || x->recur)
		return 1;
	for (uint32_t i = lv->in_off[v]; i < lv->in_off[v + 1]; i++)
		if (edge_live(&lv->edge[lv->in_idx[i]]))
			return 1;
	for (uint32_t i = lv->out_off[v]; i < lv->out_off[v + 1]; i++)
		if (edge_live(&lv->edge[lv->out_idx[i]]))
			return 1;
	return 0;
}

static void node_name(const struct cgctx *c, char *buf, size_t len, uint32_t v, int merged)
{
	const struct callgraph *g = c->g;
	char idx[16] = "";

	if (merged && v >= g->nfns) {
		int k = (int)(v - g->nfns) + 1;
		snprintf(buf, len, "<cycle %d as a whole> [%d]", k, c->cycle_index[k]);
		return;
	}
	if (c->fn_index[v] >= 0)
		snprintf(idx, sizeof(idx), " [%d]", c->fn_index[v]);
	if (g->fn.node[v].cycle)
		snprintf(buf, len, "%s <cycle %d>%s", strtab_get(c->m->fns, v), g->fn.node[v].cycle, idx);
	else
		snprintf(buf, len, "%s%s", strtab_get(c->m->fns, v), idx);
}

static const struct cg_level *sort_lv;

static int edge_cmp(const void *x, const void *y)
{
	const struct cg_edge *a = &sort_lv->edge[*(const uint32_t *)x];
	const struct cg_edge *b = &sort_lv->edge[*(const uint32_t *)y];
	int r;

	if ((r = by_change(cg_sum(a->b), cg_sum(b->b))) || (r = by_change(a->calls, b->calls)))
		return r;
	return a->from < b->from ? -1 : a->from > b->from ? 1 : (a->to < b->to ? -1 : a->to > b->to);
}

/* Every row of the call graph, so the header and the rows share one
 * layout. */
static void cg_row(FILE *out, const char *idx, const char *sd, const char *psd, const char *self,
		   const char *pself, const char *called, char sep, const char *total, const char *name)
{
	fprintf(out, "%-6s %12s %7s %12s %7s %10s%c%-10s  %s\n", idx, sd, psd, self, pself, called, sep,
		total, name);
}

/* One ancestor or descendent line (starred: in the node's own cycle, only
 * the calls, as mprof.1 prints them).  total NULL: a summary row. */
static void relative(const struct cgctx *c, uint64_t bytes, uint64_t called, const uint64_t *total,
		     int starred, const char *name, const char *sd)
{
	char sb[24], pb[24], sc[24], st[24];

	if (starred) {
		cg_row(c->out, "", sd, "", "", "", sgn(sc, called), ' ', "", name);
		return;
	}
	cg_row(c->out, "", sd, "", sgn(sb, bytes), ppct(pb, bytes, c->t->bytes), sgn(sc, called),
	       total ? '/' : ' ', total ? sgn(st, *total) : "", name);
}

static void entry_line(const struct cgctx *c, const char *idx, uint64_t sd, uint64_t self,
		       uint64_t called, uint64_t recur, const char *name)
{
	char ss[24], ps[24], sf[24], pf[24], sc[24], sr[24];

	cg_row(c->out, idx, sgn(ss, sd), ppct(ps, sd, c->t->bytes), sgn(sf, self),
	       ppct(pf, self, c->t->bytes), sgn(sc, called), ' ', sgn(sr, recur), name);
}

/* The listed relatives of v, one direction, largest change first; *n of
 * them, and their calls summed. */
static uint32_t *relatives(const struct cg_level *lv, const uint32_t *off, const uint32_t *idx,
			   uint32_t v, uint32_t *n, uint64_t *calls)
{
	uint32_t *r = xcalloc(off[v + 1] - off[v] + 1, sizeof(uint32_t));

	*n = 0;
	*calls = 0;
	for (uint32_t i = off[v]; i < off[v + 1]; i++) {
		*calls += lv->edge[idx[i]].calls;
		if (edge_live(&lv->edge[idx[i]]))
			r[(*n)++] = idx[i];
	}
	sort_lv = lv;
	qsort(r, *n, sizeof(uint32_t), edge_cmp);
	return r;
}

static void node_entry(const struct cgctx *c, const struct cg_level *lv, uint32_t v, int merged,
		       int index, const char *name)
{
	const struct callgraph *g = c->g;
	const struct cg_node *x = &lv->node[v];
	uint32_t nin, nout;
	uint64_t cin, cout;
	uint32_t *in = relatives(lv, lv->in_off, lv->in_idx, v, &nin, &cin);
	uint32_t *outv = relatives(lv, lv->out_off, lv->out_idx, v, &nout, &cout);
	char nm[512], idx[16];

	/* The "all" rows only for more than one relative, as in table 4. */
	if (nin > 1)
		relative(c, cg_sum(x->anc_b), cin, NULL, 0, "", "all");
	for (uint32_t i = 0; i < nin; i++) {
		const struct cg_edge *e = &lv->edge[in[i]];
		int star = !merged && x->cycle && g->fn.node[e->from].cycle == x->cycle;
		node_name(c, nm, sizeof(nm), e->from, merged);
		relative(c, cg_sum(e->b), e->calls, &lv->node[e->from].out_calls, star, nm, "");
	}
	snprintf(idx, sizeof(idx), "[%d]", index);
	entry_line(c, idx, cg_sum(x->sd_b), cg_sum(x->self_b), x->called, x->recur, name);
	for (uint32_t i = 0; i < nout; i++) {
		const struct cg_edge *e = &lv->edge[outv[i]];
		int star = !merged && x->cycle && g->fn.node[e->to].cycle == x->cycle;
		node_name(c, nm, sizeof(nm), e->to, merged);
		relative(c, cg_sum(e->b), e->calls, &lv->node[e->to].called, star, nm, "");
	}
	if (nout > 1)
		relative(c, cg_sum(x->desc_b), cout, NULL, 0, "", "all");
	fputc('\n', c->out);
	free(in);
	free(outv);
}

/* A cycle's first listing: its members, each with what it allocated. */
static void cycle_members(const struct cgctx *c, int k, int index)
{
	const struct callgraph *g = c->g;
	const struct cg_node *cx = &g->merged.node[g->nfns + (size_t)k - 1];
	char idx[16], nm[512];

	snprintf(idx, sizeof(idx), "[%d]", index);
	snprintf(nm, sizeof(nm), "<cycle %d as a whole> [%d], its members:", k, index);
	entry_line(c, idx, cg_sum(cx->sd_b), cg_sum(cx->self_b), cx->called, cx->recur, nm);
	for (size_t i = 0; i < g->nmembers[k - 1]; i++) {
		uint32_t f = g->members[k - 1][i];
		const struct cg_node *x = &g->fn.node[f];

		char sf[24], pf[24], sc[24], sr[24];

		node_name(c, nm, sizeof(nm), f, 0);
		cg_row(c->out, "", "", "", sgn(sf, cg_sum(x->self_b)), ppct(pf, cg_sum(x->self_b), c->t->bytes),
		       sgn(sc, x->called), ' ', sgn(sr, x->recur), nm);
	}
	fputc('\n', c->out);
}

static void table_callgraph(FILE *out, const struct model *d, const struct callgraph *g,
			    const struct totals *t)
{
	struct entry *e = xcalloc(g->nfns + g->ncycles + 1, sizeof(*e));
	struct cgctx c = { out, d, g, NULL, NULL, t };
	size_t n = 0;
	char nm[512];

	c.fn_index = xcalloc(g->nfns + 1, sizeof(int));
	c.cycle_index = xcalloc(g->ncycles + 2, sizeof(int));
	for (size_t f = 0; f < g->nfns; f++) {
		c.fn_index[f] = -1;
		if (node_live(&g->fn, (uint32_t)f))
			e[n++] = (struct entry){ 0, (uint32_t)f, cg_sum(g->fn.node[f].sd_b), g->fn.node[f].depth };
	}
	for (size_t k = 1; k <= g->ncycles; k++) {
		const struct cg_node *x = &g->merged.node[g->nfns + k - 1];
		e[n++] = (struct entry){ 1, (uint32_t)k, cg_sum(x->sd_b), x->depth };
	}
	sort_m = d;
	qsort(e, n, sizeof(*e), entry_cmp);
	for (size_t i = 0; i < n; i++) {
		if (e[i].is_cycle)
			c.cycle_index[e[i].id] = (int)i;
		else
			c.fn_index[e[i].id] = (int)i;
	}

	rule(out, "ALLOCATION CALL GRAPH");
	cg_row(out, "", "", "", "self", "(%)", "called", '/', "total", "ancestors");
	cg_row(out, "index", "self+desc", "(%)", "self", "(%)", "called", ' ', "recur", "name [index]");
	cg_row(out, "", "", "", "self", "(%)", "called", '/', "total", "descendents");
	fputc('\n', out);
	for (size_t i = 0; i < n; i++) {
		if (e[i].is_cycle) {
			cycle_members(&c, (int)e[i].id, (int)i);
			snprintf(nm, sizeof(nm), "<cycle %u as a whole> [%zu]", e[i].id, i);
			node_entry(&c, &g->merged, (uint32_t)(g->nfns + e[i].id - 1), 1, (int)i, nm);
		} else {
			node_name(&c, nm, sizeof(nm), e[i].id, 0);
			node_entry(&c, &g->fn, e[i].id, 0, (int)i, nm);
		}
	}
	if (!n)
		fprintf(out, "  (no change)\n");
	free(e);
	free(c.fn_index);
	free(c.cycle_index);
}

void tables_diff_print(FILE *out, const struct model *d, const struct callgraph *g,
		       const struct tables_diff_side *base, const struct tables_diff_side *nw,
		       struct symbols *s, const struct tables_opts *o)
{
	const uint64_t *bt = base->m->tot;
	struct totals t = { model_allocs(bt), model_bytes(bt), model_bytes(bt) - model_freed(bt) };

	header(out, base, nw);
	table_bins(out, base, nw, s, o, &t);
	if (o->leaktable && (lispview_classes(base->p) || lispview_classes(nw->p))) {
		/* Lisp: the collector frees, so no chain keeps anything. */
		rule(out, "MEMORY LEAKS");
		fprintf(out, "  (none in a Lisp profile: the garbage collector frees objects)\n");
	} else if (o->leaktable) {
		table_leaks(out, d, o, &t);
	}
	table_direct(out, d, g, &t);
	table_callgraph(out, d, g, &t);
}
