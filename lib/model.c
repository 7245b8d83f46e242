/*
 * model.c - turn a profile's address stacks into symbolic stacks (model.h).
 *
 * Stacks repeat their addresses (the mprof paper: most of a chain repeats
 * between allocations), so each distinct address is symbolized and turned
 * into site ids once, in a cache; a stack is then a copy of cached ids.
 * Stacks' site ids live in one growing array and are pointed to only when
 * all stacks are in.
 */
#include "model.h"
#include "reader.h"
#include "symbols.h"
#include "util.h"

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
	m->fns = strtab_new();
	m->locs = strtab_new();
	m->sitemap = xcalloc(1, sizeof(struct sitemap));
	m->nc = MPROF_NCOUNTERS;
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

/* Append a stack whose site ids are ids[0..n) (already in m->ids or not). */
static void push(struct model *m, uint32_t n, uint32_t cut, const uint64_t *c)
{
	struct model_stack *s;

	util_grow(&m->stacks, &m->cap, m->nstacks + 1, sizeof(*m->stacks));
	s = &m->stacks[m->nstacks++];
	s->n = n;
	s->cut = cut;
	/* Until model_finish, site holds the offset into m->ids. */
	s->site = (const uint32_t *)(uintptr_t)(m->nids - n);
	s->c = c;
	for (size_t k = 0; k < m->nc; k++)
		m->tot[k] += c[k];
}

static uint32_t *ids_room(struct model *m, size_t n)
{
	util_grow(&m->ids, &m->ids_cap, m->nids + n, sizeof(uint32_t));
	return m->ids + m->nids;
}

/* Point every stack at its ids, now that m->ids will not move again. */
static void finish(struct model *m)
{
	for (size_t i = 0; i < m->nstacks; i++)
		m->stacks[i].site = m->ids + (uintptr_t)m->stacks[i].site;
}

static const uint64_t *own(struct model *m, const uint64_t *c)
{
	uint64_t *copy = xmalloc(m->nc * sizeof(uint64_t));

	memcpy(copy, c, m->nc * sizeof(uint64_t));
	util_grow(&m->owned, &m->owned_cap, m->nowned + 1, sizeof(uint64_t *));
	m->owned[m->nowned++] = copy;
	return copy;
}

void model_add(struct model *m, const char *const *names, uint32_t n, const uint64_t *c)
{
	uint32_t *ids;

	/* Re-point earlier stacks' ids as offsets while m->ids may move. */
	for (size_t i = 0; i < m->nstacks; i++)
		m->stacks[i].site = (const uint32_t *)(uintptr_t)(m->stacks[i].site - m->ids);
	ids = ids_room(m, n);
	for (uint32_t i = 0; i < n; i++) {
		struct model_site st = { strtab_intern(m->fns, names[i]), MODEL_NO_OFFSET, MODEL_NO_LOC, 0, 0 };
		ids[i] = site_id(m, &st);
	}
	m->nids += n;
	push(m, n, 0, own(m, c));
	finish(m);
}

/* Cache: address (and whether it is a return address) -> its site ids,
 * innermost first, in a pool. */
struct addrcache {
	uint64_t *key; /* addr << 1 | is_ret, + 1 so 0 is empty */
	uint32_t *start, *count;
	size_t nslots, n;
	uint32_t *pool;
	size_t npool, cap;
};

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

/* The site ids of addr, innermost first: *n of them at the returned pointer
 * (valid until the next call). */
static const uint32_t *expand(struct model *m, struct addrcache *a, struct symbols *sy, uint64_t addr,
			      int ret, uint32_t *n)
{
	uint64_t k = (addr << 1 | (uint64_t)ret) + 1;
	struct sym_frame sf[32];
	size_t j;
	int cnt;

	if (2 * (a->n + 1) > a->nslots)
		ac_grow(a);
	for (j = (size_t)(k * 0x9e3779b97f4a7c15ull >> 20) & (a->nslots - 1); a->key[j];
	     j = (j + 1) & (a->nslots - 1))
		if (a->key[j] == k) {
			*n = a->count[j];
			return a->pool + a->start[j];
		}
	cnt = symbols_resolve(sy, addr, ret, sf, 32);
	util_grow(&a->pool, &a->cap, a->npool + (size_t)cnt, sizeof(uint32_t));
	for (int i = 0; i < cnt; i++) {
		struct model_site st;
		char buf[512];

		memset(&st, 0, sizeof(st)); /* sites are compared bytewise */
		st.func_addr = sf[i].inlined ? 0 : sf[i].func_addr;
		st.fn = strtab_intern(m->fns, sf[i].func);
		st.inlined = (uint32_t)sf[i].inlined;
		st.offset = (!sf[i].inlined && sf[i].func_addr && sf[i].offset < MODEL_NO_OFFSET)
				    ? (uint32_t)sf[i].offset : MODEL_NO_OFFSET;
		st.loc = MODEL_NO_LOC;
		if (sf[i].file) {
			const char *base = strrchr(sf[i].file, '/');
			snprintf(buf, sizeof(buf), "%s:%d", base ? base + 1 : sf[i].file, sf[i].line);
			st.loc = strtab_intern(m->locs, buf);
		}
		a->pool[a->npool + (size_t)i] = site_id(m, &st);
	}
	a->key[j] = k;
	a->start[j] = (uint32_t)a->npool;
	a->count[j] = (uint32_t)cnt;
	a->n++;
	a->npool += (size_t)cnt;
	*n = (uint32_t)cnt;
	return a->pool + a->start[j];
}

int model_from_profile(struct model *m, const struct profile *p, struct symbols *sy,
		       unsigned flags, char *err, size_t errlen)
{
	int idx[MPROF_NCOUNTERS], identity = 1;
	struct addrcache ac;
	uint32_t *tmp = NULL;
	size_t tcap = 0;
	uint32_t main_id;

	if (p->kind != FORMAT_KIND_MPROF) {
		m->nc = p->ncounters;
	} else {
		for (int k = 0; k < MPROF_NCOUNTERS; k++) {
			idx[k] = reader_counter(p, format_mprof_counter_names[k]);
			if (idx[k] < 0) {
				snprintf(err, errlen, "has no '%s' counter: not mprof allocation data",
					 format_mprof_counter_names[k]);
				return -1;
			}
			identity &= idx[k] == k;
		}
	}
	memset(&ac, 0, sizeof(ac));
	main_id = strtab_intern(m->fns, "main");
	for (size_t i = 0; i < p->nstacks; i++) {
		const struct prof_stack *ps = &p->stacks[i];
		const uint64_t *c = ps->counts;
		size_t n = 0;
		uint32_t *ids;

		if (p->kind == FORMAT_KIND_MPROF && !identity) {
			uint64_t v[MPROF_NCOUNTERS];
			for (int k = 0; k < MPROF_NCOUNTERS; k++)
				v[k] = ps->counts[idx[k]];
			c = own(m, v);
		}
		/* Expand each address, innermost first, into sites. */
		for (uint32_t d = 0; d < ps->depth; d++) {
			uint32_t k;
			int ret = !(d == 0 && (ps->flags & FORMAT_STACK_PC_FIRST));
			const uint32_t *e = expand(m, &ac, sy, ps->frames[d], ret, &k);

			util_grow(&tmp, &tcap, n + k, sizeof(*tmp));
			memcpy(tmp + n, e, k * sizeof(uint32_t));
			n += k;
		}
		/* tmp is innermost first: main is the outermost frame kept. */
		if (!(flags & MODEL_KEEP_ABOVE_MAIN)) {
			for (size_t j = n; j-- > 0;)
				if (m->sites[tmp[j]].fn == main_id) {
					n = j + 1;
					break;
				}
		}
		ids = ids_room(m, n);
		for (size_t j = 0; j < n; j++)
			ids[j] = tmp[n - 1 - j];
		m->nids += n;
		push(m, (uint32_t)n, (ps->flags & FORMAT_STACK_TRUNCATED) != 0, c);
	}
	finish(m);
	free(tmp);
	free(ac.key);
	free(ac.start);
	free(ac.count);
	free(ac.pool);
	return 0;
}

void model_release(struct model *m)
{
	struct sitemap *sm = m->sitemap;

	for (size_t i = 0; i < m->nowned; i++)
		free(m->owned[i]);
	free(m->owned);
	free(m->ids);
	free(m->sites);
	free(m->stacks);
	if (sm)
		free(sm->slot);
	free(sm);
	strtab_free(m->fns);
	strtab_free(m->locs);
	memset(m, 0, sizeof(*m));
}

static uint64_t sum4(const uint64_t *c, int base)
{
	return c[base] + c[base + 1] + c[base + 2] + c[base + 3];
}

uint64_t model_allocs(const uint64_t *c) { return sum4(c, MPROF_C_ALLOCS); }
uint64_t model_bytes(const uint64_t *c) { return sum4(c, MPROF_C_BYTES); }
uint64_t model_frees(const uint64_t *c) { return sum4(c, MPROF_C_FREES); }
uint64_t model_freed(const uint64_t *c) { return sum4(c, MPROF_C_FREED); }
