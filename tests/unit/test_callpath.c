/*
 * test_callpath.c - call path profiles on hand-made sample trees, with
 * answers computed by hand from the paper's appendix algorithm.
 */
#include "model/callpath.h"
#include "tap.h"

#include <stdlib.h>

enum { MAIN, F, G, H, UNIQ, QSORT, PRINT, EXTRACT, READ, NIDS };
static const char *names[NIDS] = { "main", "f", "g", "h", "uniquify_db", "qsort",
				   "print_salary_list", "extract_salary_fields", "read_db" };

/* "(main f g) 13" for entry i of r. */
static char *show(const struct cp_result *r, size_t i)
{
	static char buf[256];
	size_t k = 0;

	if (i >= r->n)
		return "(none)";
	uint32_t path[64];

	k += (size_t)snprintf(buf + k, sizeof(buf) - k, "(");
	callpath_path(r, &r->e[i], path);
	for (uint32_t j = 0; j < r->e[i].len; j++)
		k += (size_t)snprintf(buf + k, sizeof(buf) - k, "%s%s", j ? " " : "", names[path[j]]);
	snprintf(buf + k, sizeof(buf) - k, ") %llu", (unsigned long long)r->e[i].hits);
	return buf;
}

static void expect(const struct cp_result *r, const char *const *want, size_t n, const char *what)
{
	is_int(r->n, n, "%s: %zu entries", what, n);
	for (size_t i = 0; i < n; i++)
		is_str(show(r, i), want[i], "%s: entry %zu", what, i);
}

/* The root set holding one id. */
static const uint8_t *one(uint32_t id)
{
	static uint8_t set[NIDS];

	memset(set, 0, sizeof(set));
	set[id] = 1;
	return set;
}

struct input {
	struct cp_input in;
	const uint32_t *ids[8];
	uint32_t n[8];
	uint64_t w[8];
};

static uint32_t ids_of(const void *ctx, size_t s, uint32_t *out)
{
	const struct input *x = ctx;

	memcpy(out, x->ids[s], x->n[s] * sizeof(uint32_t));
	return x->n[s];
}

static void add(struct input *x, const uint32_t *ids, uint32_t n, uint64_t w)
{
	size_t i = x->in.nstacks++;
	x->ids[i] = ids;
	x->n[i] = n;
	x->w[i] = w;
	x->in.weight = x->w;
	x->in.path = ids_of;
	x->in.ctx = x;
	if (n > x->in.maxn)
		x->in.maxn = n;
	x->in.nids = NIDS;
}

static void test_process_db(void)
{
	/* The paper's process_db: 2676 samples, 2355 under uniquify_db,
	 * 1820 of them in its qsort, 303 in print_salary_list. */
	static const uint32_t a[] = { MAIN, UNIQ, QSORT }, b[] = { MAIN, UNIQ },
			      c[] = { MAIN, PRINT, EXTRACT }, d[] = { MAIN, READ };
	struct input x = { 0 };
	struct cp_result r;
	const char *want[] = { "(main) 2676", "(main uniquify_db) 2355", "(main uniquify_db qsort) 1820",
			       "(main print_salary_list) 303",
			       "(main print_salary_list extract_salary_fields) 303", "(main read_db) 18" };

	add(&x, a, 3, 1820);
	add(&x, b, 2, 535);
	add(&x, c, 3, 303);
	add(&x, d, 2, 18);
	callpath_down(&x.in, one(MAIN), &r);
	expect(&r, want, 6, "process_db down from main");
	is_int(r.total, 2676, "process_db: total hits");
	is_int(r.e[2].depth, 2, "process_db: depth of (main uniquify_db qsort)");
	callpath_result_free(&r);
	callpath_up(&x.in, one(QSORT), &r);
	{
		const char *up[] = { "(qsort) 1820", "(uniquify_db qsort) 1820", "(main uniquify_db qsort) 1820" };
		expect(&r, up, 3, "process_db up from qsort");
	}
	callpath_result_free(&r);
}

static void test_recursion(void)
{
	static const uint32_t a[] = { MAIN, F, G, F, H }, b[] = { MAIN, F }, c[] = { MAIN, F, G },
			      d[] = { MAIN, F, F, F, F };
	struct input x = { 0 };
	struct cp_result r;

	add(&x, a, 5, 10);
	add(&x, b, 2, 5);
	add(&x, c, 3, 3);
	callpath_down(&x.in, one(MAIN), &r);
	{
		/* (main f g f): credited, then the path collapses back to
		 * (main f), so h below it counts for (main f h). */
		const char *want[] = { "(main) 18", "(main f) 18", "(main f g) 13", "(main f g f) 10",
				       "(main f h) 10" };
		expect(&r, want, 5, "recursive down from main");
	}
	callpath_result_free(&r);
	callpath_down(&x.in, one(F), &r);
	{
		const char *want[] = { "(f) 18", "(f g) 13", "(f g f) 10", "(f h) 10" };
		expect(&r, want, 4, "recursive down from f (a non-main root)");
	}
	callpath_result_free(&r);
	callpath_up(&x.in, one(H), &r);
	{
		const char *want[] = { "(h) 10", "(f h) 10", "(main f h) 10", "(g f h) 10", "(f g f h) 10" };
		expect(&r, want, 5, "recursive up from h");
	}
	callpath_result_free(&r);
	callpath_up(&x.in, one(F), &r);
	{
		const char *want[] = { "(f) 18", "(main f) 18", "(g f) 10", "(f g f) 10" };
		expect(&r, want, 4, "recursive up from f");
	}
	callpath_result_free(&r);
	callpath_functions(&x.in, &r);
	{
		const char *want[] = { "(main) 18", "(f) 18", "(g) 13", "(h) 10" };
		expect(&r, want, 4, "function profile: each sample once per function");
	}
	callpath_result_free(&r);
	callpath_bodies(&x.in, &r);
	{
		const char *want[] = { "(h) 10", "(f) 5", "(g) 3" };
		expect(&r, want, 3, "body profile");
	}
	callpath_result_free(&r);
	callpath_tree(&x.in, &r);
	{
		const char *want[] = { "(main) 18", "(main f) 18", "(main f g) 13", "(main f g f) 10",
				       "(main f g f h) 10" };
		expect(&r, want, 5, "sample tree");
	}
	callpath_result_free(&r);

	/* Direct recursion: never more than the sample's hits. */
	x.in.nstacks = 0;
	add(&x, d, 5, 7);
	callpath_down(&x.in, one(MAIN), &r);
	{
		const char *want[] = { "(main) 7", "(main f) 7", "(main f f) 7" };
		expect(&r, want, 3, "direct recursion collapses");
	}
	callpath_result_free(&r);
	callpath_down(&x.in, one(H), &r);
	is_int(r.n, 0, "a root on no stack: empty profile");
	callpath_result_free(&r);
}

int main(void)
{
	test_process_db();
	test_recursion();
	return tap_done();
}
