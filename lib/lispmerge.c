/*
 * lispmerge.c - owns one table of Lisp functions for merged Lisp profiles
 * (lispmerge_*; lispmerge.h): names made one by their text, pseudo-frames
 * renumbered, entries moved.
 */
#include "lispmerge.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "lispview.h"
#include "merge.h"
#include "reader.h"
#include "util.h"

static void put(struct lispmerge *lm, size_t *cap, char *key, const char *value)
{
	util_grow(&lm->info, cap, lm->ninfo + 1, sizeof(*lm->info));
	lm->info[lm->ninfo].key = key;
	lm->info[lm->ninfo++].value = xstrdup(value);
}

void lispmerge_init(struct lispmerge *lm, const struct profile *p, int64_t *const *delta, int n)
{
	struct strtab *names = strtab_new(), *entries = strtab_new();
	size_t cap = 0;

	memset(lm, 0, sizeof(*lm));
	lm->nfiles = n;
	lm->map = xcalloc((size_t)n, sizeof(*lm->map));
	lm->nmap = xcalloc((size_t)n, sizeof(*lm->nmap));
	for (int i = 0; i < n; i++) {
		for (size_t k = 0; k < p[i].ninfo; k++) {
			const struct prof_kv *kv = &p[i].info[k];
			uint32_t id, merged;
			uint64_t a;

			if (!kv->key || !kv->value)
				continue;
			if ((id = lispview_fn_id(kv->key)) != 0) {
				size_t before = strtab_count(names);

				/* ids are dense: a file's are no more than its keys */
				if (id > p[i].ninfo)
					continue;
				merged = strtab_intern(names, kv->value) + 1;
				if (strtab_count(names) > before)
					put(lm, &cap, xasprintf("lisp.fn.%u", merged), kv->value);
				if (id >= lm->nmap[i]) {
					lm->map[i] = xrealloc(lm->map[i], ((size_t)id + 1) * sizeof(uint32_t));
					memset(lm->map[i] + lm->nmap[i], 0,
					       ((size_t)id + 1 - lm->nmap[i]) * sizeof(uint32_t));
					lm->nmap[i] = id + 1;
				}
				lm->map[i][id] = merged;
			} else if (lispview_entry_addr(kv->key, &a) == 0) {
				char *key = xasprintf("lisp.entry.%llx",
						      (unsigned long long)merge_move(&p[i], delta[i], a));
				size_t before = strtab_count(entries);

				strtab_intern(entries, key);
				if (strtab_count(entries) > before)
					put(lm, &cap, key, kv->value);
				else
					free(key);
			}
		}
	}
	strtab_free(names);
	strtab_free(entries);
}

int lispmerge_owns(const char *key)
{
	uint64_t a;

	return key && (lispview_fn_id(key) != 0 || lispview_entry_addr(key, &a) == 0);
}

uint64_t lispmerge_frame(const struct lispmerge *lm, int i, uint64_t a)
{
	uint32_t id = FORMAT_LISP_FRAME_ID(a);

	if (!FORMAT_IS_LISP_FRAME(a))
		return a;
	/* One its file does not name stays unnamed (id 0 is no one's),
	 * rather than taking another file's name for its number. */
	return FORMAT_LISP_FRAME(id < lm->nmap[i] ? lm->map[i][id] : 0);
}

void lispmerge_release(struct lispmerge *lm)
{
	for (int i = 0; i < lm->nfiles; i++)
		free(lm->map[i]);
	for (size_t k = 0; k < lm->ninfo; k++) {
		free(lm->info[k].key);
		free(lm->info[k].value);
	}
	free(lm->map);
	free(lm->nmap);
	free(lm->info);
}
