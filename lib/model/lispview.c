/*
 * lispview.c - owns the Lisp view of a profile (lispview_*): recognising
 * a Lisp profile, its names from INFO (lisp.fn.<id>, lisp.entry.<hex>),
 * and naming or leaving out each frame of its stacks (lispview.h).
 */
#include "model/lispview.h"
#include "format/format.h"
#include "read/reader.h"
#include "symbols/symbols.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct entry {
	uint64_t addr;
	const char *name; /* the profile's string */
};

struct lispview {
	const char **fn; /* fn[id], id < nfn; NULL where the file has none */
	uint32_t nfn;
	struct entry *entries; /* sorted by address */
	size_t nentries;
	const struct prof_module *mods;
	size_t nmods;
};

const char *lispview_classes(const struct profile *p)
{
	const char *c = reader_info(p, "classes");

	return c && reader_info(p, "lisp") ? c : NULL;
}

static int entry_cmp(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* A decimal id of at most 9 digits, or 0. */
static uint32_t parse_id(const char *s)
{
	uint32_t v = 0;
	int n = 0;

	for (; *s >= '0' && *s <= '9' && n < 9; s++, n++)
		v = v * 10 + (uint32_t)(*s - '0');
	return *s || !n ? 0 : v;
}

static int parse_hex(const char *s, uint64_t *v)
{
	int n = 0;

	*v = 0;
	for (; *s && n < 16; s++, n++) {
		int d = *s >= '0' && *s <= '9' ? *s - '0' : *s >= 'a' && *s <= 'f' ? *s - 'a' + 10 : -1;
		if (d < 0)
			return -1;
		*v = *v << 4 | (uint64_t)d;
	}
	return *s || !n ? -1 : 0;
}

uint32_t lispview_fn_id(const char *key)
{
	return strncmp(key, "lisp.fn.", 8) ? 0 : parse_id(key + 8);
}

int lispview_entry_addr(const char *key, uint64_t *addr)
{
	return strncmp(key, "lisp.entry.", 11) ? -1 : parse_hex(key + 11, addr);
}

struct lispview *lispview_open(const struct profile *p)
{
	const char *names = reader_info(p, "lisp.names");
	struct lispview *l;
	size_t k = 0;

	if (!lispview_classes(p) || !names || strcmp(names, "ihs"))
		return NULL;
	l = xcalloc(1, sizeof(*l));
	l->mods = p->modules;
	l->nmods = p->nmodules;
	for (size_t i = 0; i < p->ninfo; i++) {
		const char *key = p->info[i].key;
		uint32_t id;
		uint64_t a;

		if (!key || !p->info[i].value)
			continue;
		if ((id = lispview_fn_id(key)) != 0) {
			if (id >= l->nfn) {
				/* ids are dense: a file's can be no more than its entries */
				if (id > p->ninfo)
					continue;
				l->fn = xrealloc(l->fn, (size_t)(id + 1) * sizeof(*l->fn));
				memset(l->fn + l->nfn, 0, (size_t)(id + 1 - l->nfn) * sizeof(*l->fn));
				l->nfn = id + 1;
			}
			l->fn[id] = p->info[i].value;
		} else if (lispview_entry_addr(key, &a) == 0) {
			util_grow(&l->entries, &k, l->nentries + 1, sizeof(*l->entries));
			l->entries[l->nentries++] = (struct entry){ a, p->info[i].value };
		}
	}
	/* Equal addresses (a file loaded twice, at one place) name one
	 * function: any of them does. */
	if (l->nentries)
		qsort(l->entries, l->nentries, sizeof(*l->entries), entry_cmp);
	return l;
}

void lispview_free(struct lispview *l)
{
	if (!l)
		return;
	free(l->fn);
	free(l->entries);
	free(l);
}

static const char *entry_name(const struct lispview *l, uint64_t addr)
{
	size_t lo = 0, hi = l->nentries;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (l->entries[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < l->nentries && l->entries[lo].addr == addr ? l->entries[lo].name : NULL;
}

/* Whether addr lies in a compiled Lisp file (ECL's compile-file: .fas). */
static int in_fasl(const struct lispview *l, uint64_t addr)
{
	for (size_t i = 0; i < l->nmods; i++) {
		const char *path = l->mods[i].path;
		size_t n;

		if (addr < l->mods[i].start || addr >= l->mods[i].end || !path)
			continue;
		n = strlen(path);
		return (n > 4 && !strcmp(path + n - 4, ".fas")) ||
		       (n > 5 && !strcmp(path + n - 5, ".fasl")) ||
		       (n > 5 && !strcmp(path + n - 5, ".fasc"));
	}
	return 0;
}

/*
 * The Lisp name ECL's compiler gave C function c of a .fas: L<n>name for
 * a global function, LC<n>name for a local one or a lambda (__lambda<n>,
 * __g<n>: "(lambda)"), its underscores the name's dashes (other characters
 * of the Lisp name are lost: the entry table has the exact name);
 * init_fas_CODE runs the file's top-level forms.
 */
static const char *from_c_name(const char *c, char *buf, size_t len)
{
	const char *s = c;

	if (!strcmp(c, "init_fas_CODE") || !strncmp(c, "_ecl", 4))
		return LISP_TOPLEVEL;
	if (*s++ != 'L')
		return c;
	if (*s == 'C')
		s++;
	if (*s < '0' || *s > '9')
		return c;
	while (*s >= '0' && *s <= '9')
		s++;
	if (!*s || !strncmp(s, "__lambda", 8) || !strncmp(s, "__g", 3))
		return "(lambda)";
	snprintf(buf, len, "%s", s);
	for (char *q = buf; *q; q++)
		if (*q == '_')
			*q = '-';
	return buf;
}

const char *lispview_frame(struct lispview *l, struct symbols *sy, uint64_t addr, int is_ret,
			   char *buf, size_t len)
{
	struct sym_frame sf[32];
	const char *name;
	int cnt;

	if (FORMAT_IS_LISP_FRAME(addr)) {
		uint32_t id = FORMAT_LISP_FRAME_ID(addr);
		if (id < l->nfn && l->fn[id])
			return l->fn[id];
		snprintf(buf, len, "(lisp function %u)", id);
		return buf;
	}
	cnt = symbols_resolve(sy, addr, is_ret, sf, 32);
	if (cnt < 1)
		return NULL;
	/* The real function (inlined frames come first). */
	if (sf[cnt - 1].func_addr && (name = entry_name(l, sf[cnt - 1].func_addr)) != NULL)
		return name;
	if (in_fasl(l, addr))
		return from_c_name(sf[cnt - 1].func, buf, len);
	return NULL;
}
