/*
 * langview.c - owns reading a profile's language frames (langview_*,
 * langview.h): the names INFO gives each pseudo-frame.
 */
#include "model/langview.h"

#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "read/reader.h"

struct langview {
	/* fn[id], id < nfn: "NAME<tab>FILE:LINE", a copy of the file's
	 * value cut before its kind; NULL where the file has none.  kind[id]:
	 * the kind of object the frame made (after a second tab), or NULL. */
	char **fn;
	const char **kind;
	uint32_t nfn;
};

uint32_t langview_fn_id(const char *key)
{
	unsigned long v;
	char *end;

	if (!key || strncmp(key, "lang.fn.", 8) || key[8] < '1' || key[8] > '9')
		return 0;
	v = strtoul(key + 8, &end, 10);
	return *end || v > UINT32_MAX - 1 ? 0 : (uint32_t)v;
}

struct langview *langview_open(const struct profile *p)
{
	struct langview *l;
	char *tab;

	if (!reader_info(p, "lang"))
		return NULL;
	l = xcalloc(1, sizeof(*l));
	for (size_t i = 0; i < p->ninfo; i++) {
		uint32_t id = langview_fn_id(p->info[i].key);

		/* ids are dense: a file's can be no more than its entries */
		if (!id || !p->info[i].value || id > p->ninfo)
			continue;
		if (id >= l->nfn) {
			l->fn = xrealloc(l->fn, (size_t)(id + 1) * sizeof(*l->fn));
			l->kind = xrealloc(l->kind, (size_t)(id + 1) * sizeof(*l->kind));
			memset(l->fn + l->nfn, 0, (size_t)(id + 1 - l->nfn) * sizeof(*l->fn));
			memset(l->kind + l->nfn, 0, (size_t)(id + 1 - l->nfn) * sizeof(*l->kind));
			l->nfn = id + 1;
		}
		if (l->fn[id])
			continue; /* a key twice: the first */
		l->fn[id] = xstrdup(p->info[i].value);
		tab = strchr(l->fn[id], '\t');
		if (tab && (tab = strchr(tab + 1, '\t')) != NULL) {
			*tab = 0;
			l->kind[id] = tab + 1;
		}
	}
	return l;
}

void langview_free(struct langview *l)
{
	if (!l)
		return;
	for (uint32_t i = 0; i < l->nfn; i++)
		free(l->fn[i]);
	free(l->fn);
	free(l->kind);
	free(l);
}

int langview_frame(const struct langview *l, uint32_t id, const char **fn, size_t *fnlen,
		   const char **loc)
{
	const char *v = l && id < l->nfn ? l->fn[id] : NULL, *tab;

	*fn = NULL;
	*loc = NULL;
	*fnlen = 0;
	if (!v)
		return -1;
	tab = strchr(v, '\t');
	*fn = v;
	*fnlen = tab ? (size_t)(tab - v) : strlen(v);
	*loc = tab ? tab + 1 : NULL;
	return 0;
}

const char *langview_kind(const struct langview *l, uint32_t id)
{
	return l && id < l->nfn ? l->kind[id] : NULL;
}
