/*
 * model.c - turn a profile's address stacks into symbolic stacks (model.h).
 */
#include "model.h"
#include "reader.h"
#include "symbols.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void model_init(struct model *m)
{
	memset(m, 0, sizeof(*m));
	m->fns = strtab_new();
	m->locs = strtab_new();
}

static struct model_stack *push(struct model *m, uint32_t n, const uint64_t *c)
{
	struct model_stack *s;

	util_grow(&m->stacks, &m->cap, m->nstacks + 1, sizeof(*m->stacks));
	s = &m->stacks[m->nstacks++];
	memset(s, 0, sizeof(*s));
	s->n = n;
	s->f = xcalloc(n, sizeof(*s->f));
	for (int k = 0; k < MPROF_NCOUNTERS; k++) {
		s->c[k] = c[k];
		m->tot[k] += c[k];
	}
	return s;
}

void model_add(struct model *m, const char *const *names, uint32_t n, const uint64_t *c)
{
	struct model_stack *s = push(m, n, c);

	for (uint32_t i = 0; i < n; i++) {
		s->f[i].fn = strtab_intern(m->fns, names[i]);
		s->f[i].offset = MODEL_NO_OFFSET;
		s->f[i].loc = UINT32_MAX;
	}
}

int model_from_profile(struct model *m, const struct profile *p, struct symbols *sy,
		       unsigned flags, char *err, size_t errlen)
{
	int idx[MPROF_NCOUNTERS];
	struct model_frame *tmp = NULL;
	size_t tcap = 0;
	int64_t main_id;

	for (int k = 0; k < MPROF_NCOUNTERS; k++) {
		idx[k] = reader_counter(p, format_mprof_counter_names[k]);
		if (idx[k] < 0) {
			snprintf(err, errlen, "has no '%s' counter: not mprof allocation data",
				 format_mprof_counter_names[k]);
			return -1;
		}
	}
	main_id = strtab_intern(m->fns, "main");
	for (size_t i = 0; i < p->nstacks; i++) {
		const struct prof_stack *ps = &p->stacks[i];
		uint64_t c[MPROF_NCOUNTERS];
		size_t n = 0;
		struct model_stack *s;

		for (int k = 0; k < MPROF_NCOUNTERS; k++)
			c[k] = ps->counts[idx[k]];
		/* Expand each address, innermost first, into logical frames. */
		for (uint32_t d = 0; d < ps->depth; d++) {
			struct sym_frame sf[32];
			int ret = !(d == 0 && (ps->flags & FORMAT_STACK_PC_FIRST));
			int k = symbols_resolve(sy, ps->frames[d], ret, sf, 32);

			util_grow(&tmp, &tcap, n + (size_t)k, sizeof(*tmp));
			for (int j = 0; j < k; j++) {
				struct model_frame *f = &tmp[n++];
				f->fn = strtab_intern(m->fns, sf[j].func);
				f->inlined = (uint8_t)sf[j].inlined;
				f->offset = (!sf[j].inlined && sf[j].func_addr && sf[j].offset < MODEL_NO_OFFSET)
						    ? (uint32_t)sf[j].offset : MODEL_NO_OFFSET;
				f->loc = UINT32_MAX;
				if (sf[j].file) {
					char buf[512];
					const char *base = strrchr(sf[j].file, '/');
					snprintf(buf, sizeof(buf), "%s:%d", base ? base + 1 : sf[j].file, sf[j].line);
					f->loc = strtab_intern(m->locs, buf);
				}
			}
		}
		/* tmp is innermost first: find main, the outermost frame kept. */
		if (!(flags & MODEL_KEEP_ABOVE_MAIN)) {
			for (size_t j = n; j-- > 0;)
				if (tmp[j].fn == (uint32_t)main_id) {
					n = j + 1;
					break;
				}
		}
		s = push(m, (uint32_t)n, c);
		s->cut = (ps->flags & FORMAT_STACK_TRUNCATED) != 0;
		for (size_t j = 0; j < n; j++)
			s->f[j] = tmp[n - 1 - j];
	}
	free(tmp);
	return 0;
}

void model_release(struct model *m)
{
	for (size_t i = 0; i < m->nstacks; i++)
		free(m->stacks[i].f);
	free(m->stacks);
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
