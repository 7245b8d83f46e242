/*
 * callpath.c - call path profiles from weighted stacks (callpath.h).
 *
 * Canonical call paths are hash-consed trie nodes: (parent node, frame id)
 * -> node.  A stamp per node (the index of the stack being walked) plays the
 * part of the paper's record lock: a path is credited at most once per
 * stack.
 *
 * What a view costs is bounded by what the input stores, not by the frames
 * its stacks add up to (a small data file can make stacks that add up to
 * 2^30 frames): a downward profile or the sample tree has at most a trie
 * node per node of the caller's calling context tree, since the canonical
 * path at a frame depends only on the frames outer to it; an upward profile
 * grows from each stack's innermost root toward the callers and may make a
 * node per frame walked, so every trie is held to in->max_paths nodes.
 * Entries name trie nodes rather than copying their paths (a 4096-deep path
 * copied at each of its 4096 prefixes is 64 MB); canonicalization looks the
 * repeated id up in the current path instead of walking the ancestors.
 */
#include "model/callpath.h"
#include "base/pairmap.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>

#define NONE UINT32_MAX

/* A trie node; its parent (NONE for an outermost one) and frame id are
 * its key in the trie's pairmap. */
struct node {
	uint32_t depth;
	uint32_t stamp;  /* last stack + 1 that credited it */
	uint64_t hits;
	uint64_t calls;
};

struct trie {
	struct pairmap map; /* (parent, id) -> node */
	struct node *n;     /* the nodes, by index */
	size_t cap, max;
	int over;           /* more than max nodes were asked for */
};

/* The node (parent, id), made if new; NONE once the trie is full. */
static uint32_t trie_get(struct trie *t, uint32_t parent, uint32_t id)
{
	int made;
	uint32_t x = pairmap_get(&t->map, parent, id, t->max, &made);

	if (x == PAIRMAP_NONE) {
		t->over = 1;
		return NONE;
	}
	if (made) {
		util_grow(&t->n, &t->cap, (size_t)x + 1, sizeof(*t->n));
		t->n[x] = (struct node){ parent == NONE ? 0 : t->n[parent].depth + 1, 0, 0, 0 };
	}
	return x;
}

static void credit(struct trie *t, uint32_t x, uint64_t w, uint64_t calls, uint32_t stamp)
{
	if (t->n[x].stamp != stamp) {
		t->n[x].stamp = stamp;
		t->n[x].hits += w;
		t->n[x].calls += calls;
	}
}

static uint64_t calls_of(const struct cp_input *in, size_t s)
{
	return in->calls ? in->calls[s] : 0;
}

static uint32_t path_of(const struct cp_input *in, size_t s, uint32_t *out)
{
	return in->path(in->ctx, s, out);
}

/*
 * The canonical path being walked (the paper's Canonicalize-name): its
 * nodes by depth, and where each id sits on it.  Ids on a canonical path
 * are distinct, so a repeated id's earlier node is found at once.
 */
struct walk {
	uint32_t *node; /* node[d]: the path's node at depth d */
	uint32_t *at;   /* at[id]: its depth on the path, if node[at[id]] has it */
	uint32_t len;
};

/* Step from the path's end to id's node cp: the path becomes cp's canonical
 * name, the nearest node on it with the same id, else cp itself. */
static void walk_step(struct walk *w, const struct trie *t, uint32_t id, uint32_t cp)
{
	uint32_t d = w->at[id];

	if (d < w->len && pairmap_b(&t->map, w->node[d]) == id) {
		w->len = d + 1;
	} else {
		w->at[id] = w->len;
		w->node[w->len++] = cp;
	}
}

/* ---- output: the trie depth first, children by decreasing hits ------- */

static const struct trie *sort_t;

static int child_cmp(const void *a, const void *b)
{
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
	const struct node *x = &sort_t->n[i], *y = &sort_t->n[j];
	uint32_t xi = pairmap_b(&sort_t->map, i), yi = pairmap_b(&sort_t->map, j);

	if (x->hits != y->hits)
		return x->hits > y->hits ? -1 : 1;
	if (x->calls != y->calls)
		return x->calls > y->calls ? -1 : 1;
	return xi < yi ? -1 : xi > yi;
}

/* reverse: the trie grows outward (down profiles: walking to the root gives
 * innermost first, so reverse).  The trie's links move into r. */
static void emit(struct trie *t, int reverse, uint64_t total, struct cp_result *r)
{
	size_t len = t->map.n;
	uint32_t *off = xcalloc(len + 1, sizeof(uint32_t)), *kids = xcalloc(len + 1, sizeof(uint32_t));
	uint32_t *fill = xcalloc(len + 1, sizeof(uint32_t)), *roots = xcalloc(len + 1, sizeof(uint32_t));
	uint32_t *stack = xcalloc(len + 1, sizeof(uint32_t));
	size_t nroots = 0, sp = 0, cap = 0;

	memset(r, 0, sizeof(*r));
	r->total = total;
	r->reverse = reverse;
	pairmap_drop_index(&t->map); /* no more lookups: its room is the entries' */
	/* CSR children lists of nodes with hits (or calls). */
	for (size_t k = 0; k < len; k++) {
		uint32_t p = pairmap_a(&t->map, (uint32_t)k);
		if ((t->n[k].hits || t->n[k].calls) && p != NONE)
			off[p + 1]++;
	}
	for (size_t k = 0; k < len; k++)
		off[k + 1] += off[k];
	for (size_t k = 0; k < len; k++) {
		uint32_t p = pairmap_a(&t->map, (uint32_t)k);
		if (!t->n[k].hits && !t->n[k].calls)
			continue;
		if (p == NONE)
			roots[nroots++] = (uint32_t)k;
		else
			kids[off[p] + fill[p]++] = (uint32_t)k;
	}
	sort_t = t;
	qsort(roots, nroots, sizeof(uint32_t), child_cmp);
	for (size_t k = 0; k < len; k++)
		qsort(kids + off[k], off[k + 1] - off[k], sizeof(uint32_t), child_cmp);
	/* Preorder; push children in reverse so the biggest comes out first. */
	for (size_t i = nroots; i-- > 0;)
		stack[sp++] = roots[i];
	while (sp) {
		uint32_t x = stack[--sp];
		struct cp_entry *e;

		util_grow(&r->e, &cap, r->n + 1, sizeof(*r->e));
		e = &r->e[r->n++];
		e->node = x;
		e->len = t->n[x].depth + 1;
		e->depth = t->n[x].depth;
		e->hits = t->n[x].hits;
		e->calls = t->n[x].calls;
		if (e->len > r->maxlen)
			r->maxlen = e->len;
		for (uint32_t k = off[x + 1]; k-- > off[x];)
			stack[sp++] = kids[k];
	}
	/* Keep the links the paths are spelled from; fill and kids are
	 * len + 1 long, room enough. */
	for (size_t k = 0; k < len; k++) {
		fill[k] = pairmap_a(&t->map, (uint32_t)k);
		kids[k] = pairmap_b(&t->map, (uint32_t)k);
	}
	r->parent = fill;
	r->id = kids;
	free(off);
	free(roots);
	free(stack);
}

void callpath_path(const struct cp_result *r, const struct cp_entry *e, uint32_t *out)
{
	uint32_t x = e->node;

	if (!r->parent) {
		out[0] = x;
		return;
	}
	for (uint32_t j = 0; j < e->len; j++, x = r->parent[x])
		out[r->reverse ? e->len - 1 - j : j] = r->id[x];
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
	pairmap_release(&t->map);
}

/* A view's result from its trie, or -1 (r empty) if the trie overflowed. */
static int finish(struct trie *t, int reverse, const struct cp_input *in, struct cp_result *r)
{
	int over = t->over;

	if (over)
		memset(r, 0, sizeof(*r));
	else
		emit(t, reverse, total_of(in), r);
	trie_free(t);
	return over ? -1 : 0;
}

/*
 * Down (up = 0) and up profiles.  Down: from each stack's first (outermost)
 * root toward its innermost frame; summarize-below-root stops at the first
 * root, CPP-Rec walks on.  Up: from the innermost root toward the callers,
 * mirroring it: the trie's parent is the path without its first
 * (outermost) function.
 */
static int directed(const struct cp_input *in, const uint8_t *is_root, int up, struct cp_result *r)
{
	struct trie t = { .max = in->max_paths };
	struct walk w;
	uint32_t *f = xcalloc((size_t)in->maxn + 1, sizeof(uint32_t));

	w.node = xcalloc((size_t)in->maxn + 1, sizeof(uint32_t));
	w.at = xcalloc(in->nids + 1, sizeof(uint32_t));
	for (size_t s = 0; s < in->nstacks && !t.over; s++) {
		uint32_t n, i;
		uint64_t wt = in->weight[s], cl = calls_of(in, s), upcl;

		if (!wt && !cl)
			continue;
		n = path_of(in, s, f);
		if (up) {
			/* Reversed: innermost first. */
			for (i = 0; i < n / 2; i++) {
				uint32_t x = f[i];
				f[i] = f[n - 1 - i];
				f[n - 1 - i] = x;
			}
		}
		for (i = 0; i < n && !is_root[f[i]]; i++)
			;
		/* Calls: up, the root's own, from every caller path; down,
		 * the innermost function's, on the stack's whole path. */
		upcl = up && i == 0 ? cl : 0;
		w.len = 0;
		for (; i < n; i++) {
			uint32_t parent = w.len ? w.node[w.len - 1] : NONE;
			uint32_t cp = trie_get(&t, parent, f[i]);
			if (cp == NONE)
				break;
			credit(&t, cp, wt, upcl, (uint32_t)s + 1);
			walk_step(&w, &t, f[i], cp);
		}
		if (!up && i == n && w.len)
			t.n[w.node[w.len - 1]].calls += cl;
	}
	free(f);
	free(w.node);
	free(w.at);
	return finish(&t, !up, in, r);
}

int callpath_down(const struct cp_input *in, const uint8_t *is_root, struct cp_result *r)
{
	return directed(in, is_root, 0, r);
}

int callpath_up(const struct cp_input *in, const uint8_t *is_root, struct cp_result *r)
{
	return directed(in, is_root, 1, r);
}

static int entry_cmp(const void *a, const void *b)
{
	const struct cp_entry *x = a, *y = b;

	if (x->hits != y->hits)
		return x->hits > y->hits ? -1 : 1;
	if (x->calls != y->calls)
		return x->calls > y->calls ? -1 : 1;
	return x->node < y->node ? -1 : x->node > y->node;
}

static void flat(const struct cp_input *in, int body, struct cp_result *r)
{
	uint64_t *hits = xcalloc(in->nids + 1, sizeof(uint64_t));
	uint64_t *calls = xcalloc(in->nids + 1, sizeof(uint64_t));
	uint64_t *stamp = xcalloc(in->nids + 1, sizeof(uint64_t));
	uint32_t *f = xcalloc((size_t)in->maxn + 1, sizeof(uint32_t));
	size_t cap = 0;

	memset(r, 0, sizeof(*r));
	r->total = total_of(in);
	for (size_t s = 0; s < in->nstacks; s++) {
		uint32_t n;
		uint64_t cl = calls_of(in, s);

		if ((!in->weight[s] && !cl) || !(n = path_of(in, s, f)))
			continue;
		calls[f[n - 1]] += cl;
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
		if (!hits[id] && !calls[id])
			continue;
		util_grow(&r->e, &cap, r->n + 1, sizeof(*r->e));
		e = &r->e[r->n++];
		e->node = (uint32_t)id;
		e->len = 1;
		e->depth = 0;
		e->hits = hits[id];
		e->calls = calls[id];
	}
	r->maxlen = 1;
	if (r->n) /* no entry (no stack, or no hits): r->e is NULL */
		qsort(r->e, r->n, sizeof(*r->e), entry_cmp);
	free(hits);
	free(calls);
	free(stamp);
	free(f);
}

void callpath_functions(const struct cp_input *in, struct cp_result *r)
{
	flat(in, 0, r);
}

void callpath_bodies(const struct cp_input *in, struct cp_result *r)
{
	flat(in, 1, r);
}

int callpath_tree(const struct cp_input *in, struct cp_result *r)
{
	struct trie t = { .max = in->max_paths };
	uint32_t *f = xcalloc((size_t)in->maxn + 1, sizeof(uint32_t));

	for (size_t s = 0; s < in->nstacks && !t.over; s++) {
		uint32_t parent = NONE, n = path_of(in, s, f), i;
		for (i = 0; i < n; i++) {
			parent = trie_get(&t, parent, f[i]);
			if (parent == NONE)
				break;
			t.n[parent].hits += in->weight[s];
		}
		if (i == n && n)
			t.n[parent].calls += calls_of(in, s);
	}
	free(f);
	return finish(&t, 1, in, r);
}

void callpath_result_free(struct cp_result *r)
{
	free(r->e);
	free(r->parent);
	free(r->id);
	memset(r, 0, sizeof(*r));
}
