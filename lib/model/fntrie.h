/*
 * fntrie.h - the model's stacks as a trie of function ids (the HTML
 * report's), numbered breadth-first.
 *
 * A trie node is a distinct path of function names from an outermost
 * frame: the stacks' paths merged wherever their names agree, so two call
 * sites in one function, an inline frame and its copy, or two distinct
 * address stacks of the same names are one node.  It is made from the
 * model's calling context tree a level at a time: each level's model
 * nodes, sorted by (trie parent, function), give the next level's trie
 * nodes in order, with no table of every node, so the memory it takes
 * follows the widest level, not the tree (a profile of 1M stacks has 12M
 * trie nodes and levels of at most 1M).
 */
#ifndef FNTRIE_H
#define FNTRIE_H

#include <stddef.h>
#include <stdint.h>

struct model;

#define FNTRIE_ROOT UINT32_MAX /* the parent of an outermost frame */

/* Called once per trie node, in the order of their ids 0, 1, ...:
 * parent is an earlier node's id or FNTRIE_ROOT, fn a model function id. */
typedef void fntrie_emit_fn(void *ctx, uint32_t parent, uint32_t fn);

/*
 * The trie of m's stacks (each its model_path, function ids).  Calls
 * emit for every node, ids in breadth-first order (a level's nodes by
 * parent id, then by function id), and sets leaf[i] (room for
 * m->nstacks) to the node stack i ends at, FNTRIE_ROOT for a stack with
 * no frame.  Returns the number of nodes.
 */
size_t fntrie_build(const struct model *m, uint32_t *leaf, fntrie_emit_fn *emit, void *ctx);
/* order (room for n) gets 0 .. n - 1 in order of leaf[], stably: the
 * stacks of each node together, for summing their values. */
void fntrie_order(const uint32_t *leaf, size_t n, uint32_t *order);

#endif
