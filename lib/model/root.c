/*
 * root.c - owns the default root of a downward profile
 * (model_default_root). Why: root.h.
 */
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "model/lispview.h"
#include "model/root.h"
#include "read/reader.h"

/* Whether main is on some stack (the model knows its name always). */
static int main_sampled(const struct model *m)
{
	for (size_t k = 0; k < m->nnodes; k++)
		if (m->sites[m->site[k]].fn == m->main_fn)
			return 1;
	return 0;
}

/* The module that holds addr, or NULL. */
static const struct prof_module *module_of(const struct profile *p, uint64_t addr)
{
	for (size_t i = 0; i < p->nmodules; i++)
		if (addr >= p->modules[i].start && addr < p->modules[i].end)
			return &p->modules[i];
	return NULL;
}

/* Whether entry addresses a and b lie in one object (by path: a library
 * maps several ranges). */
static int one_module(const struct profile *p, uint64_t a, uint64_t b)
{
	const struct prof_module *x = module_of(p, a), *y = module_of(p, b);

	return x && y && x->path && y->path && !strcmp(x->path, y->path);
}

/*
 * A stripped program's main has no name: it is the function glibc's
 * __libc_start_call_main (before 2.34, __libc_start_main) calls, whatever
 * it is called (zstd+0x4f60).  That function's name, or NULL.  It also
 * calls exit and _setjmp, in its own library: a callee there is not main
 * (a program whose only stacks through it are exit's, flushing stdio into
 * a full pipe, has no main on any stack).
 */
static const char *main_by_caller(const struct profile *p, const struct model *m)
{
	int64_t a = strtab_find(m->fns, "__libc_start_call_main"),
		b = strtab_find(m->fns, "__libc_start_main");

	if (a < 0 && b < 0)
		return NULL;
	for (size_t r = 0; r < m->nruns; r++) {
		size_t end = r + 1 < m->nruns ? m->runs[r + 1].first : m->nnodes;

		for (size_t k = m->runs[r].first; k < end; k++) {
			uint32_t caller = k == m->runs[r].first ? m->runs[r].parent : (uint32_t)(k - 1),
				 fn;

			if (caller == MODEL_NONE)
				continue;
			fn = m->sites[m->site[caller]].fn;
			if ((a < 0 || fn != (uint32_t)a) && (b < 0 || fn != (uint32_t)b))
				continue;
			if (one_module(p, m->sites[m->site[caller]].func_addr,
				       m->sites[m->site[k]].func_addr))
				continue; /* exit, _setjmp */
			return strtab_get(m->fns, m->sites[m->site[k]].fn);
		}
	}
	return NULL;
}

/* Whether fn is a module's code: <module>, or MODULE.<module>. */
static int is_module(const char *fn)
{
	size_t n = strlen(fn);

	return n >= 8 && !strcmp(fn + n - 8, "<module>") && (n == 8 || fn[n - 9] == '.');
}

/*
 * A Python program's root: its script's <module> ("prog.<module>",
 * langview.c), the outermost module code on each stack (under runpy's
 * frames for python3 -m, "__main__.<module>"), the one under which the
 * stacks count the most (the first counter: allocations, samples); NULL
 * if none.
 */
static const char *module_root(const struct model *m)
{
	size_t nfn = strtab_count(m->fns);
	uint64_t *weight = xcalloc(nfn ? nfn : 1, sizeof(*weight)),
		 *buf = xcalloc(m->nc ? m->nc : 1, sizeof(*buf)), best = 0;
	uint8_t *module = xcalloc(nfn ? nfn : 1, 1);
	uint32_t *path = xcalloc((size_t)m->maxn + 1, sizeof(*path));
	const char *root = NULL;

	for (size_t f = 0; f < nfn; f++)
		module[f] = (uint8_t)is_module(strtab_get(m->fns, (uint32_t)f));
	for (size_t i = 0; i < m->nstacks; i++) {
		const struct model_stack *s = &m->stacks[i];
		uint32_t n = s->cut ? 0 : model_path(m, s, path), fn = 0, k;

		for (k = 0; k < n && !module[fn = m->sites[path[k]].fn]; k++)
			;
		if (k == n)
			continue;
		weight[fn] += 1 + (m->nc ? model_counts(m, s, buf)[0] : 0);
		if (weight[fn] > best) {
			best = weight[fn];
			root = strtab_get(m->fns, fn);
		}
	}
	free(weight);
	free(buf);
	free(module);
	free(path);
	return root;
}

const char *model_default_root(const struct profile *p, const struct model *m)
{
	if (m->lisp) /* a Lisp program's outermost function is no main */
		return LISP_TOPLEVEL;
	/* A Python program's main is a function of its own, if any (or
	 * site.main): its outermost frames are its modules' code. */
	if (m->lang)
		return module_root(m);
	if (m->main_fn != MODEL_NONE && main_sampled(m))
		return "main";
	return main_by_caller(p, m);
}
