/*
 * lispmerge.h - the Lisp functions of Lisp profiles merged into one file
 * (merge.c).  Each file numbers its Lisp functions itself, in the order
 * its run met them (INFO lisp.fn.<id>, its pseudo-frames
 * FORMAT_LISP_FRAME(id)), and names its compiled ones by entry address
 * (lisp.entry.<hex>, at that run's addresses): the merged file gets one
 * table of names, each file's pseudo-frames renumbered into it, and
 * every file's entries, moved to where the merged file has their module.
 */
#ifndef LISPMERGE_H
#define LISPMERGE_H

#include <stddef.h>
#include <stdint.h>

struct profile;
struct prof_kv;

struct lispmerge {
	uint32_t **map;   /* map[file][id]: the merged id, 0: the file names no id */
	uint32_t *nmap;   /* ids of each file's map */
	uint32_t **lmap;  /* the same for language frames (langview.h) */
	uint32_t *nlmap;
	int nfiles;
	struct prof_kv *info; /* the merged file's lisp.fn, lisp.entry and lang.fn keys */
	size_t ninfo;
};

/* The table of files p[0..n), delta[i] moving file i's addresses
 * (merge_move).  Files with no Lisp function add nothing. */
void lispmerge_init(struct lispmerge *lm, const struct profile *p, int64_t *const *delta, int n);
/* Whether an INFO key is one the merge writes from lm->info, not from a
 * file's own. */
int lispmerge_owns(const char *key);
/* Frame a of file i as the merged file has it: a pseudo-frame renumbered
 * (one its file names not: FORMAT_LISP_FRAME(0), unnamed), any other
 * frame as it is. */
uint64_t lispmerge_frame(const struct lispmerge *lm, int i, uint64_t a);
/* Frees what init made; a zeroed lm too. */
void lispmerge_release(struct lispmerge *lm);

#endif
