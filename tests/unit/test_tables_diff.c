/*
 * test_tables_diff.c - the difference of two runs (tables_diff.c) on
 * hand-made stacks: stacks matched by names, changes below zero carried
 * modulo 2^64 through the call graph and the leak chains, and model_add's
 * sharing of outer frames that keeps the difference model small.
 */
#include "model/callgraph.h"
#include "model/model.h"
#include "read/reader.h"
#include "views/tables.h"
#include "views/tables_diff.h"
#include "base/util.h"
#include "tap.h"

#include <stdlib.h>

/* Counters for `allocs` objects of `size` bytes, `frees` of them freed. */
static const uint64_t *cnt(uint64_t allocs, uint64_t size, uint64_t frees)
{
	static uint64_t c[MPROF_NCOUNTERS];
	int k = format_size_class(size);

	memset(c, 0, sizeof(c));
	c[MPROF_C_ALLOCS + k] = allocs;
	c[MPROF_C_BYTES + k] = allocs * size;
	c[MPROF_C_FREES + k] = frees;
	c[MPROF_C_FREED + k] = frees * size;
	return c;
}

static uint32_t id(const struct model *m, const char *name)
{
	return (uint32_t)strtab_find(m->fns, name);
}

/* Stack i's names joined by '>'. */
static const char *names(const struct model *m, size_t i)
{
	static char buf[256];
	uint32_t path[16], n = model_path(m, &m->stacks[i], path);

	buf[0] = 0;
	for (uint32_t j = 0; j < n; j++) {
		if (j)
			strcat(buf, ">");
		strcat(buf, strtab_get(m->fns, m->sites[path[j]].fn));
	}
	return buf;
}

static void test_add_shares(void)
{
	const char *s1[] = { "main", "a", "b" }, *s2[] = { "main", "a", "c" }, *s3[] = { "main", "d" };
	struct model m;

	model_init(&m);
	model_add(&m, s1, 3, cnt(1, 8, 0));
	model_add(&m, s2, 3, cnt(1, 8, 0));
	model_add(&m, s3, 2, cnt(1, 8, 0));
	model_add(&m, s3, 1, cnt(1, 8, 0)); /* main alone: a prefix */
	model_add(&m, s1, 3, cnt(1, 8, 0)); /* shares only main now */
	is_int(m.nnodes, 7, "model_add: outer frames in common with the last stack are shared");
	is_str(names(&m, 0), "main>a>b", "model_add: first stack");
	is_str(names(&m, 1), "main>a>c", "model_add: second stack, sharing main>a");
	is_str(names(&m, 2), "main>d", "model_add: third stack, sharing main");
	is_str(names(&m, 3), "main", "model_add: a prefix of the last stack");
	is_str(names(&m, 4), "main>a>b", "model_add: a stack again after another");
	model_release(&m);
}

static void test_difference(void)
{
	const char *fg[] = { "main", "f", "g" }, *h[] = { "main", "h" }, *k[] = { "main", "k" },
		   *same[] = { "main", "same" };
	struct model b, n, d;
	struct callgraph g;
	struct tables_chain *lk;
	uint8_t *lib;
	size_t nl;

	model_init(&b);
	model_add(&b, fg, 3, cnt(10, 8, 0));
	model_add(&b, h, 2, cnt(4, 100, 4));
	model_add(&b, same, 2, cnt(1, 16, 0));
	model_init(&n);
	model_add(&n, same, 2, cnt(1, 16, 0));
	model_add(&n, k, 2, cnt(2, 3000, 0));
	model_add(&n, h, 2, cnt(1, 100, 1));
	/* The same stack twice (two addresses in one function, in a real
	 * run): summed. */
	model_add(&n, fg, 3, cnt(20, 8, 0));
	model_add(&n, fg, 3, cnt(10, 8, 0));

	tables_diff_model(&d, &b, &n);
	is_int(d.nstacks, 3, "difference: three stacks changed, the unchanged one left out");
	is_int((int64_t)model_bytes(d.tot), 160 - 300 + 6000, "difference: total bytes, a shrink included");
	is_int((int64_t)model_allocs(d.tot), 20 - 3 + 2, "difference: total allocations");
	callgraph_build(&g, &d);
	is_int((int64_t)cg_sum(g.fn.node[id(&d, "main")].sd_b), 5860, "difference: main's self+desc");
	is_int((int64_t)cg_sum(g.fn.node[id(&d, "h")].sd_b), -300, "difference: h shrank by 300 bytes");
	is_int((int64_t)g.fn.node[id(&d, "h")].called, -3, "difference: h on 3 fewer allocation stacks");
	is_int((int64_t)cg_sum(g.fn.node[id(&d, "g")].self_b), 160, "difference: g grew by 160 bytes");
	is_int((int64_t)g.fn.node[id(&d, "main")].out_calls, 19, "difference: main's calls");
	is_int(strtab_find(d.fns, "same") < 0 || !g.fn.node[id(&d, "same")].called, 1,
	       "difference: same is not on a changed stack");
	lib = tables_library_fns(&d);
	nl = tables_chains(&d, 5, 0, 1, lib, &lk);
	free(lib);
	/* h's change frees all it allocates: no change in what is kept. */
	is_int(nl, 2, "difference: two chains changed what they keep");
	for (size_t i = 0; i < nl; i++) {
		uint32_t path[5];
		model_inner(&d, &d.stacks[lk[i].stack], lk[i].n, path);
		if (!strcmp(strtab_get(d.fns, d.sites[path[lk[i].n - 1]].fn), "k"))
			is_int((int64_t)(lk[i].bytes - lk[i].freed), 6000, "difference: main>k keeps 6000 more");
		else
			is_int((int64_t)(lk[i].bytes - lk[i].freed), 160, "difference: main>f>g keeps 160 more");
	}
	free(lk);

	{
		struct profile pb, pn;
		struct tables_diff_side sb = { "b.data", &pb, &b }, sn = { "n.data", &pn, &n };
		struct tables_opts o = { TABLES_NORMAL, 1, 0, 0, 5, 0, 0 };
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);

		memset(&pb, 0, sizeof(pb));
		memset(&pn, 0, sizeof(pn));
		tables_diff_print(f, &d, &g, &sb, &sn, NULL, &o);
		fclose(f);
		/* BASE: 15 allocations of 496 bytes, 96 kept. */
		ok(strstr(buf, "\nchange: +19 allocations (+126%), +5860 bytes (+1181%), -3 frees (-75%), "
			       "-300 bytes freed (-75%), +6160 bytes kept (+6416%)\n") != NULL,
		   "print: the change line, as a percent of BASE's totals");
		ok(strstr(buf, "\n         -300   (-60)             0                  -3  h\n") != NULL,
		   "print: h's direct allocation, signed, -300 of BASE's 496 bytes");
		ok(strstr(buf, "path\n        +6000 (+6250)        +2        +6000 (+1209)                         main > k\n") != NULL,
		   "print: main > k's leak chain first (the largest change), +6000 of BASE's 96 kept");
		ok(strstr(buf, "\n[2]            -300   (-60)         -300   (-60)         -3 0           h [2]\n") != NULL,
		   "print: h's call graph entry, after larger changes");
		free(buf);
	}
	callgraph_release(&g);
	model_release(&d);

	/* A run against itself: nothing changed. */
	tables_diff_model(&d, &n, &n);
	is_int(d.nstacks, 0, "a run against itself: no stack changed");
	model_release(&d);
	model_release(&b);
	model_release(&n);
}

int main(void)
{
	test_add_shares();
	test_difference();
	return tap_done();
}
