/*
 * trie.c - owns the trie of function-id paths (etrie_*) the folded and
 * HTML exports share: open addressing on (parent, id), doubled at half
 * full.
 */
#include "export/trie.h"

#include <stdlib.h>

#include "util.h"

static size_t hash(uint32_t parent, uint32_t id, size_t mask)
{
	uint64_t k = ((uint64_t)parent << 32 | id) * 0x9e3779b97f4a7c15ull;
	return (size_t)(k >> 20) & mask;
}

uint32_t etrie_child(struct etrie *t, uint32_t parent, uint32_t id)
{
	size_t i;

	if (2 * (t->len + 1) > t->nslots) {
		t->nslots = t->nslots ? 2 * t->nslots : 1024;
		free(t->slot);
		t->slot = xcalloc(t->nslots, sizeof(uint32_t));
		for (size_t k = 0; k < t->len; k++) {
			for (i = hash(t->n[k].parent, t->n[k].id, t->nslots - 1); t->slot[i];
			     i = (i + 1) & (t->nslots - 1))
				;
			t->slot[i] = (uint32_t)k + 1;
		}
	}
	for (i = hash(parent, id, t->nslots - 1); t->slot[i]; i = (i + 1) & (t->nslots - 1)) {
		const struct etrie_node *x = &t->n[t->slot[i] - 1];
		if (x->parent == parent && x->id == id)
			return t->slot[i] - 1;
	}
	util_grow(&t->n, &t->cap, t->len + 1, sizeof(*t->n));
	t->n[t->len] = (struct etrie_node){ parent, id };
	t->slot[i] = (uint32_t)++t->len;
	return (uint32_t)t->len - 1;
}

void etrie_release(struct etrie *t)
{
	free(t->n);
	free(t->slot);
	*t = (struct etrie){ 0 };
}
