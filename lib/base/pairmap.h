/*
 * pairmap.h - a map from a pair of 32-bit numbers to a dense index (0, 1,
 * 2, ... in the order the pairs were first met): the shape of a trie of
 * (parent, frame) nodes (the call path profiles, the folded and HTML
 * exports) and of a call graph's (caller, callee) edges (cfgraph).
 * Callers keep what an index stands for in arrays of their own.
 */
#ifndef PAIRMAP_H
#define PAIRMAP_H

#include <stddef.h>
#include <stdint.h>

#define PAIRMAP_NONE UINT32_MAX

struct pairmap {
	uint32_t *key;  /* a, b of index i at 2i, 2i + 1 */
	size_t n, cap;
	uint32_t *slot; /* hash table of index + 1 */
	size_t nslots;
};

/* The index of (a, b), made if new (*made set, if not NULL): then it is
 * n - 1.  PAIRMAP_NONE, nothing made, when max (0: no limit) or 2^32 - 1
 * pairs are there already. */
uint32_t pairmap_get(struct pairmap *m, uint32_t a, uint32_t b, size_t max, int *made);
static inline uint32_t pairmap_a(const struct pairmap *m, uint32_t i)
{
	return m->key[2 * (size_t)i];
}
static inline uint32_t pairmap_b(const struct pairmap *m, uint32_t i)
{
	return m->key[2 * (size_t)i + 1];
}
/* No more look-ups: free the hash table, keep the keys (and n). */
void pairmap_drop_index(struct pairmap *m);
void pairmap_release(struct pairmap *m);

#endif
