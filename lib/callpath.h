/*
 * callpath.h - call path profiles (Hall & Goldberg, USENIX 1993): downward
 * and upward profiles from any root function, function (body +
 * descendants) and body profiles, and the sample tree.
 *
 * Input is generic weighted stacks: each a sequence of frame ids, outermost
 * first (function ids, or call-site ids when sites are told apart), and a
 * weight (the sample hits for one resource).  Names come from a callback.
 *
 * Downward profiles follow the paper's appendix: each node of the sample
 * tree below the first occurrence of the root gets a canonical call path
 * (a recursive call collapses the path back to the earlier occurrence of the
 * function), and a path's record is locked while its subtree is walked, so
 * no hit is counted twice for one path.  Walking the tree with locks is the
 * same as giving each sample's hits once to every distinct canonical path on
 * its chain, which is how it is computed here, per stack.  Upward profiles
 * are the mirror image: paths ending at the root, grown toward the callers,
 * canonicalized the same way.
 */
#ifndef CALLPATH_H
#define CALLPATH_H

#include <stddef.h>
#include <stdint.h>

struct cp_input {
	size_t nstacks;
	const uint32_t *const *ids; /* ids[i][0..n[i]), outermost first */
	const uint32_t *n;
	const uint64_t *weight;
	size_t nids;                /* ids are < nids */
};

/* One profile entry: a call path (ids outermost first) and its hits. */
struct cp_entry {
	uint32_t *path;
	uint32_t len;
	uint32_t depth; /* nesting for printing: 0 for the root path */
	uint64_t hits;
};

struct cp_result {
	struct cp_entry *e;
	size_t n;
	uint64_t total; /* all hits of the input */
};

/*
 * The downward profile rooted at the ids marked in is_root[nids] (one
 * function, or all the call sites of one function): every canonical call
 * path that starts with a root, with its hits, in depth-first order (a path,
 * then its extensions), siblings by decreasing hits then by id.
 */
void callpath_down(const struct cp_input *in, const uint8_t *is_root, struct cp_result *r);
/* The upward profile: every canonical path ending at a root, in the same
 * order, growing toward the callers (a path, then its longer versions). */
void callpath_up(const struct cp_input *in, const uint8_t *is_root, struct cp_result *r);
/* Function profile: (f) for every id on some stack: hits of the stacks that
 * contain it (once), sorted by decreasing hits.  Body profile: hits of the
 * stacks whose innermost frame it is. */
void callpath_functions(const struct cp_input *in, struct cp_result *r);
void callpath_bodies(const struct cp_input *in, struct cp_result *r);
/* The sample tree: every node (a prefix of some stack), depth first,
 * children by decreasing weight; hits is the node's weight (its own hits
 * and its descendants'). */
void callpath_tree(const struct cp_input *in, struct cp_result *r);
void callpath_result_free(struct cp_result *r);

#endif
