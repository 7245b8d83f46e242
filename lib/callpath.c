/*
 * callpath.c - call path profiles from weighted stacks (callpath.h).
 *
 * Canonical call paths are hash-consed trie nodes: (parent node, frame id)
 * -> node.  A stamp per node (the index of the stack being walked) plays the
 * part of the paper's record lock: a path is credited at most once per
 * stack.
 */
#include "callpath.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

#define NONE UINT32_MAX

struct node {
	uint32_t parent; /* NONE for the trie's root */
	uint32_t id;     /* frame id */
	uint32_t depth;
	uint64_t hits;
	uint64_t stamp;  /* last stack + 1 that credited it */
};

struct trie {
	struct node *n;
	size_t len, cap;
	uint32_t *slot; /* node index + 1 */
	size_t nslots;
};

static size_t thash(uint32_t parent, uint32_t id, size_t mask)
{
	uint64_t k = ((uint64_t)parent << 32 | id) * 0x9e3779b97f4a7c15ull;
	return (size_t)(k >> 21) & mask;
}

static uint32_t trie_get(struct trie *t, uint32_t parent, uint32_t id)
{
	size_t i;

	if (2 * (t->len + 1) > t->nslots) {
		t->nslots = t->nslots ? 2 * t->nslots : 1024;
		free(t->slot);
		t->slot = xcalloc(t->nslots, sizeof(uint32_t));
		for (size_t k = 0; k < t->len; k++) {
			for (i = thash(t->n[k].parent, t->n[k].id, t->nslots - 1); t->slot[i];
			     i = (i + 1) & (t->nslots - 1))
				;
			t->slot[i] = (uint32_t)k + 1;
		}
	}
	for (i = thash(parent, id, t->nslots - 1); t->slot[i]; i = (i + 1) & (t->nslots - 1)) {
		struct node *x = &t->n[t->slot[i] - 1];
		if (x->parent == parent && x->id == id)
			return t->slot[i] - 1;
	}
	util_grow(&t->n, &t->cap, t->len + 1, sizeof(*t->n));
	t->n[t->len] = (struct node){ parent, id, parent == NONE ? 0 : t->n[parent].depth + 1, 0, 0 };
	t->slot[i] = (uint32_t)++t->len;
	return (uint32_t)t->len - 1;
}

static void credit(struct trie *t, uint32_t x, uint64_t w, uint64_t stamp)
{
	if (t->n[x].stamp != stamp) {
		t->n[x].stamp = stamp;
		t->n[x].hits += w;
	}
}

/* The paper's Canonicalize-name: the nearest proper ancestor of cp with
 * the same frame id, else cp itself. */
static uint32_t canonical(const struct trie *t, uint32_t cp)
{
	uint32_t id = t->n[cp].id;

	for (uint32_t p = t->n[cp].parent; p != NONE; p = t->n[p].parent)
		if (t->n[p].id == id)
			return p;
	return cp;
}

/* ---- output: the trie depth first, children by decreasing hits ------- */

static const struct trie *sort_t;

static int child_cmp(const void *a, const void *b)
{
	const struct node *x = &sort_t->n[*(const uint32_t *)a], *y = &sort_t->n[*(const uint32_t *)b];

	if (x->hits != y->hits)
		return x->hits > y->hits ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* reverse: the trie grows outward (down profiles: walking to the root gives
 * innermost first, so reverse). */
static void emit(struct trie *t, int reverse, uint64_t total, struct cp_result *r)
{
	uint32_t *off = xcalloc(t->len + 1, sizeof(uint32_t)), *kids = xcalloc(t->len + 1, sizeof(uint32_t));
	uint32_t *fill = xcalloc(t->len + 1, sizeof(uint32_t)), *roots = xcalloc(t->len + 1, sizeof(uint32_t));
	uint32_t *stack = xcalloc(t->len + 1, sizeof(uint32_t));
	size_t nroots = 0, sp = 0, cap = 0;

	memset(r, 0, sizeof(*r));
	r->total = total;
	/* CSR children lists of nodes with hits. */
	for (size_t k = 0; k < t->len; k++)
		if (t->n[k].hits && t->n[k].parent != NONE)
			off[t->n[k].parent + 1]++;
	for (size_t k = 0; k < t->len; k++)
		off[k + 1] += off[k];
	for (size_t k = 0; k < t->len; k++) {
		if (!t->n[k].hits)
			continue;
		if (t->n[k].parent == NONE)
			roots[nroots++] = (uint32_t)k;
		else
			kids[off[t->n[k].parent] + fill[t->n[k].parent]++] = (uint32_t)k;
	}
	sort_t = t;
	qsort(roots, nroots, sizeof(uint32_t), child_cmp);
	for (size_t k = 0; k < t->len; k++)
		qsort(kids + off[k], off[k + 1] - off[k], sizeof(uint32_t), child_cmp);
	/* Preorder; push children in reverse so the biggest comes out first. */
	for (size_t i = nroots; i-- > 0;)
		stack[sp++] = roots[i];
	while (sp) {
		uint32_t x = stack[--sp];
		struct cp_entry *e;
		uint32_t len = t->n[x].depth + 1, j = 0;

		util_grow(&r->e, &cap, r->n + 1, sizeof(*r->e));
		e = &r->e[r->n++];
		e->len = len;
		e->depth = t->n[x].depth;
		e->hits = t->n[x].hits;
		e->path = xcalloc(len, sizeof(uint32_t));
		for (uint32_t p = x; p != NONE; p = t->n[p].parent, j++)
			e->path[reverse ? len - 1 - j : j] = t->n[p].id;
		for (uint32_t k = off[x + 1]; k-- > off[x];)
			stack[sp++] = kids[k];
	}
	free(off);
	free(kids);
	free(fill);
	free(roots);
	free(stack);
}

static uint64_t total_of(const struct cp_input *in)
{
	uint64_t t = 0;

	for (size_t i = 0; i < in->nstacks; i++)
		t += in->weight[i];
	return t;
}

static void trie_free(struct trie *t)
{
	free(t->n);
	free(t->slot);
}

void callpath_down(const struct cp_input *in, const uint8_t *is_root, struct cp_result *r)
{
	struct trie t = { 0 };

	for (size_t s = 0; s < in->nstacks; s++) {
		const uint32_t *f = in->ids[s];
		uint32_t n = in->n[s], i, parent;
		uint64_t w = in->weight[s];

		if (!w)
			continue;
		for (i = 0; i < n && !is_root[f[i]]; i++)
			;
		if (i == n)
			continue;
		/* Summarize-below-root stops at the first root; CPP-Rec walks on. */
		parent = NONE;
		for (; i < n; i++) {
			uint32_t cp = trie_get(&t, parent, f[i]);
			credit(&t, cp, w, s + 1);
			parent = canonical(&t, cp);
		}
	}
	emit(&t, 1, total_of(in), r);
	trie_free(&t);
}

void callpath_up(const struct cp_input *in, const uint8_t *is_root, struct cp_result *r)
{
	struct trie t = { 0 };

	for (size_t s = 0; s < in->nstacks; s++) {
		const uint32_t *f = in->ids[s];
		uint32_t n = in->n[s], parent;
		uint64_t w = in->weight[s];
		int64_t i;

		if (!w)
			continue;
		for (i = (int64_t)n - 1; i >= 0 && !is_root[f[i]]; i--)
			;
		if (i < 0)
			continue;
		/* From the innermost root toward the callers, mirroring the
		 * downward walk: the trie's parent is the path without its
		 * first (outermost) function. */
		parent = NONE;
		for (; i >= 0; i--) {
			uint32_t cp = trie_get(&t, parent, f[i]);
			credit(&t, cp, w, s + 1);
			parent = canonical(&t, cp);
		}
	}
	emit(&t, 0, total_of(in), r);
	trie_free(&t);
}

static int entry_cmp(const void *a, const void *b)
{
	const struct cp_entry *x = a, *y = b;

	if (x->hits != y->hits)
		return x->hits > y->hits ? -1 : 1;
	return x->path[0] < y->path[0] ? -1 : x->path[0] > y->path[0];
}

static void flat(const struct cp_input *in, int body, struct cp_result *r)
{
	uint64_t *hits = xcalloc(in->nids + 1, sizeof(uint64_t));
	uint64_t *stamp = xcalloc(in->nids + 1, sizeof(uint64_t));
	size_t cap = 0;

	memset(r, 0, sizeof(*r));
	r->total = total_of(in);
	for (size_t s = 0; s < in->nstacks; s++) {
		const uint32_t *f = in->ids[s];
		uint32_t n = in->n[s];

		if (!n || !in->weight[s])
			continue;
		if (body) {
			hits[f[n - 1]] += in->weight[s];
			continue;
		}
		for (uint32_t i = 0; i < n; i++)
			if (stamp[f[i]] != s + 1) {
				stamp[f[i]] = s + 1;
				hits[f[i]] += in->weight[s];
			}
	}
	for (size_t id = 0; id < in->nids; id++) {
		struct cp_entry *e;
		if (!hits[id])
			continue;
		util_grow(&r->e, &cap, r->n + 1, sizeof(*r->e));
		e = &r->e[r->n++];
		e->path = xcalloc(1, sizeof(uint32_t));
		e->path[0] = (uint32_t)id;
		e->len = 1;
		e->depth = 0;
		e->hits = hits[id];
	}
	if (r->n) /* no entry (no stack, or no hits): r->e is NULL */
		qsort(r->e, r->n, sizeof(*r->e), entry_cmp);
	free(hits);
	free(stamp);
}

void callpath_functions(const struct cp_input *in, struct cp_result *r)
{
	flat(in, 0, r);
}

void callpath_bodies(const struct cp_input *in, struct cp_result *r)
{
	flat(in, 1, r);
}

void callpath_tree(const struct cp_input *in, struct cp_result *r)
{
	struct trie t = { 0 };

	for (size_t s = 0; s < in->nstacks; s++) {
		uint32_t parent = NONE;
		for (uint32_t i = 0; i < in->n[s]; i++) {
			parent = trie_get(&t, parent, in->ids[s][i]);
			t.n[parent].hits += in->weight[s];
		}
	}
	emit(&t, 1, total_of(in), r);
	trie_free(&t);
}

void callpath_result_free(struct cp_result *r)
{
	for (size_t i = 0; i < r->n; i++)
		free(r->e[i].path);
	free(r->e);
	memset(r, 0, sizeof(*r));
}
