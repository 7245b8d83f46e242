/*
 * folded.c - owns the folded-stacks export (export_folded): one line per
 * distinct stack of function names, "main;f;g N", as FlameGraph's
 * flamegraph.pl, speedscope and inferno read it.
 *
 * Distinct address stacks may be one stack of names (two call sites in
 * one function; inline frames): they are summed.  The stacks are merged in
 * a trie of function ids (parent, id) -> node, so memory follows the
 * model's distinct paths, however deep; each line is spelled from its
 * node up.
 */
#include "export/export.h"

#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "util.h"

struct fnode {
	uint32_t parent, id;
	uint64_t self;
};

struct ftrie {
	struct fnode *n;
	size_t len, cap;
	uint32_t *slot; /* node + 1 */
	size_t nslots;
};

#define FNONE UINT32_MAX

static size_t fhash(uint32_t parent, uint32_t id, size_t mask)
{
	uint64_t k = ((uint64_t)parent << 32 | id) * 0x9e3779b97f4a7c15ull;
	return (size_t)(k >> 20) & mask;
}

static uint32_t child(struct ftrie *t, uint32_t parent, uint32_t id)
{
	size_t i;

	if (2 * (t->len + 1) > t->nslots) {
		t->nslots = t->nslots ? 2 * t->nslots : 1024;
		free(t->slot);
		t->slot = xcalloc(t->nslots, sizeof(uint32_t));
		for (size_t k = 0; k < t->len; k++) {
			for (i = fhash(t->n[k].parent, t->n[k].id, t->nslots - 1); t->slot[i];
			     i = (i + 1) & (t->nslots - 1))
				;
			t->slot[i] = (uint32_t)k + 1;
		}
	}
	for (i = fhash(parent, id, t->nslots - 1); t->slot[i]; i = (i + 1) & (t->nslots - 1)) {
		struct fnode *x = &t->n[t->slot[i] - 1];
		if (x->parent == parent && x->id == id)
			return t->slot[i] - 1;
	}
	util_grow(&t->n, &t->cap, t->len + 1, sizeof(*t->n));
	t->n[t->len] = (struct fnode){ parent, id, 0 };
	t->slot[i] = (uint32_t)++t->len;
	return (uint32_t)t->len - 1;
}

/* A name as folded stacks can carry it: ';' separates frames and a
 * newline ends the line, so they become ':'; spaces stay (readers split
 * the count at the last space: C++ parameter lists are safe). */
static void put_name(const char *s, FILE *out)
{
	for (; *s; s++)
		fputc(*s == ';' || *s == '\n' ? ':' : *s, out);
}

int export_folded(const struct export_data *d, size_t k, FILE *out)
{
	const struct model *m = d->m;
	struct ftrie t = { 0 };
	uint32_t *path = xcalloc((size_t)m->maxn + 1, sizeof(uint32_t));
	uint32_t *up = NULL;
	size_t upcap = 0;

	for (size_t i = 0; i < m->nstacks; i++) {
		uint64_t v = export_value(d, i, k);
		uint32_t n, node = FNONE;

		if (!v)
			continue;
		n = model_path(m, &m->stacks[i], path);
		for (uint32_t j = 0; j < n; j++)
			node = child(&t, node, m->sites[path[j]].fn);
		if (node == FNONE) /* an empty stack: no function was running */
			node = child(&t, FNONE, FNONE);
		t.n[node].self += v;
	}
	for (size_t x = 0; x < t.len; x++) {
		size_t n = 0;

		if (!t.n[x].self)
			continue;
		for (uint32_t y = (uint32_t)x; y != FNONE; y = t.n[y].parent) {
			util_grow(&up, &upcap, n + 1, sizeof(*up));
			up[n++] = y;
		}
		while (n--) {
			uint32_t id = t.n[up[n]].id;
			put_name(id == FNONE ? "(none)" : strtab_get(m->fns, id), out);
			if (n)
				fputc(';', out);
		}
		fprintf(out, " %llu\n", (unsigned long long)t.n[x].self);
	}
	free(up);
	free(path);
	free(t.n);
	free(t.slot);
	return ferror(out) ? -1 : 0;
}
