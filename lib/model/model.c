/*
 * model.c - turn a profile's address stacks into symbolic stacks (model.h).
 *
 * Stacks repeat their addresses (the mprof paper: most of a chain repeats
 * between allocations), so each distinct address is symbolized and turned
 * into site ids once, in a cache.  A stack's frames shared with an earlier
 * stack in the file are that stack's nodes in the calling context tree:
 * only the frames a stack has of its own are looked at, so building the
 * model costs what the file holds, not what its references add up to.
 *
 * Names enter the model printable (escape.h): a function, file or type
 * name from the symbolizer or the file with a control character in it
 * is kept escaped, so no view, of those here or to come, prints it raw.
 */
#include "model/model.h"
#include "symbols/cxxname.h"
#include "base/escape.h"
#include "model/langview.h"
#include "model/lispview.h"
#include "read/reader.h"
#include "symbols/symbols.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Site dedup: open addressing on the site's fields. */
struct sitemap {
	uint32_t *slot; /* site id + 1 */
	size_t nslots;
};

void model_init(struct model *m)
{
	memset(m, 0, sizeof(*m));
	m->fns = strtab_new_borrowing(); /* the symbolizer's strings */
	m->locs = strtab_new();
	m->atypes = strtab_new_borrowing();
	m->decls = strtab_new_borrowing(); /* the symbolizer's strings */
	m->sitemap = xcalloc(1, sizeof(struct sitemap));
	m->nc = MPROF_NCOUNTERS;
	m->main_fn = MODEL_NONE;
	m->toplevel_fn = MODEL_NONE;
}

/* A copy of s kept as long as the model. */
static const char *own_copy(struct model *m, const char *s)
{
	if (!m->own_names)
		m->own_names = strtab_new();
	return strtab_get(m->own_names, strtab_intern(m->own_names, s));
}

/* s as the views may print it: s itself, or a copy escaped. */
static const char *printable(struct model *m, const char *s)
{
	size_t len;
	char *e;

	if (!escape_needed(s))
		return s;
	len = escape_len(s) + 1;
	e = escape_buf(xmalloc(len), len, s);
	s = own_copy(m, e);
	free(e);
	return s;
}

/* A name made here (not the symbolizer's): its copy's function id. */
static uint32_t own_fn(struct model *m, const char *name)
{
	return strtab_intern(m->fns, own_copy(m, printable(m, name)));
}

static size_t site_hash(const struct model_site *s, size_t mask)
{
	return (size_t)util_hash(s, sizeof(*s), 0) & mask;
}

static uint32_t site_id(struct model *m, const struct model_site *s)
{
	struct sitemap *sm = m->sitemap;
	size_t i;

	if (2 * (m->nsites + 1) > sm->nslots) {
		sm->nslots = sm->nslots ? 2 * sm->nslots : 1024;
		free(sm->slot);
		sm->slot = xcalloc(sm->nslots, sizeof(uint32_t));
		for (size_t k = 0; k < m->nsites; k++) {
			for (i = site_hash(&m->sites[k], sm->nslots - 1); sm->slot[i];
			     i = (i + 1) & (sm->nslots - 1))
				;
			sm->slot[i] = (uint32_t)k + 1;
		}
	}
	for (i = site_hash(s, sm->nslots - 1); sm->slot[i]; i = (i + 1) & (sm->nslots - 1))
		if (memcmp(&m->sites[sm->slot[i] - 1], s, sizeof(*s)) == 0)
			return sm->slot[i] - 1;
	util_grow(&m->sites, &m->sites_cap, m->nsites + 1, sizeof(*m->sites));
	m->sites[m->nsites] = *s;
	sm->slot[i] = (uint32_t)++m->nsites;
	return (uint32_t)m->nsites - 1;
}

/* Where a path ends: its innermost node and that node's run, how many
 * nodes it has, and the depth of its outermost main (MODEL_NONE if none). */
struct at {
	uint32_t node, run, n, main;
};

/* A new node: site called from the end of path a (node MODEL_NONE: none),
 * which becomes its end.  Nodes are not shared between stacks the file did
 * not share (no hash of every frame): a stack's own frames make one run of
 * consecutive nodes, so a node costs its site, 4 bytes, as a copied
 * stack's frame did.  -1 past 2^32 nodes. */
static int node_new(struct model *m, struct at *a, uint32_t site)
{
	if (m->nnodes >= MODEL_NONE - 1)
		return -1;
	if (!m->nnodes || a->node != m->nnodes - 1) {
		/* Not the next node of the last run: a new run. */
		util_grow(&m->runs, &m->runs_cap, m->nruns + 1, sizeof(*m->runs));
		m->runs[m->nruns] = (struct model_run){ (uint32_t)m->nnodes, a->node, a->run };
		a->run = (uint32_t)m->nruns++;
	}
	if (m->nnodes == m->nodes_cap)
		util_grow(&m->site, &m->nodes_cap, m->nnodes + 1, sizeof(uint32_t));
	m->site[m->nnodes] = site;
	a->node = (uint32_t)m->nnodes++;
	a->n++;
	return 0;
}

/* Append a stack ending at a (no frame: a.node is MODEL_NONE), its
 * counters c, coded at cv; frames outer to main are dropped unless
 * keep_all. */
/* Whether a function named name is the one typed (as model_find_fns: a
 * short C++ name stands for its full ones, and the other way). */
static int typed_is(const char *name, const char *typed)
{
	char *a, *b;
	int same;

	if (!strcmp(name, typed))
		return 1;
	a = strchr(name, '(') ? cxxname_simplify(name) : NULL;
	b = strchr(typed, '(') ? cxxname_simplify(typed) : NULL;
	same = (a && !strcmp(a, typed)) || (b && !strcmp(b, name)) || (a && b && !strcmp(a, b));
	free(a);
	free(b);
	return same;
}

/* Which allocator wrapper (model.alloc_fns) function fn is: its index + 1,
 * else 0. */
static size_t alloc_fn(struct model *m, uint32_t fn)
{
	if (fn >= m->alloc_mark_cap) {
		size_t old = m->alloc_mark_cap;

		util_grow(&m->alloc_mark, &m->alloc_mark_cap, (size_t)fn + 1, sizeof(*m->alloc_mark));
		memset(m->alloc_mark + old, 0, (m->alloc_mark_cap - old) * sizeof(*m->alloc_mark));
	}
	if (!m->alloc_mark[fn]) {
		const char *name = strtab_get(m->fns, fn);

		m->alloc_mark[fn] = 1;
		for (size_t i = 0; i < m->nalloc_fns && m->alloc_mark[fn] == 1; i++)
			if (typed_is(name, m->alloc_fns[i]))
				m->alloc_mark[fn] = (uint32_t)i + 2;
	}
	return m->alloc_mark[fn] - 1;
}

static int ends_with_parts(const char *p, const char *t, size_t tl);

/* The wrapper a site's function is (alloc_fn), or one typed after its
 * file, as tell_apart shows C's functions of one name (a.c:xmalloc,
 * lib/a.c:xmalloc: the path's last parts). */
static size_t alloc_site(struct model *m, const struct model_site *st)
{
	size_t w = alloc_fn(m, st->fn);
	const char *decl;

	if (w || st->decl == MODEL_NONE || st->decl == MODEL_EXTERNAL)
		return w;
	decl = strtab_get(m->decls, st->decl);
	for (size_t i = 0; i < m->nalloc_fns; i++) {
		const char *t = m->alloc_fns[i], *c;

		for (c = strchr(t, ':'); c; c = strchr(c + 1, ':'))
			if (c > t && c[1] != ':' && c[-1] != ':' &&
			    ends_with_parts(decl, t, (size_t)(c - t)) &&
			    typed_is(strtab_get(m->fns, st->fn), c + 1))
				return i + 1;
	}
	return 0;
}

/* Stack s without its outermost frame of an allocator wrapper and the
 * frames inside it, when a caller is left. */
static void strip_alloc_fns(struct model *m, struct model_stack *s)
{
	uint32_t x = s->leaf, r = s->run, strip = 0, leaf = MODEL_NONE, run = 0;
	size_t which = 0, w;

	for (uint32_t i = 0; i < s->n; i++) {
		uint32_t up = x > m->runs[r].first ? x - 1 : m->runs[r].parent,
			 up_run = x > m->runs[r].first ? r : m->runs[r].parent_run;

		if ((w = alloc_site(m, &m->sites[m->site[x]])) != 0 && i + 1 < s->n) {
			strip = i + 1;
			leaf = up;
			run = up_run;
			which = w;
		}
		x = up;
		r = up_run;
	}
	if (strip) {
		s->leaf = leaf;
		s->run = run;
		s->n -= strip;
		if (!m->alloc_used)
			m->alloc_used = xcalloc(m->nalloc_fns, 1);
		m->alloc_used[which - 1] = 1;
	}
}

int model_alloc_fn_used(const struct model *m, size_t i)
{
	return m->alloc_used && i < m->nalloc_fns && m->alloc_used[i];
}

static void push(struct model *m, struct at a, int keep_all, uint32_t cut, const uint64_t *c,
		 const unsigned char *cv)
{
	struct model_stack *s;

	util_grow(&m->stacks, &m->cap, m->nstacks + 1, sizeof(*m->stacks));
	s = &m->stacks[m->nstacks++];
	s->leaf = a.node;
	s->run = a.run;
	s->n = a.n;
	if (!keep_all && a.main != MODEL_NONE)
		s->n -= a.main;
	if (m->nalloc_fns && s->n > 1)
		strip_alloc_fns(m, s);
	if (s->n > m->maxn)
		m->maxn = s->n;
	s->cut = cut;
	s->cv = cv;
	for (size_t k = 0; k < m->nc; k++)
		m->tot[k] += c[k];
}

void model_inner(const struct model *m, const struct model_stack *s, uint32_t k, uint32_t *out)
{
	uint32_t x = s->leaf, r = s->run;

	/* A run's nodes are its frames outermost first: each piece of the
	 * path is one copy. */
	while (k > 0) {
		const struct model_run *run = &m->runs[r];
		uint32_t len = x - run->first + 1 < k ? x - run->first + 1 : k;
		const uint32_t *from = m->site + x + 1 - len;

		k -= len;
		for (uint32_t j = 0; j < len; j++) /* short: a loop beats memcpy's call */
			out[k + j] = from[j];
		x = run->parent;
		r = run->parent_run;
	}
}

uint32_t model_path(const struct model *m, const struct model_stack *s, uint32_t *out)
{
	model_inner(m, s, s->n, out);
	return s->n;
}

#define OWN_CHUNK 65536 /* > the 2560 bytes FORMAT_MAX_COUNTERS code in */

/* c coded in storage of the model's own: chunks that never move. */
static const unsigned char *own(struct model *m, const uint64_t *c)
{
	unsigned char *at;

	if (!m->nowned || m->owned_fill + 10 * m->nc > OWN_CHUNK) {
		util_grow(&m->owned, &m->owned_cap, m->nowned + 1, sizeof(*m->owned));
		m->owned[m->nowned++] = xmalloc(OWN_CHUNK);
		m->owned_fill = 0;
	}
	at = m->owned[m->nowned - 1] + m->owned_fill;
	m->owned_fill += reader_pack(at, c, m->nc, 0);
	return at;
}

const uint64_t *model_counts(const struct model *m, const struct model_stack *s, uint64_t *buf)
{
	reader_unpack(s->cv, buf, m->nc);
	return buf;
}

void model_add(struct model *m, const char *const *names, uint32_t n, const uint64_t *c)
{
	struct at a = { MODEL_NONE, MODEL_NONE, 0, MODEL_NONE };
	int same = 1; /* so far the frames of the last stack */

	util_grow(&m->last, &m->last_cap, (size_t)n + 1, sizeof(*m->last));
	for (uint32_t i = 0; i < n; i++) {
		struct model_site st;
		uint32_t site;

		memset(&st, 0, sizeof(st)); /* sites are compared bytewise, padding too */
		st.fn = strtab_intern(m->fns, printable(m, names[i]));
		st.offset = MODEL_NO_OFFSET;
		st.loc = MODEL_NO_LOC;
		st.atype = MODEL_NONE;
		st.decl = MODEL_NONE;
		site = site_id(m, &st);

		if (same && i < m->nlast && m->last[i].site == site) {
			a.node = m->last[i].node;
			a.run = m->last[i].run;
			a.n++;
			continue;
		}
		same = 0;
		if (node_new(m, &a, site) < 0)
			break; /* past 2^32 nodes: the stack keeps its outer frames */
		m->last[i] = (struct model_frame){ site, a.node, a.run };
	}
	m->nlast = a.n;
	push(m, a, 1, 0, c, own(m, c));
}

/* Cache: address (and whether it is a return address) -> its site ids,
 * innermost first, in a pool; their count, AC_MARKED if one is main or a
 * top-level form. */
#define AC_MARKED 0x80000000u
/* Its one frame is in our runtime (an interposed call's wrapper in
 * libcpprof.so): left out of a stack but as its innermost frame, where
 * it stands for the call (the sampler's fold). */
#define AC_OWN 0x40000000u
struct addrcache {
	uint64_t *key; /* addr << 1 | is_ret, + 1 so 0 is empty */
	uint32_t *start, *count;
	size_t nslots, n, max; /* at most max distinct addresses */
	uint32_t *pool;
	size_t npool, cap;
	const struct profile *p; /* its modules: a stripped program's main */
	uint32_t start_fn[2];    /* __libc_start_call_main, __libc_start_main */
};

/* The module that holds addr, or NULL. */
static const struct prof_module *module_at(const struct profile *p, uint64_t addr)
{
	for (size_t i = 0; i < p->nmodules; i++)
		if (addr >= p->modules[i].start && addr < p->modules[i].end)
			return &p->modules[i];
	return NULL;
}

/*
 * Whether site x, called from the end of path a, is a stripped program's
 * main: no name, but the function glibc's __libc_start_call_main (before
 * 2.34, __libc_start_main) calls from another object (it calls exit and
 * _setjmp in its own).  Its frames outer to it drop as main's do: a
 * stripped sort's every chain began sort+0x6560 > __libc_start_main >
 * __libc_start_call_main (cpprof's views already took it for main).
 * Looked at near the outermost frame only.  addr: x's frame's address.
 */
static int stripped_main(const struct model *m, const struct addrcache *ac, const struct at *a,
			 uint32_t x, uint64_t addr)
{
	uint32_t caller;
	const struct prof_module *me, *them;

	if (a->main != MODEL_NONE || a->node == MODEL_NONE || a->n > 8 || !ac->p)
		return 0;
	caller = m->site[a->node];
	if (m->sites[caller].fn != ac->start_fn[0] && m->sites[caller].fn != ac->start_fn[1])
		return 0;
	me = module_at(ac->p, m->sites[x].func_addr ? m->sites[x].func_addr : addr);
	them = module_at(ac->p, m->sites[caller].func_addr);
	return me && them && me->path && them->path && strcmp(me->path, them->path) != 0;
}

static void ac_grow(struct addrcache *a)
{
	size_t old = a->nslots;
	uint64_t *key = a->key;
	uint32_t *start = a->start, *count = a->count;

	a->nslots = old ? 2 * old : 4096;
	a->key = xcalloc(a->nslots, sizeof(uint64_t));
	a->start = xcalloc(a->nslots, sizeof(uint32_t));
	a->count = xcalloc(a->nslots, sizeof(uint32_t));
	for (size_t i = 0; i < old; i++) {
		size_t j;
		if (!key[i])
			continue;
		for (j = (size_t)(key[i] * 0x9e3779b97f4a7c15ull >> 20) & (a->nslots - 1); a->key[j];
		     j = (j + 1) & (a->nslots - 1))
			;
		a->key[j] = key[i];
		a->start[j] = start[i];
		a->count[j] = count[i];
	}
	free(key);
	free(start);
	free(count);
}

/* The site ids of addr, innermost first: *n of them (with AC_MARKED) at
 * the returned pointer (valid until the next call); NULL past a->max
 * distinct addresses. */
static const uint32_t *expand_new(struct model *m, struct addrcache *a, struct symbols *sy,
				  uint64_t addr, int ret, uint32_t *n, size_t j, uint64_t k);

static const uint32_t *expand(struct model *m, struct addrcache *a, struct symbols *sy, uint64_t addr,
			      int ret, uint32_t *n)
{
	uint64_t k = (addr << 1 | (uint64_t)ret) + 1;
	size_t j;

	if (2 * (a->n + 1) > a->nslots)
		ac_grow(a);
	for (j = (size_t)(k * 0x9e3779b97f4a7c15ull >> 20) & (a->nslots - 1); a->key[j];
	     j = (j + 1) & (a->nslots - 1))
		if (a->key[j] == k) {
			*n = a->count[j];
			return a->pool + a->start[j];
		}
	return expand_new(m, a, sy, addr, ret, n, j, k);
}

/* An address met for the first time (slot j of the cache is its key k's):
 * symbolized, apart from the look-up above, which every frame makes and
 * which needs none of the room symbolizing does. */
static __attribute__((noinline)) const uint32_t *expand_new(struct model *m, struct addrcache *a,
							    struct symbols *sy, uint64_t addr,
							    int ret, uint32_t *n, size_t j,
							    uint64_t k)
{
	struct sym_frame sf[32];
	int cnt, own = 0;

	if (a->n >= a->max)
		return NULL;
	if (m->lang && FORMAT_IS_LANG_FRAME(addr)) {
		/* A language's frame (langview.h): its function at its line. */
		const char *fn, *loc, *kind;
		size_t fnlen;
		char name[512], where[512];
		struct model_site st;

		memset(&st, 0, sizeof(st)); /* sites are compared bytewise */
		if (langview_frame(m->lang, FORMAT_LANG_FRAME_ID(addr), &fn, &fnlen, &loc) < 0) {
			snprintf(name, sizeof name, "(frame %u)", FORMAT_LANG_FRAME_ID(addr));
		} else {
			snprintf(name, sizeof name, "%.*s", (int)(fnlen < 500 ? fnlen : 500), fn);
		}
		st.fn = own_fn(m, name);
		st.offset = MODEL_NO_OFFSET;
		st.loc = MODEL_NO_LOC;
		st.atype = MODEL_NONE;
		st.decl = MODEL_NONE;
		/* The kind of object it made: the size table's types (no size). */
		if ((kind = langview_kind(m->lang, FORMAT_LANG_FRAME_ID(addr))) != NULL) {
			st.atype = strtab_intern(m->atypes, own_copy(m, printable(m, kind)));
			if (st.atype >= m->atype_cap) {
				size_t old = m->atype_cap;
				util_grow(&m->atype_size, &m->atype_cap, st.atype + 1, sizeof(uint64_t));
				memset(m->atype_size + old, 0, (m->atype_cap - old) * sizeof(uint64_t));
			}
		}
		if (loc) {
			/* The file's last part, as C frames show theirs. */
			const char *colon = strrchr(loc, ':'), *base = loc;
			for (const char *q = loc; colon && q < colon; q++)
				if (*q == '/')
					base = q + 1;
			snprintf(where, sizeof where, "%s", base);
			st.loc = strtab_intern(m->locs, own_copy(m, printable(m, where)));
		}
		util_grow(&a->pool, &a->cap, a->npool + 1, sizeof(uint32_t));
		a->pool[a->npool] = site_id(m, &st);
		cnt = 1;
		goto cached;
	}
	if (m->lisp) {
		/* A Lisp profile: one frame, the Lisp function's, or none. */
		char buf[256];
		const char *name = lispview_frame(m->lisp, sy, addr, ret, buf, sizeof buf);
		struct model_site st;

		util_grow(&a->pool, &a->cap, a->npool + 1, sizeof(uint32_t));
		cnt = 0;
		if (name) {
			memset(&st, 0, sizeof(st)); /* sites are compared bytewise */
			st.fn = own_fn(m, name);
			st.offset = MODEL_NO_OFFSET;
			st.loc = MODEL_NO_LOC;
			st.atype = MODEL_NONE;
			st.decl = MODEL_NONE;
			a->pool[a->npool] = site_id(m, &st);
			cnt = 1;
		}
		goto cached;
	}
	cnt = symbols_resolve(sy, addr, ret, sf, 32);
	own = cnt == 1 && sf[0].own_runtime;
	util_grow(&a->pool, &a->cap, a->npool + (size_t)cnt, sizeof(uint32_t));
	/* mprof.h's always-inline wrapper is not the program's frame: the
	 * function that reports the object is (its category follows). */
	if (cnt > 1 && sf[0].inlined && sf[0].func && !strcmp(sf[0].func, "mprof_alloc"))
		memmove(sf, sf + 1, (size_t)--cnt * sizeof(sf[0]));
	for (int i = 0; i < cnt; i++) {
		struct model_site st;
		char buf[512];

		memset(&st, 0, sizeof(st)); /* sites are compared bytewise */
		st.func_addr = sf[i].inlined ? 0 : sf[i].func_addr;
		st.fn = strtab_intern(m->fns, printable(m, sf[i].func));
		st.inlined = (uint32_t)sf[i].inlined;
		st.offset = (!sf[i].inlined && sf[i].func_addr && sf[i].offset < MODEL_NO_OFFSET)
				    ? (uint32_t)sf[i].offset : MODEL_NO_OFFSET;
		st.loc = MODEL_NO_LOC;
		st.atype = MODEL_NONE;
		st.decl = MODEL_NONE;
		if (sf[i].atype) {
			st.atype = strtab_intern(m->atypes, printable(m, sf[i].atype));
			if (st.atype >= m->atype_cap) {
				size_t old = m->atype_cap;
				util_grow(&m->atype_size, &m->atype_cap, st.atype + 1, sizeof(uint64_t));
				memset(m->atype_size + old, 0, (m->atype_cap - old) * sizeof(uint64_t));
			}
			if (sf[i].asize > m->atype_size[st.atype])
				m->atype_size[st.atype] = sf[i].asize;
		}
		if (sf[i].decl)
			st.decl = strtab_intern(m->decls, sf[i].decl);
		else if (sf[i].external)
			st.decl = MODEL_EXTERNAL;
		if (sf[i].file) {
			const char *base = strrchr(sf[i].file, '/');
			snprintf(buf, sizeof(buf), "%s:%d", base ? base + 1 : sf[i].file, sf[i].line);
			st.loc = strtab_intern(m->locs, printable(m, buf));
		}
		a->pool[a->npool + (size_t)i] = site_id(m, &st);
	}
cached:
	a->key[j] = k;
	a->start[j] = (uint32_t)a->npool;
	a->count[j] = (uint32_t)cnt | (own ? AC_OWN : 0);
	/* Whether a site of it is main or a top-level form, which own_frames
	 * looks at: most addresses hold neither.  A language's function named
	 * main (Python's `def main():`) is not C's: its callers stay. */
	for (int i = 0; i < cnt; i++) {
		uint32_t fn = m->sites[a->pool[a->npool + (size_t)i]].fn;
		if ((fn == m->main_fn && !(m->lang && FORMAT_IS_LANG_FRAME(addr))) ||
		    fn == m->toplevel_fn)
			a->count[j] |= AC_MARKED;
	}
	a->n++;
	a->npool += (size_t)cnt;
	*n = a->count[j];
	return a->pool + a->start[j];
}

/*
 * Extend the path ending at *a by a stack's own frames (nown of them,
 * innermost first, the stack's flags), outermost first, each address
 * expanded into its sites.  keep (if not NULL) gets where each own frame
 * ends, keep[d] for frame d.  -1 past 2^32 nodes, -2 past the distinct
 * addresses the file may have.
 */
static int own_frames(struct model *m, struct addrcache *ac, struct symbols *sy,
		      const uint64_t *frames, uint32_t nown, uint32_t flags, struct at *a,
		      struct at *keep)
{
	static uint32_t at[FORMAT_MAX_DEPTH], cnt[FORMAT_MAX_DEPTH]; /* in ac->pool */
	uint32_t k;

	/* Symbolized innermost first, as stacks are read: function and site
	 * ids, which order ties in every view, come in that order. */
	for (uint32_t d = 0; d < nown; d++) {
		int ret = !((d == 0 && (flags & FORMAT_STACK_PC_FIRST)) ||
			    (flags & FORMAT_STACK_ENTRY));
		const uint32_t *e = expand(m, ac, sy, frames[d], ret, &cnt[d]);
		if (!e)
			return -2;
		at[d] = (uint32_t)(e - ac->pool);
	}
	for (uint32_t d = nown; d-- > 0;) {
		const uint32_t *e = ac->pool + at[d];

		k = cnt[d] & ~(AC_MARKED | AC_OWN);
		/* Our runtime's wrapper between the program and libc's read
		 * (`read __read`: its read, then libc's) is not a frame of the
		 * program's. */
		if ((cnt[d] & AC_OWN) && d > 0)
			k = 0;
		if (!(cnt[d] & AC_MARKED)) {
			while (k-- > 0) {
				if (a->n <= 8 && stripped_main(m, ac, a, e[k], frames[d]))
					a->main = a->n;
				if (node_new(m, a, e[k]) < 0)
					return -1;
			}
			k = 0;
		}
		while (k-- > 0) {
			if (a->main == MODEL_NONE && m->sites[e[k]].fn == m->main_fn)
				a->main = a->n;
			/* Top-level forms that evaluate top-level forms (ECL's
			 * command line, a load, the file's form): one. */
			if (m->sites[e[k]].fn == m->toplevel_fn && a->node != MODEL_NONE &&
			    m->sites[m->site[a->node]].fn == m->toplevel_fn)
				continue;
			if (node_new(m, a, e[k]) < 0)
				return -1;
		}
		if (keep)
			keep[d] = *a;
	}
	return 0;
}

/*
 * The innermost frame of a stack of objects the program reported itself
 * in category c (mprof.h's mprof_alloc): "[name]", the name from INFO's
 * category.c ("[category c]" if the file has none).
 */
static int category_frame(struct model *m, const struct profile *p, uint32_t c, struct at *a)
{
	struct model_site st;
	char key[32], name[128];
	const char *v;

	snprintf(key, sizeof key, "category.%u", c);
	v = reader_info(p, key);
	if (v)
		snprintf(name, sizeof name, "[%s]", v);
	else
		snprintf(name, sizeof name, "[category %u]", c);
	memset(&st, 0, sizeof(st)); /* sites are compared bytewise */
	st.fn = own_fn(m, name);
	st.offset = MODEL_NO_OFFSET;
	st.loc = MODEL_NO_LOC;
	st.atype = MODEL_NONE;
	st.decl = MODEL_NONE;
	return node_new(m, a, site_id(m, &st));
}

/* The frame of a Lisp profile's stack with no Lisp function on it (made
 * while ECL boots, or by its C code alone). */
static int lisp_none_frame(struct model *m, struct at *a)
{
	struct model_site st;

	memset(&st, 0, sizeof(st));
	st.fn = own_fn(m, LISP_NONE);
	st.offset = MODEL_NO_OFFSET;
	st.loc = MODEL_NO_LOC;
	st.atype = MODEL_NONE;
	st.decl = MODEL_NONE;
	return node_new(m, a, site_id(m, &st));
}

/*
 * C's static functions of one name in two files are two functions: where
 * the profile has sites of both (or of one and of an external function
 * of the name), each static one is shown after its file, FILE:NAME (gdb's
 * and callgrind_annotate's way): the file's last part, or as many more
 * of its parts as tell it from the other files of the name's (a/util.c
 * and b/util.c).  The external one keeps its name, as do sites whose file
 * is unknown.  Run when every site is in: the site table is rebuilt for
 * the new function ids.
 */
static int is_variant(const struct model *m, uint32_t fn)
{
	return fn < m->variant_cap && m->variant_of[fn];
}

/* Whether path p ends with the tl bytes of parts t (whole parts). */
static int ends_with_parts(const char *p, const char *t, size_t tl)
{
	size_t pl = strlen(p);

	return pl >= tl && !memcmp(p + pl - tl, t, tl) && (pl == tl || p[pl - tl - 1] == '/');
}

/* The last parts of path p, the fewest that none of the n other paths
 * ends with, or all of p. */
static const char *tail_apart(const char *p, const char *const *paths, size_t n)
{
	const char *t = p + strlen(p);

	for (;;) {
		size_t i;

		while (t > p && t[-1] == '/')
			t--;
		while (t > p && t[-1] != '/')
			t--;
		if (t == p)
			return p;
		for (i = 0; i < n; i++)
			if (strcmp(paths[i], p) && ends_with_parts(paths[i], t, strlen(t)))
				break;
		if (i == n)
			return t;
	}
}

/* In a diff, the file part of the peer's name of function name defined
 * in path: the longest the peer shows that path ends with (its length
 * in *len), or NULL. */
static const char *peer_file(const struct model *peer, const char *name, const char *path,
			     size_t *len)
{
	const char *best = NULL;
	size_t nl = strlen(name);

	*len = 0;
	for (size_t f = 0; peer && f < peer->variant_cap; f++) {
		const char *shown;
		size_t fl;

		if (!peer->variant_of[f] ||
		    strcmp(strtab_get(peer->fns, peer->variant_of[f] - 1), name))
			continue;
		shown = strtab_get(peer->fns, (uint32_t)f);
		fl = strlen(shown) - nl - 1;
		if (fl > *len && ends_with_parts(path, shown, fl))
			best = shown, *len = fl;
	}
	return best;
}

struct decl_pair {
	uint32_t fn, decl, id; /* the plain function, its file, the name shown */
};

static int pair_cmp(const void *a, const void *b)
{
	const struct decl_pair *x = a, *y = b;

	if (x->fn != y->fn)
		return x->fn < y->fn ? -1 : 1;
	return x->decl < y->decl ? -1 : x->decl > y->decl;
}

/* The length of the directory paths[0..n) all begin with ("/x/ck/" of
 * /x/ck/util.c and /x/ck/sub/util.c), 0 if none. */
static size_t common_dir(const char *const *paths, size_t n)
{
	size_t len = strlen(paths[0]);

	for (size_t i = 1; i < n; i++) {
		size_t k = 0;

		while (k < len && paths[i][k] == paths[0][k])
			k++;
		len = k;
	}
	while (len > 0 && paths[0][len - 1] != '/')
		len--;
	return len;
}

/* The name shown for the (function, file) pairs p[0..n) of one function:
 * its file's last parts that tell it from the others', within their
 * common directory (util.c and sub/util.c, not ck/util.c after the
 * checkout's own name, which a second checkout would not share). */
static void name_pairs(struct model *m, const struct model *peer, struct decl_pair *p, size_t n)
{
	const char **paths = xmalloc(n * sizeof(*paths)), **rel = xmalloc(n * sizeof(*rel));
	const char *name = strtab_get(m->fns, p[0].fn);
	size_t common;

	for (size_t i = 0; i < n; i++)
		paths[i] = strtab_get(m->decls, p[i].decl);
	common = n > 1 ? common_dir(paths, n) : 0;
	for (size_t i = 0; i < n; i++)
		rel[i] = paths[i] + common;
	for (size_t i = 0; i < n; i++) {
		size_t fl;
		const char *file = peer_file(peer, name, paths[i], &fl);
		char *both, *key;
		uint32_t k;

		if (!file) {
			file = tail_apart(rel[i], rel, n);
			fl = strlen(file);
		}
		both = xasprintf("%.*s:%s", (int)fl, file, name);
		p[i].id = own_fn(m, both);
		free(both);
		if (p[i].id >= m->variant_cap) {
			size_t old = m->variant_cap;

			util_grow(&m->variant_of, &m->variant_cap, (size_t)p[i].id + 1,
				  sizeof(uint32_t));
			memset(m->variant_of + old, 0, (m->variant_cap - old) * sizeof(uint32_t));
		}
		m->variant_of[p[i].id] = p[i].fn + 1;
		/* model_shown_name's key: the file's path and the name. */
		key = xasprintf("%s\n%s", paths[i], name);
		k = strtab_intern(m->vkeys, key);
		free(key);
		if (k >= m->vkey_cap)
			util_grow(&m->vkey_fn, &m->vkey_cap, (size_t)k + 1, sizeof(uint32_t));
		m->vkey_fn[k] = p[i].id;
	}
	free(paths);
	free(rel);
}

/*
 * In a diff, a function this side already shows after its file, with
 * fewer of its parts than the other side shows it (util.c:load, where
 * the other side has a/util.c and b/util.c), takes the other side's
 * (a/util.c:load): an unchanged function was shown removed and added.
 * 1 if a site was renamed.
 */
static int lengthen_like(struct model *m, const struct model *peer)
{
	int renamed = 0;

	for (size_t i = 0; i < m->nsites; i++) {
		struct model_site *st = &m->sites[i];
		const char *name, *path, *file, *shown;
		size_t fl, have;
		char *both, *key;
		uint32_t k;

		if (!is_variant(m, st->fn) || st->decl == MODEL_NONE || st->decl == MODEL_EXTERNAL)
			continue;
		name = strtab_get(m->fns, m->variant_of[st->fn] - 1);
		path = strtab_get(m->decls, st->decl);
		shown = strtab_get(m->fns, st->fn);
		have = strlen(shown) - strlen(name) - 1;
		if (!(file = peer_file(peer, name, path, &fl)) || fl <= have)
			continue;
		both = xasprintf("%.*s:%s", (int)fl, file, name);
		k = own_fn(m, both);
		free(both);
		if (k >= m->variant_cap) {
			size_t old = m->variant_cap;

			util_grow(&m->variant_of, &m->variant_cap, (size_t)k + 1, sizeof(uint32_t));
			memset(m->variant_of + old, 0, (m->variant_cap - old) * sizeof(uint32_t));
		}
		m->variant_of[k] = m->variant_of[st->fn];
		key = xasprintf("%s\n%s", path, name);
		m->vkey_fn[strtab_intern(m->vkeys, key)] = k;
		free(key);
		st->fn = k;
		renamed = 1;
	}
	return renamed;
}

/* peer, if not NULL: the other side of a diff, whose names shown after
 * their files are so shown here too however few files this profile has
 * of them (model_tell_apart_like), and with as many parts. */
static void tell_apart(struct model *m, const struct model *peer)
{
	size_t nf = strtab_count(m->fns), np = 0, pcap = 0;
	uint32_t *first = xmalloc((nf + 1) * sizeof(uint32_t));
	uint8_t *clash = xcalloc(nf + 1, 1), *force = xcalloc(nf + 1, 1);
	struct decl_pair *pairs = NULL;
	struct sitemap *sm = m->sitemap;
	int rehash = 0;

	for (size_t f = 0; peer && f < peer->variant_cap; f++) {
		int64_t id;

		if (peer->variant_of[f] &&
		    (id = strtab_find(m->fns, strtab_get(peer->fns, peer->variant_of[f] - 1))) >= 0)
			force[id] = 1;
	}
	for (size_t f = 0; f < nf; f++)
		first[f] = MODEL_NONE;
	for (size_t i = 0; i < m->nsites; i++) {
		const struct model_site *st = &m->sites[i];

		if (st->decl == MODEL_NONE || is_variant(m, st->fn))
			continue;
		if (force[st->fn])
			clash[st->fn] = 1;
		else if (first[st->fn] == MODEL_NONE)
			first[st->fn] = st->decl;
		else if (first[st->fn] != st->decl)
			clash[st->fn] = 1;
	}
	if (m->main_fn < nf)
		clash[m->main_fn] = 0;
	for (size_t i = 0; i < m->nsites; i++) {
		const struct model_site *st = &m->sites[i];

		if (st->decl == MODEL_NONE || st->decl == MODEL_EXTERNAL || is_variant(m, st->fn) ||
		    !clash[st->fn])
			continue;
		util_grow(&pairs, &pcap, np + 1, sizeof(*pairs));
		pairs[np++] = (struct decl_pair){ st->fn, st->decl, 0 };
	}
	if (peer && lengthen_like(m, peer))
		rehash = 1;
	if (np) {
		size_t u = 0;

		qsort(pairs, np, sizeof(*pairs), pair_cmp);
		for (size_t i = 0; i < np; i++)
			if (!u || pair_cmp(&pairs[u - 1], &pairs[i]))
				pairs[u++] = pairs[i];
		np = u;
		if (!m->vkeys)
			m->vkeys = strtab_new();
		for (size_t i = 0, j; i < np; i = j) {
			for (j = i + 1; j < np && pairs[j].fn == pairs[i].fn; j++)
				;
			name_pairs(m, peer, pairs + i, j - i);
		}
		for (size_t i = 0; i < m->nsites; i++) {
			struct model_site *st = &m->sites[i];
			struct decl_pair key = { st->fn, st->decl, 0 }, *hit;

			if (st->decl == MODEL_NONE || st->decl == MODEL_EXTERNAL ||
			    is_variant(m, st->fn) || !clash[st->fn])
				continue;
			hit = bsearch(&key, pairs, np, sizeof(*pairs), pair_cmp);
			st->fn = hit->id;
		}
		rehash = 1;
	}
	if (rehash) {
		/* The sites hash by their fields: again, for model_add's. */
		memset(sm->slot, 0, sm->nslots * sizeof(uint32_t));
		for (size_t k = 0; k < m->nsites; k++) {
			size_t i;

			for (i = site_hash(&m->sites[k], sm->nslots - 1); sm->slot[i];
			     i = (i + 1) & (sm->nslots - 1))
				;
			sm->slot[i] = (uint32_t)k + 1;
		}
	}
	free(pairs);
	free(first);
	free(clash);
	free(force);
}

const char *model_shown_name(const struct model *m, const char *func, const char *decl)
{
	char *key;
	int64_t id;

	if (!decl || !m->vkeys)
		return NULL;
	key = xasprintf("%s\n%s", decl, func);
	id = strtab_find(m->vkeys, key);
	free(key);
	return id >= 0 ? strtab_get(m->fns, m->vkey_fn[id]) : NULL;
}

void model_tell_apart_like(struct model *a, struct model *b)
{
	tell_apart(a, b);
	tell_apart(b, a);
}

int model_from_profile(struct model *m, const struct profile *p, struct symbols *sy,
		       unsigned flags, char *err, size_t errlen)
{
	int idx[MPROF_NCOUNTERS_SCAN], identity = 1, rc = 0;
	struct addrcache ac;
	struct at *keep, *hang;
	uint32_t *first;
	size_t nkeep = 0;
	static uint64_t frames[FORMAT_MAX_DEPTH];

	if (p->kind != FORMAT_KIND_MPROF) {
		m->nc = p->ncounters;
	} else {
		for (int k = 0; k < MPROF_NCOUNTERS_SCAN; k++)
			idx[k] = reader_counter(p, format_mprof_counter_names[k]);
		for (int k = 0; k < MPROF_NCOUNTERS; k++) {
			if (idx[k] < 0) {
				snprintf(err, errlen, "has no '%s' counter: not mprof allocation data",
					 format_mprof_counter_names[k]);
				return -1;
			}
		}
		/* The peak's counters are optional: older files lack them. */
		m->has_peak = idx[MPROF_C_PEAK_BYTES] >= 0 && idx[MPROF_C_PEAK_OBJECTS] >= 0;
		m->nc = m->has_peak ? MPROF_NCOUNTERS_ALL : MPROF_NCOUNTERS;
		/* The temporaries' too (issue 24): zeros where absent, with
		 * the peak's. */
		m->has_temp = m->has_peak && idx[MPROF_C_TEMP_OBJECTS] >= 0 &&
			      idx[MPROF_C_TEMP_BYTES] >= 0;
		/* So are the leak classes' (a run without MPROF_LEAKS=scan):
		 * all eight, after the peak's. */
		m->has_scan = m->has_peak;
		for (int k = MPROF_C_LOST_BYTES; k < MPROF_NCOUNTERS_SCAN; k++)
			m->has_scan &= idx[k] >= 0;
		if (m->has_scan)
			m->nc = MPROF_NCOUNTERS_SCAN;
		for (size_t k = 0; k < m->nc; k++)
			identity &= idx[k] == (int)k;
	}
	memset(&ac, 0, sizeof(ac));
	/* Symbolizing an address costs some 150 bytes, and every frame of a
	 * hostile file can be a new one: a file may have one distinct address
	 * per 4 bytes (a real CPU profile, whose every sample can add a pc,
	 * has about 1 per 40; an allocation profile far fewer). */
	ac.max = p->size / 4 + (1u << 14);
	m->main_fn = strtab_intern(m->fns, "main");
	m->all_frames = (flags & MODEL_KEEP_ABOVE_MAIN) != 0;
	ac.p = p;
	ac.start_fn[0] = strtab_intern(m->fns, "__libc_start_call_main");
	ac.start_fn[1] = strtab_intern(m->fns, "__libc_start_main");
	m->lang = langview_open(p, m->peer);
	m->lisp = lispview_open(p);
	if (m->lisp)
		m->toplevel_fn = own_fn(m, LISP_TOPLEVEL);
	/* Where the own frames of a stack that later stacks refer to end:
	 * their shared frames hang there (the reader resolved each reference
	 * to the stack whose own frames hold its first shared frame). */
	first = xcalloc(p->nstacks + 1, sizeof(uint32_t));
	for (size_t i = 0; i < p->nstacks; i++)
		if (p->stacks[i].shared)
			first[p->stacks[i].ref] = 1;
	for (size_t i = 0; i < p->nstacks; i++) {
		uint32_t referred = first[i];
		first[i] = (uint32_t)nkeep;
		if (referred)
			nkeep += p->stacks[i].depth - p->stacks[i].shared;
		else
			first[i] = MODEL_NONE;
	}
	keep = xcalloc(nkeep + 1, sizeof(*keep));
	hang = xcalloc(p->nstacks + 1, sizeof(*hang));
	for (size_t i = 0; i < p->nstacks && rc == 0; i++) {
		const struct prof_stack *ps = &p->stacks[i];
		const unsigned char *cv = ps->cv;
		uint64_t c[FORMAT_MAX_COUNTERS];
		struct at a = { MODEL_NONE, MODEL_NONE, 0, MODEL_NONE };

		reader_counts(p, i, c);
		if (p->kind == FORMAT_KIND_MPROF && !identity) {
			uint64_t v[MPROF_NCOUNTERS_SCAN];
			for (size_t k = 0; k < m->nc; k++)
				v[k] = idx[k] >= 0 ? c[idx[k]] : 0; /* temp_*: optional */
			memcpy(c, v, m->nc * sizeof(uint64_t));
			cv = own(m, c);
		}
		/* Stacks are read once, in order: what the file held of those
		 * before goes back (and reads back if a reference needs it). */
		if (!(i & 1023))
			reader_forget(p, i);
		if (ps->shared) {
			/* The shared frames are r's from j out, held by r's own
			 * frames (the reader resolved the reference so).  The
			 * innermost of them, r's frame j, is a pc where it is a
			 * stack's frame 0 and that stack's flags say so: if it is
			 * one in r and not here, or the other way round, it is
			 * expanded again, in its role here, on the path of r's
			 * frames from j + 1 out. */
			const struct prof_stack *r = &p->stacks[ps->ref];
			uint32_t j = r->depth - ps->shared, nown_r = r->depth - r->shared;
			int pc_here = ps->shared == ps->depth && (ps->flags & FORMAT_STACK_PC_FIRST);
			int pc_there = j == 0 && (r->flags & FORMAT_STACK_PC_FIRST);

			if (pc_here == pc_there) {
				a = keep[first[ps->ref] + j];
			} else {
				a = j + 1 < nown_r ? keep[first[ps->ref] + j + 1] : hang[ps->ref];
				reader_own(p, ps->ref, j, frames);
				rc = own_frames(m, &ac, sy, frames, 1,
						pc_here ? FORMAT_STACK_PC_FIRST : 0, &a, NULL);
			}
		}
		hang[i] = a;
		if (rc == 0) {
			uint32_t nown = reader_own(p, i, 0, frames);
			rc = own_frames(m, &ac, sy, frames, nown, ps->flags, &a,
					first[i] == MODEL_NONE ? NULL : keep + first[i]);
		}
		if (rc == 0 && FORMAT_STACK_CATEGORY(ps->flags))
			rc = category_frame(m, p, FORMAT_STACK_CATEGORY(ps->flags), &a);
		if (rc == 0 && m->lisp && a.n == 0)
			rc = lisp_none_frame(m, &a);
		push(m, a, (flags & MODEL_KEEP_ABOVE_MAIN) != 0,
		     (ps->flags & FORMAT_STACK_TRUNCATED) != 0, c, cv);
	}
	if (rc == 0)
		tell_apart(m, NULL);
	if (rc == -1)
		snprintf(err, errlen, "its stacks symbolize into more than 2^32 frames");
	else if (rc < 0)
		snprintf(err, errlen,
			 "corrupt: over %zu distinct addresses, more than a file of %zu bytes holds "
			 "(one per 4 bytes)",
			 ac.max, p->size);
	free(first);
	free(keep);
	free(hang);
	free(ac.key);
	free(ac.start);
	free(ac.count);
	free(ac.pool);
	return rc;
}

void model_release(struct model *m)
{
	struct sitemap *sm = m->sitemap;

	for (size_t i = 0; i < m->nowned; i++)
		free(m->owned[i]);
	free(m->owned);
	free(m->site);
	free(m->runs);
	free(m->sites);
	free(m->stacks);
	free(m->last);
	if (sm)
		free(sm->slot);
	free(sm);

	lispview_free(m->lisp);
	langview_free(m->lang);
	strtab_free(m->fns);
	strtab_free(m->locs);
	if (m->own_names)
		strtab_free(m->own_names);
	strtab_free(m->atypes);
	strtab_free(m->decls);
	if (m->vkeys)
		strtab_free(m->vkeys);
	free(m->vkey_fn);
	free(m->variant_of);
	free(m->atype_size);
	free(m->alloc_mark);
	free(m->alloc_used);
	memset(m, 0, sizeof(*m));
}

size_t model_find_fns(const struct model *m, const char *name, uint8_t *set)
{
	int64_t id = strtab_find(m->fns, name);
	size_t n = strtab_count(m->fns), hits = 0;
	char *key;

	if (id >= 0) {
		set[id] = 1;
		hits = 1;
		/* C's functions of the name, each shown with its file. */
		for (size_t f = 0; f < m->variant_cap; f++)
			if (m->variant_of[f] == (uint64_t)id + 1) {
				set[f] = 1;
				hits++;
			}
		return hits;
	}
	key = cxxname_simplify(name);
	for (size_t f = 0; key && f < n; f++) {
		const char *fn = strtab_get(m->fns, (uint32_t)f);
		char *sf;
		if (!strcmp(fn, key)) {
			set[f] = 1;
			hits++;
		} else if (strchr(fn, '(') && (sf = cxxname_simplify(fn))) { /* a full C++ name */
			if (!strcmp(sf, key)) {
				set[f] = 1;
				hits++;
			}
			free(sf);
		}
	}
	free(key);
	if (!hits && m->vkeys) {
		/* C's static function by FILE:NAME, FILE any of its path's last
		 * parts (util.c:load, sub/util.c:load, the whole path), as
		 * -alloc-fn takes it, not only as shown. */
		const char *c;

		for (c = strchr(name, ':'); c; c = strchr(c + 1, ':')) {
			if (c == name || c[1] == ':' || c[-1] == ':')
				continue;
			for (uint32_t k = 0; k < strtab_count(m->vkeys); k++) {
				const char *kp = strtab_get(m->vkeys, k), *nl = strchr(kp, '\n');
				char *path;

				if (!nl || strcmp(nl + 1, c + 1))
					continue;
				path = xasprintf("%.*s", (int)(nl - kp), kp);
				if (ends_with_parts(path, name, (size_t)(c - name)) && !set[m->vkey_fn[k]]) {
					set[m->vkey_fn[k]] = 1;
					hits++;
				}
				free(path);
			}
		}
	}
	if (!hits && m->lang && *name) {
		/* A Python function, named after its module (langview.c:
		 * m.load, json.load), by its own qualified name (load). */
		for (uint32_t l = 1; l < langview_count(m->lang); l++) {
			const char *shown = langview_shown_if(m->lang, l, name);
			int64_t f = shown ? strtab_find(m->fns, shown) : -1;

			if (f >= 0 && !set[f]) {
				set[f] = 1;
				hits++;
			}
		}
	}
	return hits;
}

static uint64_t sum4(const uint64_t *c, int base)
{
	return c[base] + c[base + 1] + c[base + 2] + c[base + 3];
}

uint64_t model_allocs(const uint64_t *c) { return sum4(c, MPROF_C_ALLOCS); }
uint64_t model_bytes(const uint64_t *c) { return sum4(c, MPROF_C_BYTES); }
uint64_t model_frees(const uint64_t *c) { return sum4(c, MPROF_C_FREES); }
uint64_t model_freed(const uint64_t *c) { return sum4(c, MPROF_C_FREED); }
uint64_t model_class_bytes(const struct model *m, const uint64_t *c, int k)
{
	return m->has_scan ? c[MPROF_C_LOST_BYTES + 2 * k] : 0;
}
uint64_t model_class_objects(const struct model *m, const uint64_t *c, int k)
{
	return m->has_scan ? c[MPROF_C_LOST_OBJECTS + 2 * k] : 0;
}
uint64_t model_peak(const struct model *m, const uint64_t *c)
{
	return m->has_peak ? c[MPROF_C_PEAK_BYTES] : 0;
}
uint64_t model_peak_objects(const struct model *m, const uint64_t *c)
{
	return m->has_peak ? c[MPROF_C_PEAK_OBJECTS] : 0;
}
