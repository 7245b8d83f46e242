/*
 * callgraph.c - per-function and cycle-merged allocation call graphs, and
 * the strongly connected components (cycles) that link them.  See
 * callgraph.h; mprof-paper.tex, "Constructing the Allocation Call Graph".
 */
#include "model/callgraph.h"
#include "model/model.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>

uint64_t cg_sum(const uint64_t *v)
{
	return v[0] + v[1] + v[2] + v[3];
}

/* Edge lookup: open addressing on (from, to), each slot's pair beside
 * it, so that a probe that misses reads no edge (a miss in the cache a
 * probe, on a profile of 1M stacks). */
struct edgemap {
	uint32_t *slot; /* edge index + 1 */
	uint64_t *key;  /* from << 32 | to */
	size_t nslots, cap;
	struct cg_level *lv;
};

static size_t ehash(uint32_t a, uint32_t b, size_t mask)
{
	uint64_t k = ((uint64_t)a << 32 | b) * 0x9e3779b97f4a7c15ull;

	/* The high half: a, in the key's high half, reaches only bits 32 and
	 * up of the product (bits 20 on took 4 bits of it). */
	return (size_t)(k >> 32) & mask;
}

static uint32_t edge_get(struct edgemap *em, uint32_t a, uint32_t b)
{
	struct cg_level *lv = em->lv;
	size_t i;

	uint64_t k = (uint64_t)a << 32 | b;

	if (2 * (lv->nedges + 1) > em->nslots) {
		em->nslots = em->nslots ? em->nslots * 2 : 256;
		free(em->slot);
		free(em->key);
		em->slot = xcalloc(em->nslots, sizeof(uint32_t));
		em->key = xcalloc(em->nslots, sizeof(uint64_t));
		for (size_t e = 0; e < lv->nedges; e++) {
			i = ehash(lv->edge[e].from, lv->edge[e].to, em->nslots - 1);
			while (em->slot[i])
				i = (i + 1) & (em->nslots - 1);
			em->slot[i] = (uint32_t)e + 1;
			em->key[i] = (uint64_t)lv->edge[e].from << 32 | lv->edge[e].to;
		}
	}
	i = ehash(a, b, em->nslots - 1);
	while (em->slot[i]) {
		if (em->key[i] == k)
			return em->slot[i] - 1;
		i = (i + 1) & (em->nslots - 1);
	}
	util_grow(&lv->edge, &em->cap, lv->nedges + 1, sizeof(*lv->edge));
	memset(&lv->edge[lv->nedges], 0, sizeof(*lv->edge));
	lv->edge[lv->nedges].from = a;
	lv->edge[lv->nedges].to = b;
	em->slot[i] = (uint32_t)++lv->nedges;
	em->key[i] = k;
	return (uint32_t)lv->nedges - 1;
}

/*
 * Accumulate one stack (node ids, outermost first) into a level.  stamp
 * arrays remember the last stack that credited a node or edge, so that each
 * allocation is credited once to each node and edge on its stack.
 */
struct acc {
	struct cg_level *lv;
	struct edgemap em;
	uint32_t *nstamp, *estamp, *astamp, *dstamp; /* stack index + 1 (< 2^32) */
	size_t estamp_cap;
};

static void add2(uint64_t *dst, const uint64_t *b)
{
	for (int k = 0; k < SIZE_NCLASSES; k++)
		dst[k] += b[k];
}

static void accumulate(struct acc *a, const uint32_t *v, uint32_t n, const uint64_t *c, uint32_t stamp)
{
	struct cg_level *lv = a->lv;
	const uint64_t *b = c + MPROF_C_BYTES;
	uint64_t allocs = model_allocs(c);

	if (n == 0)
		return;
	for (uint32_t j = 0; j < n; j++) {
		struct cg_node *x = &lv->node[v[j]];

		if (!x->called || j < x->depth)
			x->depth = j;
		if (a->nstamp[v[j]] != stamp) {
			a->nstamp[v[j]] = stamp;
			add2(x->sd_b, b);
			x->called += allocs;
		} else {
			x->recur += allocs;
		}
		if (j > 0 && v[j - 1] != v[j]) {
			uint32_t e = edge_get(&a->em, v[j - 1], v[j]);
			struct cg_edge *ed;

			if (lv->nedges > a->estamp_cap) {
				size_t old = a->estamp_cap;
				util_grow(&a->estamp, &a->estamp_cap, lv->nedges, sizeof(uint32_t));
				memset(a->estamp + old, 0, (a->estamp_cap - old) * sizeof(uint32_t));
			}
			ed = &lv->edge[e];
			ed->calls += allocs;
			lv->node[v[j - 1]].out_calls += allocs;
			if (a->estamp[e] != stamp) {
				a->estamp[e] = stamp;
				add2(ed->b, b);
			}
			if (a->astamp[v[j]] != stamp) {
				a->astamp[v[j]] = stamp;
				add2(x->anc_b, b);
			}
			if (a->dstamp[v[j - 1]] != stamp) {
				a->dstamp[v[j - 1]] = stamp;
				add2(lv->node[v[j - 1]].desc_b, b);
			}
		}
	}
	{
		struct cg_node *x = &lv->node[v[n - 1]];
		for (int k = 0; k < SIZE_NCLASSES; k++) {
			x->self_b[k] += b[k];
			x->self_n[k] += c[MPROF_C_ALLOCS + k];
			x->self_kept[k] += c[MPROF_C_BYTES + k] - c[MPROF_C_FREED + k];
		}
	}
}

static void acc_init(struct acc *a, struct cg_level *lv, size_t nnodes)
{
	memset(a, 0, sizeof(*a));
	lv->nnodes = nnodes;
	lv->node = xcalloc(nnodes, sizeof(*lv->node));
	a->lv = lv;
	a->em.lv = lv;
	a->nstamp = xcalloc(nnodes, sizeof(uint32_t));
	a->astamp = xcalloc(nnodes, sizeof(uint32_t));
	a->dstamp = xcalloc(nnodes, sizeof(uint32_t));
}

/* Build the CSR in/out adjacency of a level. */
static void acc_finish(struct acc *a)
{
	struct cg_level *lv = a->lv;
	size_t n = lv->nnodes;
	uint32_t *ifill, *ofill;

	lv->in_off = xcalloc(n + 1, sizeof(uint32_t));
	lv->out_off = xcalloc(n + 1, sizeof(uint32_t));
	lv->in_idx = xcalloc(lv->nedges, sizeof(uint32_t));
	lv->out_idx = xcalloc(lv->nedges, sizeof(uint32_t));
	for (size_t e = 0; e < lv->nedges; e++) {
		lv->in_off[lv->edge[e].to + 1]++;
		lv->out_off[lv->edge[e].from + 1]++;
	}
	for (size_t v = 0; v < n; v++) {
		lv->in_off[v + 1] += lv->in_off[v];
		lv->out_off[v + 1] += lv->out_off[v];
	}
	ifill = xcalloc(n, sizeof(uint32_t));
	ofill = xcalloc(n, sizeof(uint32_t));
	for (size_t e = 0; e < lv->nedges; e++) {
		uint32_t t = lv->edge[e].to, f = lv->edge[e].from;
		lv->in_idx[lv->in_off[t] + ifill[t]++] = (uint32_t)e;
		lv->out_idx[lv->out_off[f] + ofill[f]++] = (uint32_t)e;
	}
	free(ifill);
	free(ofill);
	free(a->em.slot);
	free(a->em.key);
	free(a->nstamp);
	free(a->estamp);
	free(a->astamp);
	free(a->dstamp);
}

/*
 * Tarjan's strongly connected components, iteratively (call graphs of deep
 * recursive programs would overflow a recursive version).  comp[v] gets a
 * component number; returns how many.
 */
static size_t tarjan(const struct cg_level *lv, uint32_t *comp)
{
	size_t n = lv->nnodes, ncomp = 0, idx = 1, sp = 0, cs = 0;
	uint32_t *index = xcalloc(n, sizeof(uint32_t)), *low = xcalloc(n, sizeof(uint32_t));
	uint32_t *stack = xcalloc(n, sizeof(uint32_t)), *cstack = xcalloc(n, sizeof(uint32_t));
	uint32_t *next = xcalloc(n, sizeof(uint32_t)); /* next out-edge to look at */
	uint8_t *on = xcalloc(n, 1);

	for (size_t root = 0; root < n; root++) {
		if (index[root])
			continue;
		cstack[cs++] = (uint32_t)root;
		index[root] = low[root] = (uint32_t)idx++;
		stack[sp++] = (uint32_t)root;
		on[root] = 1;
		next[root] = lv->out_off[root];
		while (cs) {
			uint32_t v = cstack[cs - 1];
			if (next[v] < lv->out_off[v + 1]) {
				uint32_t w = lv->edge[lv->out_idx[next[v]++]].to;
				if (!index[w]) {
					index[w] = low[w] = (uint32_t)idx++;
					stack[sp++] = w;
					on[w] = 1;
					next[w] = lv->out_off[w];
					cstack[cs++] = w;
				} else if (on[w] && index[w] < low[v]) {
					low[v] = index[w];
				}
				continue;
			}
			cs--;
			if (cs && low[v] < low[cstack[cs - 1]])
				low[cstack[cs - 1]] = low[v];
			if (low[v] == index[v]) {
				uint32_t w;
				do {
					w = stack[--sp];
					on[w] = 0;
					comp[w] = (uint32_t)ncomp;
				} while (w != v);
				ncomp++;
			}
		}
	}
	free(index);
	free(low);
	free(stack);
	free(cstack);
	free(next);
	free(on);
	return ncomp;
}

struct cyc {
	uint32_t comp;
	uint64_t sd;
	uint32_t first; /* smallest member id, for a stable order */
};

static int cyc_cmp(const void *x, const void *y)
{
	const struct cyc *a = x, *b = y;
	if (a->sd != b->sd)
		return a->sd > b->sd ? -1 : 1;
	return a->first < b->first ? -1 : a->first > b->first;
}

uint32_t callgraph_node_of(const struct callgraph *g, uint32_t fn)
{
	int c = g->fn.node[fn].cycle;
	return c ? (uint32_t)(g->nfns + (size_t)c - 1) : fn;
}

void callgraph_build(struct callgraph *g, const struct model *m)
{
	size_t nf = strtab_count(m->fns);
	struct acc a;
	uint32_t *comp, *csize, *v;
	uint64_t ctr[FORMAT_MAX_COUNTERS];
	size_t ncomp;
	struct cyc *cy;

	memset(g, 0, sizeof(*g));
	g->nfns = nf;
	acc_init(&a, &g->fn, nf);
	/* A stack's sites, then its functions or nodes, one stack at a time. */
	v = xcalloc((size_t)m->maxn + 1, sizeof(uint32_t));
	for (size_t i = 0; i < m->nstacks; i++) {
		const struct model_stack *s = &m->stacks[i];
		model_path(m, s, v);
		model_counts(m, s, ctr);
		for (uint32_t j = 0; j < s->n; j++)
			v[j] = m->sites[v[j]].fn;
		accumulate(&a, v, s->n, ctr, (uint32_t)i + 1);
		for (int k = 0; k < SIZE_NCLASSES; k++) {
			g->tot_b[k] += ctr[MPROF_C_BYTES + k];
			g->tot_n[k] += ctr[MPROF_C_ALLOCS + k];
			g->tot_kept[k] += ctr[MPROF_C_BYTES + k] - ctr[MPROF_C_FREED + k];
		}
	}
	acc_finish(&a);

	/* Cycles: components of two or more functions. */
	comp = xcalloc(nf ? nf : 1, sizeof(uint32_t));
	ncomp = tarjan(&g->fn, comp);
	csize = xcalloc(ncomp + 1, sizeof(uint32_t));
	for (size_t f = 0; f < nf; f++)
		csize[comp[f]]++;
	cy = xcalloc(ncomp + 1, sizeof(*cy));
	for (size_t c = 0; c < ncomp; c++)
		if (csize[c] > 1)
			cy[g->ncycles++] = (struct cyc){ (uint32_t)c, 0, UINT32_MAX };
	for (size_t k = 0; k < g->ncycles; k++)
		for (size_t f = 0; f < nf; f++)
			if (comp[f] == cy[k].comp) {
				if (cg_sum(g->fn.node[f].sd_b) > cy[k].sd)
					cy[k].sd = cg_sum(g->fn.node[f].sd_b);
				if (f < cy[k].first)
					cy[k].first = (uint32_t)f;
			}
	qsort(cy, g->ncycles, sizeof(*cy), cyc_cmp);
	g->members = xcalloc(g->ncycles + 1, sizeof(uint32_t *));
	g->nmembers = xcalloc(g->ncycles + 1, sizeof(size_t));
	for (size_t k = 0; k < g->ncycles; k++) {
		g->members[k] = xcalloc(csize[cy[k].comp], sizeof(uint32_t));
		for (size_t f = 0; f < nf; f++)
			if (comp[f] == cy[k].comp) {
				g->members[k][g->nmembers[k]++] = (uint32_t)f;
				g->fn.node[f].cycle = (int)k + 1;
			}
	}

	/* The merged level: map frames to nodes, fold repeats (a cycle's
	 * members in a row are one activation of the cycle).  Only its cycle
	 * nodes are ever shown (tables_cg.c): without cycles it is not built,
	 * which halves the graph's memory (a hostile file of distinct
	 * functions costs ~225 bytes a function a level). */
	if (!g->ncycles) {
		free(v);
		free(comp);
		free(csize);
		free(cy);
		return;
	}
	acc_init(&a, &g->merged, nf + g->ncycles);
	for (size_t i = 0; i < m->nstacks; i++) {
		const struct model_stack *s = &m->stacks[i];
		uint32_t n = 0;
		model_path(m, s, v);
		for (uint32_t j = 0; j < s->n; j++) {
			uint32_t fn = m->sites[v[j]].fn, x = callgraph_node_of(g, fn);
			if (n == 0 || v[n - 1] != x || !g->fn.node[fn].cycle)
				v[n++] = x;
		}
		accumulate(&a, v, n, model_counts(m, s, ctr), (uint32_t)i + 1);
	}
	acc_finish(&a);
	for (size_t k = 0; k < g->ncycles; k++)
		g->merged.node[nf + k].cycle = (int)k + 1;
	free(v);
	free(comp);
	free(csize);
	free(cy);
}

static void level_release(struct cg_level *lv)
{
	free(lv->node);
	free(lv->edge);
	free(lv->in_off);
	free(lv->in_idx);
	free(lv->out_off);
	free(lv->out_idx);
}

void callgraph_release(struct callgraph *g)
{
	level_release(&g->fn);
	level_release(&g->merged);
	for (size_t k = 0; k < g->ncycles; k++)
		free(g->members[k]);
	free(g->members);
	free(g->nmembers);
	memset(g, 0, sizeof(*g));
}
