/*
 * lispmerge.c - owns one table of Lisp functions for merged Lisp profiles
 * (lispmerge_*; lispmerge.h): names made one by their text, pseudo-frames
 * renumbered, entries moved.
 */
#include "merge/lispmerge.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/format.h"
#include "model/langview.h"
#include "model/lispview.h"
#include "merge/merge.h"
#include "read/reader.h"
#include "base/util.h"

static void put(struct lispmerge *lm, size_t *cap, char *key, const char *value)
{
	util_grow(&lm->info, cap, lm->ninfo + 1, sizeof(*lm->info));
	lm->info[lm->ninfo].key = key;
	lm->info[lm->ninfo++].value = xstrdup(value);
}

/* File i's function id, named name: its merged id, the name's in names
 * (a new name gets the next id, and its key, prefix and the id), in
 * map[i] (nmap[i] ids). */
static void add_fn(struct lispmerge *lm, size_t *cap, struct strtab *names, uint32_t **map,
		   uint32_t *nmap, const char *prefix, int i, uint32_t id, const char *name)
{
	size_t before = strtab_count(names);
	uint32_t merged = strtab_intern(names, name) + 1;

	if (strtab_count(names) > before)
		put(lm, cap, xasprintf("%s%u", prefix, merged), name);
	if (id >= nmap[i]) {
		size_t n = (size_t)id + 1;

		map[i] = xrealloc(map[i], n * sizeof(uint32_t));
		memset(map[i] + nmap[i], 0, (n - nmap[i]) * sizeof(uint32_t));
		nmap[i] = id + 1;
	}
	map[i][id] = merged;
}

/* An entry's key at its moved address, unless another file's is there. */
static void add_entry(struct lispmerge *lm, size_t *cap, struct strtab *entries, uint64_t a,
		      const char *name)
{
	char *key = xasprintf("lisp.entry.%llx", (unsigned long long)a);
	size_t before = strtab_count(entries);

	strtab_intern(entries, key);
	if (strtab_count(entries) > before)
		put(lm, cap, key, name);
	else
		free(key);
}

void lispmerge_init(struct lispmerge *lm, const struct profile *p, int64_t *const *delta, int n)
{
	struct strtab *names = strtab_new(), *entries = strtab_new(), *lnames = strtab_new();
	size_t cap = 0;

	memset(lm, 0, sizeof(*lm));
	lm->nfiles = n;
	lm->map = xcalloc((size_t)n, sizeof(*lm->map));
	lm->nmap = xcalloc((size_t)n, sizeof(*lm->nmap));
	lm->lmap = xcalloc((size_t)n, sizeof(*lm->lmap));
	lm->nlmap = xcalloc((size_t)n, sizeof(*lm->nlmap));
	for (int i = 0; i < n; i++) {
		for (size_t k = 0; k < p[i].ninfo; k++) {
			const struct prof_kv *kv = &p[i].info[k];
			uint32_t id;
			uint64_t a;

			if (!kv->key || !kv->value)
				continue;
			/* ids are dense: a file's are no more than its keys */
			if ((id = lispview_fn_id(kv->key)) != 0 && id <= p[i].ninfo)
				add_fn(lm, &cap, names, lm->map, lm->nmap, "lisp.fn.", i, id,
				       kv->value);
			else if ((id = langview_fn_id(kv->key)) != 0 && id <= p[i].ninfo)
				add_fn(lm, &cap, lnames, lm->lmap, lm->nlmap, "lang.fn.", i, id,
				       kv->value);
			else if (lispview_entry_addr(kv->key, &a) == 0)
				add_entry(lm, &cap, entries, merge_move(&p[i], delta[i], a),
					  kv->value);
		}
	}
	strtab_free(names);
	strtab_free(entries);
	strtab_free(lnames);
}

int lispmerge_owns(const char *key)
{
	uint64_t a;

	return key && (lispview_fn_id(key) != 0 || langview_fn_id(key) != 0 ||
		       lispview_entry_addr(key, &a) == 0);
}

uint64_t lispmerge_frame(const struct lispmerge *lm, int i, uint64_t a)
{
	uint32_t id = FORMAT_LISP_FRAME_ID(a);

	if (FORMAT_IS_LANG_FRAME(a))
		return FORMAT_LANG_FRAME(id < lm->nlmap[i] ? lm->lmap[i][id] : 0);
	if (!FORMAT_IS_LISP_FRAME(a))
		return a;
	/* One its file does not name stays unnamed (id 0 is no one's),
	 * rather than taking another file's name for its number. */
	return FORMAT_LISP_FRAME(id < lm->nmap[i] ? lm->map[i][id] : 0);
}

void lispmerge_release(struct lispmerge *lm)
{
	for (int i = 0; i < lm->nfiles; i++) {
		free(lm->map[i]);
		free(lm->lmap[i]);
	}
	free(lm->lmap);
	free(lm->nlmap);
	for (size_t k = 0; k < lm->ninfo; k++) {
		free(lm->info[k].key);
		free(lm->info[k].value);
	}
	free(lm->map);
	free(lm->nmap);
	free(lm->info);
}
