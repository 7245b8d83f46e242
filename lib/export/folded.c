/*
 * folded.c - owns the folded-stacks export (export_folded): one line per
 * distinct stack of function names, "main;f;g N", as FlameGraph's
 * flamegraph.pl, speedscope and inferno read it.
 *
 * Distinct address stacks may be one stack of names (two call sites in
 * one function; inline frames): they are summed in a trie of function
 * ids (a pairmap of (parent, function)), so memory follows the model's
 * distinct paths, however deep; each line is spelled from its node up.
 */
#include "export/export.h"

#include <stdlib.h>
#include <string.h>

#include "base/escape.h"
#include "model/model.h"
#include "base/pairmap.h"
#include "base/util.h"

/* A name as folded stacks can carry it: ';' separates frames, so it
 * becomes ':'; a control character (a newline would end the line) is
 * escaped as in every view (the model's names already are: escape.h);
 * spaces stay (readers split the count at the last space: C++
 * parameter lists are safe). */
static void put_name(const char *s, FILE *out)
{
	char c[2] = { 0, 0 };

	for (; *s; s++) {
		c[0] = *s == ';' ? ':' : *s;
		escape_put(out, c);
	}
}

int export_folded(const struct export_data *d, size_t k, FILE *out)
{
	const struct model *m = d->m;
	struct pairmap t = { 0 };
	uint64_t *self = NULL;
	size_t selfcap = 0;
	uint32_t *path = xcalloc((size_t)m->maxn + 1, sizeof(uint32_t));
	uint32_t *up = NULL;
	size_t upcap = 0;

	for (size_t i = 0; i < m->nstacks; i++) {
		uint64_t c[FORMAT_MAX_COUNTERS], v = export_value(d, export_counts(d, i, c), k);
		uint32_t n, node = PAIRMAP_NONE;

		if (!v)
			continue;
		n = model_path(m, &m->stacks[i], path);
		for (uint32_t j = 0; j < n; j++)
			node = pairmap_get(&t, node, m->sites[path[j]].fn, 0, NULL);
		if (node == PAIRMAP_NONE) /* an empty stack: no function was running */
			node = pairmap_get(&t, PAIRMAP_NONE, PAIRMAP_NONE, 0, NULL);
		if (node >= selfcap) {
			size_t old = selfcap;
			util_grow(&self, &selfcap, (size_t)node + 1, sizeof(*self));
			memset(self + old, 0, (selfcap - old) * sizeof(*self));
		}
		self[node] += v;
	}
	for (size_t x = 0; x < t.n; x++) {
		size_t n = 0;

		if (x >= selfcap || !self[x])
			continue;
		for (uint32_t y = (uint32_t)x; y != PAIRMAP_NONE; y = pairmap_a(&t, y)) {
			util_grow(&up, &upcap, n + 1, sizeof(*up));
			up[n++] = y;
		}
		while (n--) {
			uint32_t id = pairmap_b(&t, up[n]);
			put_name(id == PAIRMAP_NONE ? "(none)" : strtab_get(m->fns, id), out);
			if (n)
				fputc(';', out);
		}
		fprintf(out, " %llu\n", (unsigned long long)self[x]);
	}
	free(up);
	free(path);
	free(self);
	pairmap_release(&t);
	return ferror(out) ? -1 : 0;
}
