/*
 * trie.h - the stacks of a profile as a trie of function ids, (parent,
 * function) -> node: distinct address stacks that are one stack of names
 * (two call sites in one function, inline frames) become one node, and
 * memory follows the distinct paths however deep they are.  The folded
 * and HTML exports spell their stacks from it.
 */
#ifndef EXPORT_TRIE_H
#define EXPORT_TRIE_H

#include <stddef.h>
#include <stdint.h>

#define ETRIE_NONE UINT32_MAX

struct etrie {
	struct etrie_node {
		uint32_t parent; /* ETRIE_NONE: an outermost frame */
		uint32_t id;     /* function id; ETRIE_NONE for an empty stack */
	} *n;
	size_t len, cap;
	uint32_t *slot; /* hash table of node + 1 */
	size_t nslots;
};

/* The node for id called from parent (ETRIE_NONE: outermost), made if
 * new.  Node numbers are in creation order: a parent's is smaller. */
uint32_t etrie_child(struct etrie *t, uint32_t parent, uint32_t id);
void etrie_release(struct etrie *t);

#endif
