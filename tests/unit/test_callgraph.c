/*
 * test_callgraph.c - the allocation call graph, cycles, partial chains and
 * two-column percentages, on hand-made stacks with hand-computed answers.
 */
#include "model/callgraph.h"
#include "model/model.h"
#include "read/reader.h"
#include "views/tables.h"
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

static char *render(const struct model *m, const struct callgraph *g, struct tables_opts *o)
{
	struct profile p;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	memset(&p, 0, sizeof(p));
	tables_print(f, m, g, &p, NULL, o);
	fclose(f);
	return buf;
}

static void test_paper_fg(void)
{
	/* mprof paper, "Problems Caused by Recursive Calls": main calls F, F
	 * calls G, G calls F, F calls G, G calls malloc(10). */
	const char *st[] = { "main", "F", "G", "F", "G" };
	struct model m;
	struct callgraph g;
	uint32_t f, gg, mn;

	model_init(&m);
	model_add(&m, st, 5, cnt(1, 10, 0));
	callgraph_build(&g, &m);
	mn = id(&m, "main"), f = id(&m, "F"), gg = id(&m, "G");
	is_int(cg_sum(g.fn.node[mn].sd_b), 10, "F/G: main credited 10 bytes");
	is_int(cg_sum(g.fn.node[f].sd_b), 10, "F/G: F credited 10 bytes, not 20");
	is_int(cg_sum(g.fn.node[gg].sd_b), 10, "F/G: G credited 10 bytes, not 20");
	is_int(cg_sum(g.fn.node[gg].self_b), 10, "F/G: G allocated 10 itself");
	is_int(cg_sum(g.fn.node[f].self_b), 0, "F/G: F allocated nothing itself");
	is_int(g.ncycles, 1, "F/G: one cycle");
	is_int(g.nmembers[0], 2, "F/G: cycle has F and G");
	ok(g.fn.node[f].cycle == 1 && g.fn.node[gg].cycle == 1 && !g.fn.node[mn].cycle,
	   "F/G: F and G in cycle 1, main in none");
	is_int(g.fn.node[f].called, 1, "F/G: F called once");
	is_int(g.fn.node[f].recur, 1, "F/G: F recursed once");
	{
		uint32_t c = callgraph_node_of(&g, f);
		is_int(cg_sum(g.merged.node[c].sd_b), 10, "F/G: the cycle as a whole has 10 bytes");
		is_int(cg_sum(g.merged.node[c].self_b), 10, "F/G: allocated in the cycle itself");
		is_int(g.merged.nedges, 1, "F/G: merged graph has one edge, main -> cycle");
		is_int(cg_sum(g.merged.edge[0].b), 10, "F/G: main -> cycle carries 10 bytes");
	}
	{
		struct tables_opts o = { TABLES_NORMAL, 1, 0, 0, 5, 0, 0 };
		char *out = render(&m, &g, &o);
		ok(strstr(out, "<cycle 1 as a whole>") != NULL, "F/G: cycle listed");
		ok(strstr(out, "F <cycle 1>") && strstr(out, "G <cycle 1>"), "F/G: members named with their cycle");
		free(out);
	}
	callgraph_release(&g);
	model_release(&m);
}

static void test_pairs(void)
{
	/* The paper's chain example: main->foo->bar(24), then main->foo->otherbar(10). */
	const char *a[] = { "main", "foo", "bar" }, *b[] = { "main", "foo", "otherbar" };
	struct model m;
	struct callgraph g;

	model_init(&m);
	model_add(&m, a, 3, cnt(1, 24, 0));
	model_add(&m, b, 3, cnt(1, 10, 1));
	callgraph_build(&g, &m);
	is_int(cg_sum(g.fn.node[id(&m, "main")].sd_b), 34, "pairs: main 34 bytes");
	is_int(cg_sum(g.fn.node[id(&m, "foo")].sd_b), 34, "pairs: foo 34 bytes");
	is_int(cg_sum(g.fn.node[id(&m, "foo")].desc_b), 34, "pairs: foo's descendents 34 bytes");
	is_int(g.fn.node[id(&m, "foo")].called, 2, "pairs: foo called twice");
	is_int(g.fn.node[id(&m, "foo")].out_calls, 2, "pairs: foo made two calls");
	is_int(g.ncycles, 0, "pairs: no cycles");
	is_int(g.tot_kept[SIZE_S], 24, "pairs: 24 bytes kept");
	for (size_t e = 0; e < g.fn.nedges; e++)
		if (g.fn.edge[e].from == id(&m, "main"))
			is_int(cg_sum(g.fn.edge[e].b), 34, "pairs: edge main->foo 34 bytes");
	callgraph_release(&g);
	model_release(&m);
}

static void test_self_recursion(void)
{
	const char *st[] = { "main", "r", "r", "r" };
	struct model m;
	struct callgraph g;

	model_init(&m);
	model_add(&m, st, 4, cnt(2, 8, 0));
	callgraph_build(&g, &m);
	is_int(g.ncycles, 0, "self recursion is not a cycle");
	is_int(g.fn.node[id(&m, "r")].called, 2, "r: 2 calls (one per allocation)");
	is_int(g.fn.node[id(&m, "r")].recur, 4, "r: 4 recursive calls");
	is_int(cg_sum(g.fn.node[id(&m, "r")].sd_b), 16, "r: 16 bytes, each allocation once");
	callgraph_release(&g);
	model_release(&m);
}

static void test_bigger_cycle(void)
{
	/* a -> b -> c -> a is a cycle; d hangs below it; e is separate. */
	const char *s1[] = { "main", "a", "b", "c", "a", "d" }, *s2[] = { "main", "e" };
	struct model m;
	struct callgraph g;

	model_init(&m);
	model_add(&m, s1, 6, cnt(3, 100, 1));
	model_add(&m, s2, 2, cnt(1, 4000, 0));
	callgraph_build(&g, &m);
	is_int(g.ncycles, 1, "abc: one cycle");
	is_int(g.nmembers[0], 3, "abc: three members");
	ok(!g.fn.node[id(&m, "d")].cycle && !g.fn.node[id(&m, "e")].cycle, "abc: d and e outside");
	{
		uint32_t c = callgraph_node_of(&g, id(&m, "a"));
		is_int(cg_sum(g.merged.node[c].sd_b), 300, "abc: cycle as a whole 300 bytes");
		is_int(cg_sum(g.merged.node[c].desc_b), 300, "abc: all of it through d");
		is_int(g.merged.node[c].called, 3, "abc: cycle entered 3 times");
	}
	is_int(g.tot_b[SIZE_X], 4000, "abc: 4000 extra-large bytes");
	is_int(g.tot_kept[SIZE_M], 200, "abc: 200 medium bytes kept");
	callgraph_release(&g);
	model_release(&m);
}

static void test_partial_chains(void)
{
	const char *s1[] = { "main", "a", "b", "c", "d", "e", "f" };
	const char *s2[] = { "main", "x", "b", "c", "d", "e", "f" }; /* same last 5 */
	const char *s3[] = { "main", "g" };
	struct model m;
	struct callgraph g;
	struct tables_opts o = { TABLES_VERBOSE, 1, 0, 0, 5, 0, 0 };
	char *out;

	model_init(&m);
	model_add(&m, s1, 7, cnt(4, 50, 1));
	model_add(&m, s2, 7, cnt(2, 50, 0));
	model_add(&m, s3, 2, cnt(1, 1000, 0));
	callgraph_build(&g, &m);
	out = render(&m, &g, &o);
	ok(strstr(out, "... > b > c > d > e > f\n") != NULL, "leaks: last five callers, '...' before");
	ok(strstr(out, "          250 (20)         6          300 (23)         1           50 ( 3)  ... > b > c > d > e > f\n") != NULL,
	   "leaks: chains with the same last five callers merge (kept 250, 6 allocs, 1 free)");
	ok(strstr(out, "         1000 (80)         1         1000 (76)                              main > g\n") != NULL,
	   "leaks: frees columns omitted when nothing was freed");
	ok(strstr(out, "1000 (80)") < strstr(out, "250 (20)"), "leaks: sorted by kept bytes");
	free(out);
	o.depth = 2;
	out = render(&m, &g, &o);
	ok(strstr(out, "... > e > f\n") != NULL, "leaks: -depth 2");
	free(out);
	o.leaktable = 0;
	out = render(&m, &g, &o);
	ok(strstr(out, "MEMORY LEAKS") == NULL, "leaks: -noleaktable");
	ok(strstr(out, "<TOTAL>") != NULL, "direct: <TOTAL> row");
	free(out);
	callgraph_release(&g);
	model_release(&m);
}

static void test_pct(void)
{
	char b[3];

	tables_pct2(b, 0, 100);
	is_str(b, "  ", "pct: 0 is blank");
	tables_pct2(b, 1, 1000);
	is_str(b, " .", "pct: below 1%% is a dot");
	tables_pct2(b, 7, 7);
	is_str(b, "**", "pct: 100%% is two stars");
	tables_pct2(b, 999, 1000);
	is_str(b, "99", "pct: 99.9%% is 99, never 100");
	tables_pct2(b, 5, 100);
	is_str(b, " 5", "pct: 5%%");
	tables_pct2(b, 1, 0);
	is_str(b, "  ", "pct: nothing of nothing is blank");
	tables_pct2(b, UINT64_MAX / 2, UINT64_MAX);
	is_str(b, "49", "pct: no overflow on huge counts");
}

int main(void)
{
	test_paper_fg();
	test_pairs();
	test_self_recursion();
	test_bigger_cycle();
	test_partial_chains();
	test_pct();
	return tap_done();
}
