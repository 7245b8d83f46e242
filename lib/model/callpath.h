/*
 * callpath.h - call path profiles (Hall & Goldberg, USENIX 1993): downward
 * and upward profiles from any root function, function (body +
 * descendants) and body profiles, and the sample tree.
 *
 * Input is generic weighted stacks: each a sequence of frame ids, outermost
 * first (function ids, or call-site ids when sites are told apart), and a
 * weight (the sample hits for one resource), handed out one stack at a
 * time by the caller (the model keeps shared frames once: no view needs
 * every stack spelled out at once).  Names come from the caller.
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

#define CP_NONE UINT32_MAX

struct cp_input {
	size_t nstacks;
	const uint64_t *weight;   /* per stack */
	/* Stack s's frame ids (< nids), outermost first, into out (room for
	 * maxn); returns how many. */
	uint32_t (*path)(const void *ctx, size_t s, uint32_t *out);
	const void *ctx;
	uint32_t maxn;            /* the most frames a stack has */
	size_t nids;
	size_t max_paths;         /* a profile making more call paths than this
				   * fails (0: no limit): see callpath.c */
	const uint64_t *calls;    /* per stack, or NULL: the exact calls of its
				   * innermost function along it (cfprof), which
				   * each entry reports beside its hits */
};

/* One profile entry: a call path and its hits.  Paths are nodes of a trie
 * kept in the result (callpath_path spells one out): an entry costs the
 * same however long its path. */
struct cp_entry {
	uint32_t node;  /* the path's last node in the result's trie */
	uint32_t len;   /* ids on the path */
	uint32_t depth; /* nesting for printing: 0 for the root path */
	uint64_t hits;
	uint64_t calls; /* with in->calls: calls of the path's last function
			 * along it (down, tree: the stacks ending there; up:
			 * of the root, from the callers on the path; flat:
			 * of the function) */
};

struct cp_result {
	struct cp_entry *e;
	size_t n;
	uint64_t total; /* all hits of the input */
	uint32_t *parent, *id; /* the trie: a node's parent (CP_NONE) and id;
				* NULL for flat profiles, whose node is the id */
	int reverse;    /* the trie grows toward the callers (up profiles) */
	uint32_t maxlen; /* the longest path */
};

/*
 * The downward profile rooted at the ids marked in is_root[nids] (one
 * function, or all the call sites of one function): every canonical call
 * path that starts with a root, with its hits, in depth-first order (a path,
 * then its extensions), siblings by decreasing hits then by id.
 * Each view returns 0, or -1 (r empty) when it would make more than
 * in->max_paths call paths.
 */
int callpath_down(const struct cp_input *in, const uint8_t *is_root, struct cp_result *r);
/* The upward profile: every canonical path ending at a root, in the same
 * order, growing toward the callers (a path, then its longer versions). */
int callpath_up(const struct cp_input *in, const uint8_t *is_root, struct cp_result *r);
/* Function profile: (f) for every id on some stack: hits of the stacks that
 * contain it (once), sorted by decreasing hits.  Body profile: hits of the
 * stacks whose innermost frame it is. */
void callpath_functions(const struct cp_input *in, struct cp_result *r);
void callpath_bodies(const struct cp_input *in, struct cp_result *r);
/* The sample tree: every node (a prefix of some stack), depth first,
 * children by decreasing weight; hits is the node's weight (its own hits
 * and its descendants'). */
int callpath_tree(const struct cp_input *in, struct cp_result *r);
/* The ids of e's path, outermost first, into out (room for r->maxlen). */
void callpath_path(const struct cp_result *r, const struct cp_entry *e, uint32_t *out);
void callpath_result_free(struct cp_result *r);

#endif
