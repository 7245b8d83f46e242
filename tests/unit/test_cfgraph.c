/*
 * test_cfgraph.c - cfprof's figures (cfgraph.c) and the calls callpath
 * reports beside the hits, on a hand-made profile as the runtime writes it:
 * the paper's f/g example (f makes expensive calls to isPrime, g cheap ones,
 * equally many), f once calling itself (a folded recursive call: its own
 * path, calls only), and samples while nothing was current.
 */
#include "model/callpath.h"
#include "model/cfgraph.h"
#include "tap.h"

#include <stdlib.h>

enum { MAIN, F, G, ISPRIME, NIDS };

static const uint32_t p_main[] = { MAIN }, p_f[] = { MAIN, F }, p_fi[] = { MAIN, F, ISPRIME },
		      p_g[] = { MAIN, G }, p_gi[] = { MAIN, G, ISPRIME }, p_ff[] = { MAIN, F, F };
static const uint32_t *paths[] = { p_main, p_f, p_fi, p_g, p_gi, p_ff, NULL };
static const uint32_t lens[] = { 1, 2, 3, 2, 3, 3, 0 };
static uint64_t hits[] = { 1, 10, 900, 5, 84, 0, 3 };
static uint64_t calls[] = { 1, 2000, 16000, 2000, 16000, 5, 0 };

static uint32_t path(const void *ctx, size_t s, uint32_t *out)
{
	(void)ctx;
	memcpy(out, paths[s], lens[s] * sizeof(uint32_t));
	return lens[s];
}

static const struct cfg_edge *edge(const struct cfg *g, uint32_t from, uint32_t to)
{
	for (size_t k = 0; k < g->nedges; k++)
		if (g->edge[k].from == from && g->edge[k].to == to)
			return &g->edge[k];
	return NULL;
}

static void test_graph(const struct cp_input *in)
{
	struct cfg g;
	const struct cfg_edge *e;
	size_t first, n;

	ok(cfg_build(in, &g) == 0, "built");
	is_int(g.total, 1003, "total: every stack's hits");
	is_int(g.unprofiled, 3, "(unprofiled): the empty path's hits");
	is_int(g.fn[ISPRIME].self, 984, "isPrime's own hits");
	is_int(g.fn[ISPRIME].calls, 32000, "isPrime's calls");
	is_int(g.fn[F].self, 10, "f's own hits");
	is_int(g.fn[F].incl, 910, "f with descendants: once per stack, not twice for f f");
	is_int(g.fn[F].calls, 2005, "f's calls, the recursive ones too");
	is_int(g.fn[F].rcalls, 5, "of which from itself");
	is_int(g.fn[MAIN].incl, 1000, "main with descendants");
	is_int(g.fn[MAIN].spont, 1, "main's calls from no instrumented caller");
	e = edge(&g, F, ISPRIME);
	ok(e && e->calls == 16000 && e->self == 900 && e->incl == 900,
	   "f -> isPrime: 16000 calls, 900 hits of its own: per path, not apportioned");
	e = edge(&g, G, ISPRIME);
	ok(e && e->calls == 16000 && e->self == 84, "g -> isPrime: 16000 calls, 84 hits");
	e = edge(&g, MAIN, F);
	ok(e && e->calls == 2000 && e->self == 10 && e->incl == 910, "main -> f: 2000 calls, 910 hits");
	e = edge(&g, F, F);
	ok(e && e->calls == 5 && e->incl == 0, "f -> f: 5 calls, no hits");
	is_int(g.order[0], MAIN, "the graph starts with main (most time with descendants)");
	is_int(g.fn[MAIN].index, 1, "main is [1]");
	n = cfg_callers(&g, ISPRIME, &first);
	is_int(n, 2, "isPrime has two callers");
	is_int(g.edge[g.into[first]].from, F, "callers sorted: f first");
	n = cfg_callees(&g, MAIN, &first);
	is_int(n, 2, "main calls two functions");
	cfg_free(&g);
}

static void test_callpath_calls(const struct cp_input *in)
{
	static const uint8_t is_main[NIDS] = { 1, 0, 0, 0 }, is_prime[NIDS] = { 0, 0, 0, 1 };
	struct cp_result r;
	uint32_t p[8];
	int found = 0;

	callpath_down(in, is_main, &r);
	for (size_t i = 0; i < r.n; i++) {
		callpath_path(&r, &r.e[i], p);
		if (r.e[i].len == 2 && p[1] == F) {
			is_int(r.e[i].calls, 2005, "down main: (main f) has f's calls, the folded ones too");
			is_int(r.e[i].hits, 910, "down main: (main f) hits");
			found++;
		}
		if (r.e[i].len == 3 && p[1] == G) {
			is_int(r.e[i].calls, 16000, "down main: (main g isPrime) calls");
			found++;
		}
	}
	is_int(found, 2, "down main: both paths found");
	callpath_result_free(&r);
	callpath_up(in, is_prime, &r);
	found = 0;
	for (size_t i = 0; i < r.n; i++) {
		callpath_path(&r, &r.e[i], p);
		if (r.e[i].len == 1) {
			is_int(r.e[i].calls, 32000, "up isPrime: (isPrime) all its calls");
			found++;
		}
		if (r.e[i].len == 2 && p[0] == F) {
			is_int(r.e[i].calls, 16000, "up isPrime: (f isPrime) the calls from f");
			is_int(r.e[i].hits, 900, "up isPrime: (f isPrime) hits");
			found++;
		}
	}
	is_int(found, 2, "up isPrime: both paths found");
	callpath_result_free(&r);
	callpath_bodies(in, &r);
	for (size_t i = 0; i < r.n; i++)
		if (r.e[i].node == F)
			is_int(r.e[i].calls, 2005, "body: f's calls");
	callpath_result_free(&r);
}

int main(void)
{
	struct cp_input in = { 0 };

	in.nstacks = 7;
	in.weight = hits;
	in.calls = calls;
	in.path = path;
	in.maxn = 3;
	in.nids = NIDS;
	test_graph(&in);
	test_callpath_calls(&in);
	return tap_done();
}
