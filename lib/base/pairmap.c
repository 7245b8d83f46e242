/*
 * pairmap.c - owns the pair-to-index map (pairmap_*): open addressing on
 * the pair, linear probing, doubled at half full.
 */
#include "base/pairmap.h"

#include <stdlib.h>

#include "base/util.h"

static size_t hash(uint32_t a, uint32_t b, size_t mask)
{
	uint64_t k = ((uint64_t)a << 32 | b) * 0x9e3779b97f4a7c15ull;

	/* The high half: a, in the key's high half, reaches only bits 32 and
	 * up of the product (bits 20 on took 4 bits of it). */
	return (size_t)(k >> 32) & mask;
}

uint32_t pairmap_get(struct pairmap *m, uint32_t a, uint32_t b, size_t max, int *made)
{
	size_t i;

	if (made)
		*made = 0;
	if (2 * (m->n + 1) > m->nslots) {
		m->nslots = m->nslots ? 2 * m->nslots : 1024;
		free(m->slot);
		m->slot = xcalloc(m->nslots, sizeof(uint32_t));
		for (size_t k = 0; k < m->n; k++) {
			for (i = hash(m->key[2 * k], m->key[2 * k + 1], m->nslots - 1); m->slot[i];
			     i = (i + 1) & (m->nslots - 1))
				;
			m->slot[i] = (uint32_t)k + 1;
		}
	}
	for (i = hash(a, b, m->nslots - 1); m->slot[i]; i = (i + 1) & (m->nslots - 1)) {
		const uint32_t *k = &m->key[2 * (size_t)(m->slot[i] - 1)];
		if (k[0] == a && k[1] == b)
			return m->slot[i] - 1;
	}
	if ((max && m->n >= max) || m->n >= PAIRMAP_NONE - 1)
		return PAIRMAP_NONE;
	util_grow(&m->key, &m->cap, 2 * (m->n + 1), sizeof(*m->key));
	m->key[2 * m->n] = a;
	m->key[2 * m->n + 1] = b;
	m->slot[i] = (uint32_t)++m->n;
	if (made)
		*made = 1;
	return (uint32_t)m->n - 1;
}

void pairmap_drop_index(struct pairmap *m)
{
	free(m->slot);
	m->slot = NULL;
	m->nslots = 0;
}

void pairmap_release(struct pairmap *m)
{
	free(m->key);
	free(m->slot);
	*m = (struct pairmap){ 0 };
}
