/*
 * langview.c - owns reading a profile's language frames (langview_*,
 * langview.h): the names INFO gives each pseudo-frame.
 */
#include "model/langview.h"

#include <stdio.h>
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
	/* name[id]: the name shown, "MODULE.NAME" (tell_apart); NULL where
	 * the file names no file: NAME as it is. */
	char **name;
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

/* A frame's function: its name and its module's path (module_path). */
struct fnkey {
	const char *name;
	char *path;
	size_t nlen, plen;
	uint32_t id;
	size_t need; /* last parts of path its name takes (tell_apart) */
};

static int key_cmp(const void *a, const void *b)
{
	const struct fnkey *x = a, *y = b;
	size_t n = x->nlen < y->nlen ? x->nlen : y->nlen;
	int c = memcmp(x->name, y->name, n);

	if (c || x->nlen != y->nlen)
		return c ? c : x->nlen < y->nlen ? -1 : 1;
	c = strcmp(x->path, y->path);
	return c;
}

/*
 * The path of the module that file f (n bytes, as the code object names
 * it) holds, its parts split by '/': "/usr/lib/python3.11/json/__init__.py"
 * gives "usr/lib/python3.11/json", "pkg/__main__.py" "pkg/__main__" (Python's
 * __main__), "m.py" "m", "<frozen
 * importlib._bootstrap>" "importlib/_bootstrap"; NULL when f names none.
 */
static char *module_path(const char *f, size_t n)
{
	char *out;
	size_t o = 0;
	int frozen = 0;

	if (n > 9 && !memcmp(f, "<frozen ", 8) && f[n - 1] == '>')
		f += 8, n -= 9, frozen = 1;
	else if (n > 3 && !memcmp(f + n - 3, ".py", 3))
		n -= 3;
	if (n > 8 && !memcmp(f + n - 8, "__init__", 8) && f[n - 9] == '/')
		n -= 9;
	out = xmalloc(n + 1);
	for (size_t i = 0; i < n; i++)
		if (f[i] != '/' && !(frozen && f[i] == '.'))
			out[o++] = f[i];
		else if (o && out[o - 1] != '/')
			out[o++] = '/';
	while (o && out[o - 1] == '/')
		o--;
	out[o] = 0;
	if (!o) {
		free(out);
		return NULL;
	}
	return out;
}

/* How many last parts paths f and g (fl, gl bytes) have alike. */
static size_t common_tail(const char *f, size_t fl, const char *g, size_t gl)
{
	size_t parts = 0, i = fl, j = gl;

	while (i && j && f[i - 1] == g[j - 1]) {
		i--, j--;
		if (f[i] == '/')
			parts++;
	}
	/* One more where both stop at a part's start. */
	if ((!i || f[i - 1] == '/') && (!j || g[j - 1] == '/') && i != fl)
		parts++;
	return parts;
}

/* Where the last parts of path f (fl bytes) begin, as many as parts (all
 * it has, if fewer). */
static size_t tail_start(const char *f, size_t fl, size_t parts)
{
	for (size_t i = fl; i; i--)
		if (f[i - 1] == '/' && !--parts)
			return i;
	return 0;
}

/* Paths compared from their ends (the order that puts paths with the
 * longest tail in common side by side). */
static int tail_cmp(const void *x, const void *y)
{
	const struct fnkey *f = *(const struct fnkey *const *)x, *g = *(const struct fnkey *const *)y;
	size_t i = f->plen, j = g->plen;

	while (i && j && f->path[i - 1] == g->path[j - 1])
		i--, j--;
	if (!i || !j)
		return i ? 1 : j ? -1 : 0;
	return (unsigned char)f->path[i - 1] < (unsigned char)g->path[j - 1] ? -1 : 1;
}

/* A name as tell_apart shows it: the last need parts of key's path, dots
 * between, then its function.  Freed by the caller. */
static char *shown(const struct fnkey *key, size_t need)
{
	size_t s = tail_start(key->path, key->plen, need), len = key->plen - s + 1 + key->nlen + 1;
	char *name = xmalloc(len), *o = name;

	for (size_t j = s; j < key->plen; j++)
		*o++ = key->path[j] == '/' ? '.' : key->path[j];
	snprintf(o, key->nlen + 2, ".%.*s", (int)key->nlen, key->name);
	return name;
}

/* Raise key's need to that of a name the peer shows which its path ends
 * with (tell_apart), looking up to 8 parts more than its own. */
static void peer_need(struct fnkey *key, const struct strtab *peer)
{
	size_t last = tail_start(key->path, key->plen, key->need);

	for (size_t need = key->need + 1; need <= key->need + 8; need++) {
		size_t s = tail_start(key->path, key->plen, need);
		char *name;

		if (s == last)
			break; /* no more parts */
		last = s;
		name = shown(key, need);
		if (strtab_find(peer, name) >= 0)
			key->need = need;
		free(name);
	}
}

/*
 * Every function is named after its module, so that functions of several
 * files that share a name (a script's load and json's, every module's
 * <module>) are told apart: "m.load" (m.py), "json.load"
 * (json/__init__.py), "decoder.JSONDecoder.decode" (json/decoder.py: the
 * module's last name, not Python's json.decoder), "__main__.main" (a
 * package's __main__.py, run by -m), "_bootstrap._find_and_load" (<frozen
 * importlib._bootstrap>).  The module is its path's last part, or more of
 * its last parts where a function of the same name is in another module
 * of the profile that ends alike ("a.util.f", "b.util.f": then a profile
 * with one of them alone names it "util.f").  Line numbers do not part
 * functions: one function's frames are at many lines.
 *
 * peer, if not NULL, holds the names the other side of a diff shows (its
 * own, by this rule): a function takes as many parts as a name there that
 * its path ends with ("a.util.f", where the peer had b/util.py's f too),
 * so that both sides name it alike; the same module in two directories
 * (two checkouts) stays "util.f" on both.
 */
static void tell_apart(struct langview *l, const struct strtab *peer)
{
	struct fnkey *k = xcalloc(l->nfn ? l->nfn : 1, sizeof(*k));
	struct fnkey **by_tail = xcalloc((size_t)l->nfn + 1, sizeof(*by_tail));
	size_t n = 0, *run = xcalloc((size_t)l->nfn + 2, sizeof(*run));

	for (uint32_t id = 0; id < l->nfn; id++) {
		const char *v = l->fn[id], *tab, *colon;

		if (!v || !(tab = strchr(v, '\t')))
			continue;
		colon = strrchr(tab + 1, ':');
		k[n] = (struct fnkey){ v, NULL, (size_t)(tab - v), 0, id, 1 };
		k[n].path = module_path(tab + 1, colon ? (size_t)(colon - tab - 1) : strlen(tab + 1));
		if (k[n].path) {
			k[n].plen = strlen(k[n].path);
			n++;
		}
	}
	qsort(k, n, sizeof(*k), key_cmp);
	for (size_t a = 0, b; a < n; a = b) {
		size_t mods = 0;

		/* k[a..b): one name; run[0..mods): where each of its modules'
		 * frames begin (a function has a frame per line it was at). */
		for (b = a; b < n && k[b].nlen == k[a].nlen && !memcmp(k[b].name, k[a].name, k[a].nlen);
		     b++)
			if (b == a || strcmp(k[b].path, k[b - 1].path))
				run[mods++] = b;
		run[mods] = b;
		/* The most last parts a module has in common with another is
		 * with one beside it in the order of their tails (a longer
		 * tail in common in bytes is never fewer parts). */
		for (size_t f = 0; f < mods; f++)
			by_tail[f] = &k[run[f]];
		qsort(by_tail, mods, sizeof(*by_tail), tail_cmp);
		for (size_t f = 0; f + 1 < mods; f++) {
			size_t c = common_tail(by_tail[f]->path, by_tail[f]->plen, by_tail[f + 1]->path,
					       by_tail[f + 1]->plen) + 1;

			if (c > by_tail[f]->need)
				by_tail[f]->need = c;
			if (c > by_tail[f + 1]->need)
				by_tail[f + 1]->need = c;
		}
		for (size_t f = 0; peer && f < mods; f++)
			peer_need(&k[run[f]], peer);
		for (size_t f = 0; f < mods; f++)
			for (size_t i = run[f]; i < run[f + 1]; i++)
				l->name[k[i].id] = shown(&k[run[f]], k[run[f]].need);
	}
	for (size_t i = 0; i < n; i++)
		free(k[i].path);
	free(by_tail);
	free(run);
	free(k);
}

struct langview *langview_open(const struct profile *p, const struct profile *peer)
{
	struct langview *l, *o = peer ? langview_open(peer, NULL) : NULL;
	struct strtab *shown_there = NULL;
	char *tab;

	if (!reader_info(p, "lang")) {
		langview_free(o);
		return NULL;
	}
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
	l->name = xcalloc(l->nfn ? l->nfn : 1, sizeof(*l->name));
	/* The names the peer shows on its own, by the same rule. */
	if (o) {
		shown_there = strtab_new();
		for (uint32_t i = 0; i < o->nfn; i++)
			if (o->name[i])
				strtab_intern(shown_there, o->name[i]);
		langview_free(o);
	}
	tell_apart(l, shown_there);
	if (shown_there)
		strtab_free(shown_there);
	return l;
}

void langview_free(struct langview *l)
{
	if (!l)
		return;
	for (uint32_t i = 0; i < l->nfn; i++) {
		free(l->fn[i]);
		free(l->name[i]);
	}
	free(l->fn);
	free(l->name);
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
	*fn = l->name[id] ? l->name[id] : v;
	*fnlen = l->name[id] ? strlen(l->name[id]) : tab ? (size_t)(tab - v) : strlen(v);
	*loc = tab ? tab + 1 : NULL;
	return 0;
}

const char *langview_kind(const struct langview *l, uint32_t id)
{
	return l && id < l->nfn ? l->kind[id] : NULL;
}

uint32_t langview_count(const struct langview *l)
{
	return l ? l->nfn : 0;
}

const char *langview_shown_if(const struct langview *l, uint32_t id, const char *qualname)
{
	const char *v = l && id < l->nfn ? l->fn[id] : NULL, *tab;
	size_t n = strlen(qualname);

	if (!v || !(tab = strchr(v, '\t')) || (size_t)(tab - v) != n || memcmp(v, qualname, n))
		return NULL;
	return l->name[id] ? l->name[id] : NULL;
}
