/*
 * fntrie.c - owns the breadth-first trie of function ids (fntrie_*).
 *
 * The model's tree (model.h) has a node per frame the file holds, in
 * runs: a run's nodes each called from the one before, its first from
 * runs[r].parent.  A stack's path is the innermost n nodes up from its
 * leaf, so it starts at the tree's root or, frames outer to main dropped,
 * at the outermost main; which one depends on the node only (a node with
 * a main at or above it starts every path through it at that main), so
 * each model node stands for one trie node, and the trie is the tree's
 * nodes that some path holds, merged level by level where parent and
 * function agree.
 *
 * A level is its model nodes in node order, each with its trie parent: a
 * table of the level's (parent, function) pairs numbers them as met, and
 * each node's children make the next level, in node order again (a
 * node's next in its run follows it; the runs hanging from it are sorted
 * in).  Walking the nodes in their order walks the model's arrays
 * forward, where walking them by trie node jumped about 90 MB for every
 * frame.  Memory: five bits a model node, two levels, and the table of
 * one.
 */
#include "model/fntrie.h"

#include <stdlib.h>
#include <string.h>

#include "model/model.h"
#include "base/util.h"

/* How many items ahead a level's walk reads the model. */
#define PREFETCH 16

struct item {
	uint32_t tp;   /* trie parent */
	uint32_t node; /* model node */
	uint32_t fn;   /* its function, read with its parent's */
};

/* A model node (or run) and what it belongs to, for sorted look-ups. */
struct pair {
	uint32_t key, val;
};

static int bit(const uint64_t *b, size_t i)
{
	return (int)(b[i >> 6] >> (i & 63)) & 1;
}

static void set(uint64_t *b, size_t i)
{
	b[i >> 6] |= 1ull << (i & 63);
}

/* Sort pairs by key, stable: two passes of 16 bits through tmp. */
static void sort_pairs(struct pair *a, size_t n)
{
	struct pair *tmp = xcalloc(n + 1, sizeof(*tmp)), *from = a, *to = tmp;
	size_t *cnt = xcalloc(65536, sizeof(size_t));

	for (int shift = 0; shift < 32; shift += 16) {
		size_t sum = 0;

		memset(cnt, 0, 65536 * sizeof(size_t));
		for (size_t i = 0; i < n; i++)
			cnt[(from[i].key >> shift) & 0xffff]++;
		for (size_t d = 0; d < 65536; d++) {
			size_t c = cnt[d];
			cnt[d] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++)
			to[cnt[(from[i].key >> shift) & 0xffff]++] = from[i];
		from = to;
		to = from == a ? tmp : a;
	}
	/* Two passes: the sorted pairs are back in a. */
	free(cnt);
	free(tmp);
}

void fntrie_order(const uint32_t *leaf, size_t n, uint32_t *order)
{
	uint32_t *tmp = xcalloc(n + 1, sizeof(uint32_t)), *from = order, *to = tmp;
	size_t *cnt = xcalloc(65536, sizeof(size_t));

	for (size_t i = 0; i < n; i++)
		order[i] = (uint32_t)i;
	for (int shift = 0; shift < 32; shift += 16) {
		size_t sum = 0;

		memset(cnt, 0, 65536 * sizeof(size_t));
		for (size_t i = 0; i < n; i++)
			cnt[(leaf[from[i]] >> shift) & 0xffff]++;
		for (size_t d = 0; d < 65536; d++) {
			size_t c = cnt[d];
			cnt[d] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++)
			to[cnt[(leaf[from[i]] >> shift) & 0xffff]++] = from[i];
		from = to;
		to = from == order ? tmp : order;
	}
	free(cnt);
	free(tmp);
}

/* The first of the n pairs with this key, or n if none. */
static size_t first_of(const struct pair *a, size_t n, uint32_t key)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (a[mid].key < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}


struct level {
	struct item *v;
	size_t n, cap;
};

static void push(struct level *l, uint32_t tp, uint32_t node, uint32_t fn)
{
	if (l->n == l->cap)
		util_grow(&l->v, &l->cap, l->n + 1, sizeof(*l->v));
	l->v[l->n++] = (struct item){ tp, node, fn };
}

/* A level's (trie parent, function) pairs and their ids: open
 * addressing, made anew for each level at twice its items. */
struct table {
	uint64_t *key; /* parent << 32 | function, + 1: 0 is empty */
	uint32_t *id;
	size_t mask, cap;
};

static void table_reset(struct table *t, size_t items)
{
	size_t n = 1024;

	while (n < 2 * items)
		n *= 2;
	if (n > t->cap) {
		free(t->key);
		free(t->id);
		t->key = xcalloc(n, sizeof(uint64_t));
		t->id = xcalloc(n, sizeof(uint32_t));
		t->cap = n;
	}
	t->mask = n - 1;
	memset(t->key, 0, n * sizeof(uint64_t));
}

static size_t table_slot(const struct table *t, uint64_t k)
{
	return (size_t)((k * 0x9e3779b97f4a7c15ull) >> 24) & t->mask;
}

/* The id of (tp, fn), *made if it is new (then it is *next, bumped). */
static uint32_t table_get(struct table *t, uint32_t tp, uint32_t fn, size_t *next, int *made)
{
	uint64_t k = ((uint64_t)tp << 32 | fn) + 1;
	size_t i = table_slot(t, k);

	for (; t->key[i]; i = (i + 1) & t->mask)
		if (t->key[i] == k) {
			*made = 0;
			return t->id[i];
		}
	t->key[i] = k;
	t->id[i] = (uint32_t)*next;
	*made = 1;
	return (uint32_t)(*next)++;
}

size_t fntrie_build(const struct model *m, uint32_t *leaf, fntrie_emit_fn *emit, void *ctx)
{
	size_t words = m->nnodes / 64 + 1, nlv = 0, nkids = 0, nlf = 0, id = 0;
	/* used: on some stack's path; start: where paths start; isleaf: a
	 * stack ends there; haskids: a run hangs from it; first: a run's
	 * first node (the node before it is not its caller). */
	uint64_t *used = xcalloc(words, sizeof(uint64_t)), *start = xcalloc(words, sizeof(uint64_t));
	uint64_t *isleaf = xcalloc(words, sizeof(uint64_t)), *haskids = xcalloc(words, sizeof(uint64_t));
	uint64_t *first = xcalloc(words, sizeof(uint64_t));
	struct pair *lv = xcalloc(m->nstacks + 1, sizeof(*lv)), *kids, *lf;
	struct level cur = { 0 }, next = { 0 }, hung = { 0 };
	struct table t = { 0 };
	/* Each site's function: a small array, where the sites are 40 bytes
	 * each. */
	uint32_t *fn = xcalloc(m->nsites + 1, sizeof(uint32_t));
	uint8_t *many = NULL;
	size_t nmany = 0, lo = 0, nlo = 0; /* the first id of the last level, of this one */

	/* Every path marked, from its leaf up, as far as a node marked
	 * before: the rest of the way was marked then, to the same start. */
	for (size_t i = 0; i < m->nstacks; i++) {
		const struct model_stack *s = &m->stacks[i];
		uint32_t x = s->leaf, r = s->run, k = s->n;

		leaf[i] = FNTRIE_ROOT;
		if (!k)
			continue;
		lv[nlv++] = (struct pair){ x, (uint32_t)i };
		set(isleaf, x);
		while (x != MODEL_NONE && !bit(used, x)) {
			set(used, x);
			if (--k == 0) {
				set(start, x);
				break;
			}
			if (x > m->runs[r].first) {
				x--;
			} else {
				x = m->runs[r].parent;
				r = m->runs[r].parent_run;
			}
		}
	}
	sort_pairs(lv, nlv);
	lf = xcalloc(nlv + 1, sizeof(*lf));
	kids = xcalloc(m->nruns + 1, sizeof(*kids));
	for (size_t r = 0; r < m->nruns; r++) {
		set(first, m->runs[r].first);
		if (m->runs[r].parent != MODEL_NONE) {
			kids[nkids++] = (struct pair){ m->runs[r].parent, m->runs[r].first };
			set(haskids, m->runs[r].parent);
		}
	}
	sort_pairs(kids, nkids);

	for (size_t k = 0; k < m->nsites; k++)
		fn[k] = m->sites[k].fn;
	/* Level 0: where paths start. */
	for (size_t w = 0; w < words; w++)
		for (uint64_t b = start[w]; b; b &= b - 1) {
			uint32_t x = (uint32_t)(w * 64 + (size_t)__builtin_ctzll(b));
			push(&cur, FNTRIE_ROOT, x, fn[m->site[x]]);
		}

	while (cur.n) {
		struct level swap;
		size_t nk = 0, popular = 0;

		/* The parents are the last level's ids, lo on (the root
		 * alone first): how many items each has, 1 or more.  One
		 * item: its node is new, no look-up (most, below the top
		 * levels); more: the table, which holds only theirs. */
		util_grow(&many, &nmany, id - lo + 1, 1);
		memset(many, 0, id - lo + 1);
		for (size_t i = 0; i < cur.n; i++) {
			size_t j = cur.v[i].tp == FNTRIE_ROOT ? 0 : cur.v[i].tp - lo;
			if (many[j] == 1) /* the first item of this parent, and this one */
				popular += 2;
			else if (many[j] == 2)
				popular++;
			many[j] += many[j] < 2;
		}
		table_reset(&t, popular);
		next.n = hung.n = 0;
		for (size_t i = 0; i < cur.n; i++) {
			uint32_t x = cur.v[i].node, c = x + 1, f = cur.v[i].fn, me, tp = cur.v[i].tp;
			int made = 1;

			/* A level's nodes are far apart in the model's arrays:
			 * what an item a few ahead reads is asked for now. */
			if (i + PREFETCH < cur.n) {
				const struct item *a = &cur.v[i + PREFETCH];
				__builtin_prefetch(&m->site[a->node + 1]);
				if (popular)
					__builtin_prefetch(&t.key[table_slot(
						&t, ((uint64_t)a->tp << 32 | a->fn) + 1)]);
			}
			if (many[tp == FNTRIE_ROOT ? 0 : tp - lo] > 1)
				me = table_get(&t, tp, f, &id, &made);
			else
				me = (uint32_t)id++;
			if (made)
				emit(ctx, tp, f);
			if (bit(isleaf, x))
				lf[nlf++] = (struct pair){ x, me };
			/* Its next in the run: in node order, as x is. */
			if (c < m->nnodes && !bit(first, c) && bit(used, c) && !bit(start, c))
				push(&next, me, c, fn[m->site[c]]);
			/* The runs it calls: first nodes elsewhere, sorted in
			 * below. */
			if (bit(haskids, x))
				for (size_t q = first_of(kids, nkids, x); q < nkids && kids[q].key == x;
				     q++) {
					c = kids[q].val;
					if (bit(used, c) && !bit(start, c))
						push(&hung, me, c, fn[m->site[c]]);
				}
		}
		lo = nlo;
		nlo = id;
		/* The hung runs' first nodes into node order: both lists are
		 * sorted, merged into cur. */
		if (hung.n) {
			struct pair *h = xcalloc(hung.n, sizeof(*h));

			/* (node, index in hung): sorted by node. */
			for (size_t q = 0; q < hung.n; q++)
				h[q] = (struct pair){ hung.v[q].node, (uint32_t)q };
			sort_pairs(h, hung.n);
			cur.n = 0;
			for (size_t q = 0; q < next.n || nk < hung.n;) {
				const struct item *e = nk < hung.n && (q == next.n ||
									h[nk].key < next.v[q].node)
							       ? &hung.v[h[nk++].val]
							       : &next.v[q++];
				push(&cur, e->tp, e->node, e->fn);
			}
			free(h);
			continue;
		}
		swap = cur;
		cur = next;
		next = swap;
	}

	/* Each stack's node: the leaves met, by model node, joined with the
	 * stacks by leaf. */
	sort_pairs(lf, nlf);
	for (size_t i = 0, q = 0; i < nlv; i++) {
		while (q < nlf && lf[q].key < lv[i].key)
			q++;
		if (q < nlf && lf[q].key == lv[i].key)
			leaf[lv[i].val] = lf[q].val;
	}
	free(cur.v);
	free(next.v);
	free(hung.v);
	free(t.key);
	free(t.id);
	free(lf);
	free(kids);
	free(lv);
	free(used);
	free(start);
	free(isleaf);
	free(haskids);
	free(first);
	free(many);
	free(fn);
	return id;
}
