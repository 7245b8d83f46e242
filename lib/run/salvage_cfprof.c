/*
 * salvage_cfprof.c - owns writing a cfprof profile from a dead program's
 * keep (salvage_cfprof, keeper.h): what runtime/cfprof/save.c writes at
 * exit, read from every thread's calling context tree (tree.h's root,
 * struct cf_keep) as it was at the moment of death.
 *
 * As the save: a node is written if it has counts or a descendant to
 * write, and is not unprofiled; a direct recursion's node (CF_SELF) has
 * the calls counted in the nodes it is the self of (tree.h: rcalls) too;
 * a thread's root for its own hits only;
 * each node after its parent, its outer frames by reference to the
 * parent's stack.  The image is the dead program's memory: a node is read
 * only whole from it, its parent must be an earlier node of its thread one
 * level up, and a node whose parent is not written is not either (INFO's
 * salvage_lost counts them).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format/format.h"
#include "run/keeper.h"
#include "format/keepfmt.h"
#include "tree.h"
#include "base/util.h"

#define MAX_THREADS (1u << 20)
#define MAX_NODES (1ull << 27)

struct cf_img {
	struct salvage *s;
	uint64_t size;        /* of a node */
	int nres;
	uint64_t *addr;       /* every node, thread by thread, in the order made */
	uint32_t *tid;        /* its thread */
	uint8_t *root, *put;  /* a thread's root; to be written */
	int64_t *parent;      /* the parent's index, -1: none or not found */
	uint64_t *rsum;       /* the rcalls that are its calls */
	uint64_t n, cap;
	uint64_t *slot;       /* address -> index + 1 (open addressing) */
	uint64_t mask;
};

static const struct cf_node *node(const struct cf_img *c, uint64_t i)
{
	return keeper_at(c->s->k, c->addr[i], c->size);
}

static uint64_t hash(uint64_t a)
{
	a *= 0x9e3779b97f4a7c15ull;
	return a ^ a >> 29;
}

static int64_t find(const struct cf_img *c, uint64_t a)
{
	for (uint64_t k = hash(a) & c->mask; c->slot[k]; k = (k + 1) & c->mask)
		if (c->addr[c->slot[k] - 1] == a)
			return (int64_t)c->slot[k] - 1;
	return -1;
}

/* One thread's nodes, chunk by chunk as the save walks them. */
static void add_thread(struct cf_img *c, const struct cf_thread *t)
{
	uint64_t a = (uint64_t)(uintptr_t)t->chunks, first = c->n, nchunks = 0;
	/* A cycle in a scribbled list ends when it has given as many nodes
	 * as the image can hold. */
	uint64_t max = c->s->k->len / c->size < MAX_NODES ? c->s->k->len / c->size : MAX_NODES;

	while (a && nchunks++ < max && c->n < max) {
		const struct cf_chunk *ch = keeper_at(c->s->k, a, sizeof *ch);
		uint64_t used;

		if (!ch)
			break;
		used = ch->used < ch->size ? ch->used : ch->size;
		for (uint64_t off = 0; off + c->size <= used && c->n < max; off += c->size) {
			util_grow(&c->addr, &c->cap, c->n + 1, sizeof *c->addr);
			c->addr[c->n] = a + offsetof(struct cf_chunk, mem) + off;
			c->n++;
		}
		a = (uint64_t)(uintptr_t)ch->next;
	}
	c->tid = xrealloc(c->tid, (c->n + 1) * sizeof *c->tid);
	c->root = xrealloc(c->root, c->n + 1);
	for (uint64_t i = first; i < c->n; i++) {
		c->tid[i] = t->tid;
		c->root[i] = i == first;
	}
}

static int has_counts(const struct cf_img *c, const struct cf_node *x, uint64_t i)
{
	if (x->calls || c->rsum[i])
		return 1;
	for (int k = 0; k < c->nres; k++)
		if (x->hits[k])
			return 1;
	return 0;
}

int salvage_cfprof(struct salvage *s)
{
	struct cf_img c = { .s = s };
	const struct cf_keep *k;
	const struct cf_thread **th = NULL;
	uint64_t a, nt = 0, tcap = 0, nput = 0, lost = 0, index = 0, *out;
	char num[4][24];

	if (s->k->h->layout != CF_KEEP_LAYOUT) {
		snprintf(s->why, sizeof s->why,
			 "its keep was written by a libcfprof.so of another version");
		return -1;
	}
	k = keeper_at(s->k, s->k->h->root, sizeof *k);
	if (!k || k->nres < 0 || k->stride < k->nres || k->stride > FORMAT_MAX_COUNTERS) {
		snprintf(s->why, sizeof s->why, "its keep has no calling context trees");
		return -1;
	}
	c.nres = k->nres;
	/* As tree_node_size: room for stride hits, nres of them written. */
	c.size = (sizeof(struct cf_node) + (uint64_t)k->stride * 8 + 15) & ~(uint64_t)15;
	/* The registry is newest first; the save writes the oldest first. */
	for (a = k->threads; a && nt < MAX_THREADS && nt < s->k->len / sizeof(struct cf_thread); nt++) {
		const struct cf_thread *t = keeper_at(s->k, a, sizeof *t);

		if (!t)
			break;
		util_grow(&th, &tcap, nt + 1, sizeof *th);
		th[nt] = t;
		a = (uint64_t)(uintptr_t)t->next;
	}
	for (uint64_t i = nt; i-- > 0;)
		add_thread(&c, th[i]);
	/* Every node's parent, by address. */
	for (c.mask = 1; c.mask < 2 * c.n + 2; c.mask <<= 1)
		;
	c.slot = xcalloc(c.mask, sizeof *c.slot);
	c.mask--;
	for (uint64_t i = 0; i < c.n; i++) {
		uint64_t h = hash(c.addr[i]) & c.mask;
		while (c.slot[h])
			h = (h + 1) & c.mask;
		c.slot[h] = i + 1;
	}
	c.parent = xmalloc((c.n + 1) * sizeof *c.parent);
	c.put = xcalloc(c.n + 1, 1);
	for (uint64_t i = 0; i < c.n; i++) {
		const struct cf_node *x = node(&c, i), *p;
		int64_t pi = x && x->parent ? find(&c, (uint64_t)(uintptr_t)x->parent) : -1;

		/* A parent is an earlier node of the thread, one level up. */
		if (pi >= 0 && ((uint64_t)pi >= i || c.tid[pi] != c.tid[i] || !(p = node(&c, (uint64_t)pi)) ||
				p->depth + 1 != x->depth))
			pi = -1;
		c.parent[i] = pi;
	}
	/* A node's repeats are its self's calls: an earlier node of its
	 * thread. */
	c.rsum = xcalloc(c.n + 1, sizeof *c.rsum);
	for (uint64_t i = 0; i < c.n; i++) {
		const struct cf_node *x = node(&c, i);
		int64_t si = x && x->rcalls && x->self ? find(&c, (uint64_t)(uintptr_t)x->self) : -1;

		if (si >= 0 && c.tid[si] == c.tid[i])
			c.rsum[si] += x->rcalls;
	}
	/* Mark, as the save: children before parents, backwards. */
	for (uint64_t i = c.n; i-- > 0;) {
		const struct cf_node *x = node(&c, i);

		if (!x || (x->flags & CF_UNPROFILED) || x->depth > CF_MAX_TREE)
			continue;
		if (c.root[i]) {
			c.put[i] = (uint8_t)has_counts(&c, x, i);
			continue;
		}
		c.put[i] |= (uint8_t)has_counts(&c, x, i);
		if (c.put[i] && c.parent[i] >= 0)
			c.put[c.parent[i]] = 2; /* a descendant's: written as a path */
	}
	/* A path refers to its parent's stack: only under a written one. */
	out = xmalloc((c.n + 1) * sizeof *out);
	for (uint64_t i = 0; i < c.n; i++) {
		const struct cf_node *x = node(&c, i);

		if (c.put[i] && !c.root[i] && x->depth > 1 &&
		    (c.parent[i] < 0 || c.root[c.parent[i]] || !c.put[c.parent[i]])) {
			c.put[i] = 0;
			lost++;
		}
		nput += c.put[i] != 0;
	}
	snprintf(num[0], sizeof num[0], "%" PRIu64, nput);
	snprintf(num[1], sizeof num[1], "%" PRIu64, nt);
	snprintf(num[2], sizeof num[2], "%" PRIu64, k->failed);
	snprintf(num[3], sizeof num[3], "%" PRIu64 " paths", lost);
	const char *const kv[][2] = {
		{ "paths", num[0] },
		{ "threads", num[1] },
		{ "threads_not_profiled", num[2] },
		{ "salvage_lost", num[3] },
	};
	keeper_put_info(s, kv, sizeof kv / sizeof kv[0], 0);
	keeper_put_modules(s);
	keeper_put_counters(s);
	format_begin_section(s->w, FORMAT_SEC_STACKS);
	format_put_u64(s->w, nput);
	for (uint64_t i = 0; i < c.n; i++) {
		const struct cf_node *x = node(&c, i);
		uint64_t v[1 + FORMAT_MAX_COUNTERS], f;

		if (!c.put[i])
			continue;
		f = x->fn;
		v[0] = x->calls + c.rsum[i];
		for (int r = 0; r < c.nres; r++)
			v[1 + r] = x->hits[r];
		out[i] = index;
		if (c.root[i])
			format_put_stack(s->w, 0, FORMAT_STACK_ENTRY, 0, 0, &f, v, 1 + (uint32_t)c.nres);
		else if (x->depth == 1)
			format_put_stack(s->w, 1, FORMAT_STACK_ENTRY, 0, 0, &f, v, 1 + (uint32_t)c.nres);
		else
			format_put_stack(s->w, x->depth, FORMAT_STACK_ENTRY, index - out[c.parent[i]],
					 x->depth - 1, &f, v, 1 + (uint32_t)c.nres);
		index++;
	}
	format_end_section(s->w);
	format_begin_section(s->w, FORMAT_SEC_THREADS);
	format_put_u64(s->w, nput);
	for (uint64_t i = 0; i < c.n; i++)
		if (c.put[i])
			format_put_u32(s->w, c.tid[i]);
	format_end_section(s->w);
	free(out);
	free(th);
	free(c.addr);
	free(c.tid);
	free(c.root);
	free(c.put);
	free(c.parent);
	free(c.rsum);
	free(c.slot);
	return 0;
}

int salvage_cfprof_idle(int fd, const struct keep_head *h)
{
	struct cf_keep k;

	if (h->kind != FORMAT_KIND_CFPROF || h->layout != CF_KEEP_LAYOUT || h->root < h->base ||
	    h->root - h->base > h->used || h->used - (h->root - h->base) < sizeof k ||
	    pread(fd, &k, sizeof k, (off_t)(h->root - h->base)) != (ssize_t)sizeof k)
		return 0;
	return k.threads == 0;
}
