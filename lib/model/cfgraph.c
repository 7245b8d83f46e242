/*
 * cfgraph.c - owns the flat profile's and the call graph's figures
 * (cfg_*): per function its own hits, its hits with descendants, its calls
 * (recursive ones apart); per caller -> callee edge its exact calls and
 * the hits of the paths that went through it.
 *
 * Each stack is walked once: its innermost function gets the stack's hits
 * as its own and the stack's calls; each distinct function and each
 * distinct edge on it gets the hits once (a stamp per function and per
 * edge, as callpath.c does for paths), so recursion does not count a
 * sample twice.
 */
#include "model/cfgraph.h"

#include <stdlib.h>
#include <string.h>

#include "model/callpath.h"
#include "base/pairmap.h"
#include "base/util.h"

struct emap {
	struct pairmap map; /* (from, to) -> edge */
	struct cfg_edge *e;
	uint64_t *stamp;
	size_t cap;
};

static size_t edge_of(struct emap *m, uint32_t from, uint32_t to)
{
	int made;
	uint32_t x = pairmap_get(&m->map, from, to, 0, &made);

	if (made) {
		size_t cap = m->cap;
		util_grow(&m->e, &m->cap, (size_t)x + 1, sizeof(*m->e));
		util_grow(&m->stamp, &cap, (size_t)x + 1, sizeof(*m->stamp));
		m->e[x] = (struct cfg_edge){ from, to, 0, 0, 0 };
		m->stamp[x] = 0;
	}
	return x;
}

static int by_edge(const void *a, const void *b)
{
	const struct cfg_edge *x = a, *y = b;

	if (x->from != y->from)
		return x->from < y->from ? -1 : 1;
	return x->to < y->to ? -1 : x->to > y->to;
}

static const struct cfg *sort_g;

static int by_to(const void *a, const void *b)
{
	const struct cfg_edge *x = &sort_g->edge[*(const uint32_t *)a];
	const struct cfg_edge *y = &sort_g->edge[*(const uint32_t *)b];

	if (x->to != y->to)
		return x->to < y->to ? -1 : 1;
	return x->from < y->from ? -1 : x->from > y->from;
}

static int by_incl(const void *a, const void *b)
{
	const struct cfg_fn *x = &sort_g->fn[*(const uint32_t *)a], *y = &sort_g->fn[*(const uint32_t *)b];

	if (x->incl != y->incl)
		return x->incl > y->incl ? -1 : 1;
	if (x->self != y->self)
		return x->self > y->self ? -1 : 1;
	if (x->calls != y->calls)
		return x->calls > y->calls ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

int cfg_build(const struct cp_input *in, struct cfg *g)
{
	struct emap m = { 0 };
	uint64_t *stamp;
	uint32_t *f;

	memset(g, 0, sizeof(*g));
	if (!in->calls)
		return -1;
	g->nids = in->nids;
	g->fn = xcalloc(in->nids + 1, sizeof(*g->fn));
	stamp = xcalloc(in->nids + 1, sizeof(uint64_t));
	f = xcalloc((size_t)in->maxn + 1, sizeof(uint32_t));
	for (size_t s = 0; s < in->nstacks; s++) {
		uint64_t w = in->weight[s], cl = in->calls[s];
		uint32_t n;

		g->total += w;
		if (!w && !cl)
			continue;
		n = in->path(in->ctx, s, f);
		if (!n) {
			g->unprofiled += w;
			continue;
		}
		g->fn[f[n - 1]].self += w;
		g->fn[f[n - 1]].calls += cl;
		if (n == 1) {
			g->fn[f[0]].spont += cl;
		} else {
			size_t e = edge_of(&m, f[n - 2], f[n - 1]);
			m.e[e].calls += cl;
			m.e[e].self += w;
			if (f[n - 2] == f[n - 1])
				g->fn[f[n - 1]].rcalls += cl;
		}
		if (!w)
			continue;
		for (uint32_t i = 0; i < n; i++) {
			if (stamp[f[i]] != s + 1) {
				stamp[f[i]] = s + 1;
				g->fn[f[i]].incl += w;
			}
			if (i + 1 < n) {
				size_t e = edge_of(&m, f[i], f[i + 1]);
				if (m.stamp[e] != s + 1) {
					m.stamp[e] = s + 1;
					m.e[e].incl += w;
				}
			}
		}
	}
	if (m.map.n)
		qsort(m.e, m.map.n, sizeof(*m.e), by_edge);
	g->edge = m.e;
	g->nedges = m.map.n;
	free(m.stamp);
	pairmap_release(&m.map);
	free(stamp);
	free(f);
	sort_g = g;
	g->into = xcalloc(g->nedges + 1, sizeof(uint32_t));
	for (size_t k = 0; k < g->nedges; k++)
		g->into[k] = (uint32_t)k;
	if (g->nedges)
		qsort(g->into, g->nedges, sizeof(uint32_t), by_to);
	g->order = xcalloc(in->nids + 1, sizeof(uint32_t));
	for (size_t id = 0; id < in->nids; id++)
		if (g->fn[id].incl || g->fn[id].calls)
			g->order[g->norder++] = (uint32_t)id;
	sort_g = g;
	if (g->norder)
		qsort(g->order, g->norder, sizeof(uint32_t), by_incl);
	for (size_t k = 0; k < g->norder; k++)
		g->fn[g->order[k]].index = (uint32_t)k + 1;
	return 0;
}

size_t cfg_callees(const struct cfg *g, uint32_t id, size_t *first)
{
	size_t lo = 0, hi = g->nedges, end;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (g->edge[mid].from < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (end = lo; end < g->nedges && g->edge[end].from == id; end++)
		;
	*first = lo;
	return end - lo;
}

size_t cfg_callers(const struct cfg *g, uint32_t id, size_t *first)
{
	size_t lo = 0, hi = g->nedges, end;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (g->edge[g->into[mid]].to < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (end = lo; end < g->nedges && g->edge[g->into[end]].to == id; end++)
		;
	*first = lo;
	return end - lo;
}

void cfg_free(struct cfg *g)
{
	free(g->fn);
	free(g->edge);
	free(g->order);
	free(g->into);
	memset(g, 0, sizeof(*g));
}
