/*
 * tables.c - print mprof's four tables: allocation bins, memory leaks,
 * direct allocation and (tables_cg.c) the allocation call graph.  Field
 * names, order and conventions follow mprof.1 (FIELDS IN THE OUTPUT,
 * TABLE 1 to 4, ANCESTOR and DESCENDENT LISTINGS); the layout follows
 * gprof, as the paper does.
 */
#include "views/tables.h"
#include "model/callgraph.h"
#include "symbols/cxxname.h"
#include "base/escape.h"
#include "model/model.h"
#include "read/reader.h"
#include "symbols/symbols.h"
#include "base/util.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "format/format.h"

void tables_pct2(char *out, uint64_t num, uint64_t den)
{
	uint64_t p;

	if (num == 0 || den == 0) {
		strcpy(out, "  ");
		return;
	}
	if (num >= den) {
		strcpy(out, "**");
		return;
	}
	/* 128-bit: num * 100 overflows 64 bits for huge byte counts. */
	p = (uint64_t)((unsigned __int128)num * 100 / den);
	if (p < 1) {
		strcpy(out, " .");
		return;
	}
	if (p > 99)
		p = 99;
	snprintf(out, 3, "%2u", (unsigned)p);
}

double tables_threshold(enum tables_verbosity v)
{
	return v == TABLES_VERBOSE ? -1.0 : v == TABLES_NORMAL ? 0.5 : 1.0;
}

static int over(uint64_t num, uint64_t den, double pct)
{
	if (pct < 0)
		return 1;
	return den && (double)num * 100.0 > pct * (double)den;
}

/* "s  m  l  x" breakdown: each class of v as a share of den. */
static void breakdown(char *out, const uint64_t *v, uint64_t den)
{
	char p[3];

	out[0] = 0;
	for (int k = 0; k < SIZE_NCLASSES; k++) {
		tables_pct2(p, v[k], den);
		strcat(out, p);
		if (k < SIZE_NCLASSES - 1)
			strcat(out, " ");
	}
}

void tables_breakdown(char *out, const uint64_t *v, uint64_t den)
{
	breakdown(out, v, den);
}

void tables_rule(FILE *out, const char *title)
{
	fprintf(out, "\n--------- %s ---------\n\n", title);
}

int tables_snapshot(const struct profile *p)
{
	const char *r = reader_info(p, "reason");

	return r && !strcmp(r, "snapshot");
}

void tables_run(FILE *out, const struct profile *p)
{
	const char *cmd = reader_info(p, "cmdline"), *pid = reader_info(p, "pid");
	const char *ended = reader_ended(p);

	escape_put(out, cmd ? cmd : "?");
	fputs(" (pid ", out);
	escape_put(out, pid ? pid : "?");
	if (ended) {
		fputs("; ", out);
		escape_put(out, ended);
	}
	if (tables_snapshot(p))
		fputs("; a snapshot: the program was still running", out);
	/* A merged file's INFO is its first run's: said, with how many. */
	if (reader_info(p, "merged_files")) {
		fputs("; ", out);
		escape_put(out, reader_info(p, "merged_files"));
		fputs(" runs merged: the first's command line and pid", out);
	}
	if (reader_sampled(p))
		fprintf(out, "; sampled every %" PRIu64 " bytes: estimates", reader_sampled(p));
	fputc(')', out);
}

/* ---- Table 1: allocation bins ---------------------------------------- */

/*
 * Types that allocating frames name (cxxname.h): a stack whose first frame
 * out of operator new and its like is an allocator's allocate, a
 * make_unique or a std::string member allocates blocks of that frame's
 * element type T.  The block's size is the stack's bytes over its
 * allocations in one size class: exact when they all have one size (a
 * node, a make_unique, a reserve), which is when it is a whole multiple
 * of sizeof(T) (if known) and its bin holds that many allocations.  A
 * block of n > 1 of them is "T[n]".
 */
struct btype {
	uint32_t size;
	uint32_t atype;  /* id in m->atypes */
	uint64_t allocs; /* allocations of that size the frames account for */
	char *label;
};

struct btypes {
	struct btype *v;
	size_t n, cap;
	uint64_t *slot; /* (size << 32 | atype) + 1 -> index + 1, open addressing */
	uint32_t *idx;
	size_t nslots;
};

/* Looked at from the innermost frame out for the frame that asked. */
#define TYPE_FRAMES 8

static void btype_add(struct btypes *bt, uint32_t size, uint32_t atype, uint64_t allocs)
{
	uint64_t key = ((uint64_t)size << 32 | atype) + 1;
	size_t i;

	if (2 * (bt->n + 1) > bt->nslots) {
		size_t ns = bt->nslots ? 2 * bt->nslots : 256;
		free(bt->slot);
		free(bt->idx);
		bt->slot = xcalloc(ns, sizeof(uint64_t));
		bt->idx = xcalloc(ns, sizeof(uint32_t));
		bt->nslots = ns;
		for (size_t k = 0; k < bt->n; k++) {
			uint64_t kk = ((uint64_t)bt->v[k].size << 32 | bt->v[k].atype) + 1;
			for (i = (size_t)(kk * 0x9e3779b97f4a7c15ull >> 20) & (ns - 1); bt->slot[i]; i = (i + 1) & (ns - 1))
				;
			bt->slot[i] = kk;
			bt->idx[i] = (uint32_t)k;
		}
	}
	for (i = (size_t)(key * 0x9e3779b97f4a7c15ull >> 20) & (bt->nslots - 1); bt->slot[i];
	     i = (i + 1) & (bt->nslots - 1))
		if (bt->slot[i] == key) {
			bt->v[bt->idx[i]].allocs += allocs;
			return;
		}
	util_grow(&bt->v, &bt->cap, bt->n + 1, sizeof(*bt->v));
	bt->v[bt->n] = (struct btype){ size, atype, allocs, NULL };
	bt->slot[i] = key;
	bt->idx[i] = (uint32_t)bt->n++;
}

static int btype_cmp(const void *a, const void *b)
{
	const struct btype *x = a, *y = b;

	if (x->size != y->size)
		return x->size < y->size ? -1 : 1;
	if (x->allocs != y->allocs)
		return x->allocs > y->allocs ? -1 : 1;
	return strcmp(x->label, y->label);
}

static void frame_types(const struct model *m, const struct profile *p, int full, struct btypes *bt)
{
	uint64_t bin_allocs[FORMAT_NBINS] = { 0 };
	uint8_t *plumbing = xcalloc(strtab_count(m->fns) + 1, 1); /* 0 unknown, 1 yes, 2 no */
	uint32_t path[TYPE_FRAMES];
	uint64_t ctr[FORMAT_MAX_COUNTERS];
	size_t n = 0;

	for (size_t i = 0; i < p->nbins; i++)
		bin_allocs[p->bins[i].size] += p->bins[i].allocs;
	for (size_t i = 0; i < m->nstacks; i++) {
		const struct model_stack *st = &m->stacks[i];
		uint32_t k = st->n < TYPE_FRAMES ? st->n : TYPE_FRAMES, at = MODEL_NONE;
		uint64_t tsize;

		model_inner(m, st, k, path);
		while (k-- > 0) {
			const struct model_site *x = &m->sites[path[k]];
			if (!plumbing[x->fn])
				plumbing[x->fn] = cxxname_is_plumbing(strtab_get(m->fns, x->fn)) ? 1 : 2;
			if (plumbing[x->fn] == 2) {
				at = x->atype;
				break;
			}
		}
		if (at == MODEL_NONE || at >= m->atype_cap)
			continue;
		tsize = m->atype_size[at];
		model_counts(m, st, ctr);
		for (int c = 0; c < SIZE_NCLASSES; c++) {
			uint64_t a = ctr[MPROF_C_ALLOCS + c], b = ctr[MPROF_C_BYTES + c], z;
			if (!a || b % a)
				continue;
			z = b / a;
			if (z > 1024 || (tsize && z % tsize) || bin_allocs[z] < a)
				continue;
			btype_add(bt, (uint32_t)z, at, a);
		}
	}
	free(plumbing);
	for (size_t i = 0; i < bt->n; i++) {
		struct btype *x = &bt->v[i];
		const char *t = strtab_get(m->atypes, x->atype);
		char *name = full ? NULL : cxxname_type(t);
		uint64_t each = m->atype_size[x->atype];

		if (each && x->size / each > 1)
			x->label = xasprintf("%s[%" PRIu64 "]", name ? name : t, x->size / each);
		else
			x->label = xstrdup(name ? name : t);
		free(name);
	}
	if (bt->n)
		qsort(bt->v, bt->n, sizeof(*bt->v), btype_cmp);
	/* Two types may print alike (libc++'s and libstdc++'s): once. */
	for (size_t i = 0; i < bt->n; i++) {
		if (n && bt->v[n - 1].size == bt->v[i].size && !strcmp(bt->v[n - 1].label, bt->v[i].label)) {
			free(bt->v[i].label);
			continue;
		}
		bt->v[n++] = bt->v[i];
	}
	bt->n = n;
}

/*
 * name, if longer than max columns, cut after a template argument that
 * ends by then, and its open brackets closed: "llvm::detail::
 * AnalysisResultModel<llvm::Function, llvm::DominatorTreeAnalysis, ...>"
 * (clang's 80-byte bin made rows of 266 columns).  A new string.
 */
static char *type_cut(const char *name, size_t max)
{
	size_t n = strlen(name), cut = 0, depth = 0, at_depth = 0;
	char *r;

	if (n <= max)
		return xstrdup(name);
	for (size_t i = 0; i < n && i < max; i++) {
		if (name[i] == '<')
			depth++;
		else if (name[i] == '>' && depth)
			depth--;
		/* after "<" or ", ": the next argument starts here */
		if (depth && (name[i] == '<' || (name[i] == ' ' && i && name[i - 1] == ',')))
			cut = i + 1, at_depth = depth;
	}
	if (!cut) /* no template argument to cut at: the name as it is */
		return xstrdup(name);
	r = xcalloc(cut + 4 + at_depth + 1, 1);
	memcpy(r, name, cut);
	memcpy(r + cut, "...", 3);
	for (size_t k = 0; k < at_depth; k++)
		r[cut + 3 + k] = '>';
	return r;
}

/* The types column of bin `size`: the types allocating frames name
 * (from ft, count of them), then the program's types of that size
 * (symbols.h), each once, as much as fits in about 60 columns. */
static void print_types(FILE *out, struct symbols *s, uint32_t size, const struct btype *ft, size_t nft,
			int full)
{
	const char *const *names = NULL;
	size_t n = 0, shown = 0, width = 0, total;
	char **list;

	if (size > 1024)
		return;
	if (s)
		n = symbols_types_of_size(s, size, &names);
	list = xcalloc(nft + n + 1, sizeof(*list));
	total = 0;
	for (size_t i = 0; i < nft; i++)
		list[total++] = full ? xstrdup(ft[i].label) : type_cut(ft[i].label, 60);
	for (size_t i = 0; i < n; i++) {
		/* DWARF's C++ names read like the demangler's */
		char *name = !full && (strchr(names[i], '<') || strstr(names[i], "::")) ? cxxname_type(names[i])
										     : NULL;
		size_t k;
		if (!name)
			name = xstrdup(names[i]);
		if (!full) {
			char *cut = type_cut(name, 60);

			free(name);
			name = cut;
		}
		for (k = 0; k < total && strcmp(list[k], name); k++)
			;
		if (k < total)
			free(name);
		else
			list[total++] = name;
	}
	for (size_t i = 0; i < total; i++) {
		size_t len = strlen(list[i]);
		if (shown && width + len > 60) {
			fprintf(out, " ... (%zu more)", total - shown);
			break;
		}
		fputs(shown ? ", " : "", out);
		escape_put(out, list[i]); /* the program's DWARF may hold any byte */
		width += len + 2;
		shown++;
	}
	for (size_t i = 0; i < total; i++)
		free(list[i]);
	free(list);
}

void tables_print_types(FILE *out, struct symbols *s, uint32_t size, int full)
{
	print_types(out, s, size, NULL, 0, full);
}

static void table_bins(FILE *out, const struct model *m, const struct profile *p, struct symbols *s,
		       const struct tables_opts *o)
{
	uint64_t tb = 0, tk = 0, ta = 0;
	size_t hidden = 0, f = 0;
	struct btypes bt = { 0 };

	frame_types(m, p, o->full_names, &bt);
	for (size_t i = 0; i < p->nbins; i++) {
		tb += p->bins[i].bytes;
		tk += p->bins[i].bytes - p->bins[i].freed;
		ta += p->bins[i].allocs;
	}
	tables_rule(out, "ALLOCATION BINS");
	fprintf(out, "     size    allocs        bytes  (%%)     frees         kept  (%%)  types\n");
	for (size_t i = 0; i < p->nbins; i++) {
		const struct prof_bin *b = &p->bins[i];
		uint64_t kept = b->bytes - b->freed;
		double th = tables_threshold(o->verbosity);
		char pb[3], pk[3], size[16];
		size_t nf = 0;

		if (!b->allocs && !b->frees)
			continue;
		if (!over(b->bytes, tb, th) && !over(kept, tk, th) && !over(b->allocs, ta, th)) {
			hidden++;
			continue;
		}
		tables_pct2(pb, b->bytes, tb);
		tables_pct2(pk, kept, tk);
		if (b->size > 1024)
			snprintf(size, sizeof(size), ">1024");
		else
			snprintf(size, sizeof(size), "%u", b->size);
		fprintf(out, "%9s %9" PRIu64 " %12" PRIu64 " (%s) %9" PRIu64 " %12" PRIu64 " (%s)  ",
			size, b->allocs, b->bytes, pb, b->frees, kept, pk);
		/* bins come sorted by size; a file may lie: look from the start */
		if (f < bt.n && bt.v[f].size > b->size)
			f = 0;
		while (f < bt.n && bt.v[f].size < b->size)
			f++;
		while (f + nf < bt.n && bt.v[f + nf].size == b->size)
			nf++;
		print_types(out, s, b->size, nf ? bt.v + f : NULL, nf, o->full_names);
		fputc('\n', out);
	}
	if (hidden)
		fprintf(out, "  (%zu smaller %s not shown; -verbose shows every bin)\n", hidden,
			hidden == 1 ? "bin" : "bins");
	for (size_t i = 0; i < bt.n; i++)
		free(bt.v[i].label);
	free(bt.v);
	free(bt.slot);
	free(bt.idx);
}

/* ---- Table 2: memory leaks, and the heap's peak by chain ---------------- */


/* What a table of chains is about: what is kept at the end (the leak
 * table), or what was live at the heap's peak. */
enum chains_of { CHAINS_KEPT, CHAINS_PEAK };

struct chains {
	struct tables_chain *lk;
	size_t n;
	uint32_t *order; /* lk's indices, largest first */
	uint32_t *f, *g; /* two chains' sites, room for the longest stack */
	uint8_t *lib;    /* the model's library functions (tables_library_fns) */
	int fold;        /* library runs folded (not -verbose) */
};

static const struct tables_chain *sort_lk;
static const struct model *sort_lm;
static uint32_t *sort_fa, *sort_fb; /* two chains' sites, room for the longest stack */
static enum chains_of sort_of;

/* The sites of a chain, outermost first, into out (room for n). */
static void chain(const struct model *m, uint32_t stack, uint32_t n, uint32_t *out)
{
	model_inner(m, &m->stacks[stack], n, out);
}

/* Bytes lost (definitely or indirectly), then possibly lost, then still
 * reachable: what a leak scan found, lost first. */
static int class_cmp(const struct tables_chain *a, const struct tables_chain *b)
{
	uint64_t x[3] = { a->cls[0] + a->cls[2], a->cls[4], a->cls[6] };
	uint64_t y[3] = { b->cls[0] + b->cls[2], b->cls[4], b->cls[6] };

	for (int k = 0; k < 3; k++)
		if (x[k] != y[k])
			return x[k] > y[k] ? -1 : 1;
	return 0;
}

/* Bytes first, then objects (kept, or live at the peak); kept by class
 * when the leak scan classified them. */
static int leak_cmp(const void *xp, const void *yp)
{
	const struct tables_chain *a = &sort_lk[*(const uint32_t *)xp], *b = &sort_lk[*(const uint32_t *)yp];
	uint64_t ka = a->bytes - a->freed, kb = b->bytes - b->freed;
	uint64_t na = a->allocs - a->frees, nb = b->allocs - b->frees;
	int c;

	if (sort_of == CHAINS_PEAK)
		ka = a->peak, kb = b->peak, na = a->peak_n, nb = b->peak_n;
	else if (sort_lm->has_scan && (c = class_cmp(a, b)) != 0)
		return c;
	if (ka != kb)
		return ka > kb ? -1 : 1;
	if (na != nb)
		return na > nb ? -1 : 1;
	if (a->n != b->n)
		return a->n < b->n ? -1 : 1;
	chain(sort_lm, a->stack, a->n, sort_fa);
	chain(sort_lm, b->stack, b->n, sort_fb);
	for (uint32_t i = 0; i < a->n; i++) {
		uint32_t fa = sort_lm->sites[sort_fa[i]].fn, fb = sort_lm->sites[sort_fb[i]].fn;
		if (fa != fb)
			return strcmp(strtab_get(sort_lm->fns, fa), strtab_get(sort_lm->fns, fb));
	}
	return 0;
}

/* Rust's primitive types, whose inherent methods and trait impls are
 * its standard library's (<u8 as ...>, <str as ...>, <*const T>::add). */
static int rust_primitive(const char *t)
{
	static const char *const prim[] = { "u8",  "u16",  "u32", "u64", "u128", "usize", "i8",
					    "i16", "i32",  "i64", "i128", "isize", "f32",  "f64",
					    "bool", "char", "str" };

	if (*t == '[' || *t == '*' || *t == '(' || !strncmp(t, "fn(", 3) ||
	    !strncmp(t, "unsafe fn(", 10) || !strncmp(t, "extern \"C\" fn(", 14))
		return 1; /* slices, pointers, tuples, functions (v0's <fn() as FnOnce>) */
	for (size_t i = 0; i < sizeof prim / sizeof prim[0]; i++) {
		size_t n = strlen(prim[i]);

		if (!strncmp(t, prim[i], n) && (t[n] == ' ' || t[n] == '>'))
			return 1;
	}
	return 0;
}

/* Whether name is std's __rust_begin_short_backtrace (its path moved:
 * std::sys_common::backtrace::, std::sys::backtrace::), with or without
 * its parameters (-full-names). */
static int rust_begin(const char *name)
{
	static const char tail[] = "::__rust_begin_short_backtrace";
	const char *p = strstr(name, tail);

	return p && !strncmp(name, "std::", 5) &&
	       (p[sizeof tail - 1] == 0 || p[sizeof tail - 1] == '<' || p[sizeof tail - 1] == '(' ||
		!strncmp(p + sizeof tail - 1, "::<", 3)); /* v0: ::<fn(), ()> */
}

/*
 * Whether name, as it is, begins in a standard library: C++'s (std::,
 * __gnu_cxx::, operator new, and members DWARF names without their class:
 * std::thread's _M_invoke, std::__invoke_impl; _M_ and _S_ are libstdc++'s
 * names for members, reserved to it); in a Rust program (rust) Rust's
 * crates std::, core::, alloc::, hashbrown:: (under std's HashMap), its
 * allocator shims, and trait methods of their types or of primitive ones
 * by the trait's path.  Only in a Rust program: a C++ program's own
 * namespace may be core or alloc.
 */
static int library_name(const char *name, int rust)
{
	static const char *const cxx[] = { "std::", "__gnu_cxx::", "__cxxabiv1::",
					   "_M_",   "_S_",	   "__invoke" };
	static const char *const rs[] = { "core::",  "alloc::", "hashbrown::", "std::",
					  "__rust_", "__rdl_",  "__rg_" };

	if (!strcmp(name, "operator new") || !strcmp(name, "operator new[]"))
		return 1;
	for (size_t i = 0; i < sizeof cxx / sizeof cxx[0]; i++)
		if (!strncmp(name, cxx[i], strlen(cxx[i])))
			return 1;
	if (!rust)
		return 0;
	/* A trait method, <TYPE as TRAIT>::f, or an inherent one, <TYPE>::f:
	 * TYPE's path, or TRAIT's where TYPE is a primitive one. */
	if (name[0] == '<') {
		const char *t = name + 1, *as;

		while (*t == '&' || *t == '*')
			t += *t == '*' && (!strncmp(t + 1, "const ", 6) || !strncmp(t + 1, "mut ", 4))
				     ? 0
				     : 1;
		if (!strncmp(t, "mut ", 4))
			t += 4;
		if (!strncmp(t, "dyn ", 4))
			t += 4;
		if (rust_primitive(t)) {
			if (!(as = strstr(t, " as ")))
				return 1; /* <*const T>::add, <[T]>::to_vec */
			t = as + 4;
		}
		name = t;
	}
	for (size_t i = 0; i < sizeof rs / sizeof rs[0]; i++)
		if (!strncmp(name, rs[i], strlen(rs[i])))
			return 1;
	return 0;
}

uint8_t *tables_library_fns(const struct model *m)
{
	size_t n = strtab_count(m->fns);
	uint8_t *lib = xcalloc(n + 1, 1);
	int rust = 0;

	/* A Rust program: its allocator shims or its runtime's start. */
	for (size_t f = 0; f < n && !rust; f++) {
		const char *name = strtab_get(m->fns, (uint32_t)f);

		rust = !strncmp(name, "__rust_", 7) || !strncmp(name, "__rdl_", 6) ||
		       !strncmp(name, "__rustc::", 9) || !strncmp(name, "std::rt::lang_start", 19) ||
		       rust_begin(name);
	}
	for (size_t f = 0; f < n; f++) {
		const char *name = strtab_get(m->fns, (uint32_t)f);
		char *simple;

		lib[f] = (uint8_t)library_name(name, rust);
		/* -full-names: the short name's too. */
		if (!lib[f] && strchr(name, '(') && (simple = cxxname_simplify(name)) != NULL) {
			lib[f] = (uint8_t)library_name(simple, rust);
			free(simple);
		}
		/* Where a Rust thread's own code begins (main's, a spawned
		 * thread's closure): what std calls it through, as Rust's own
		 * backtraces, and the runtime's start outside it, are not the
		 * program's chain. */
		if (rust && rust_begin(name) && !m->all_frames)
			lib[f] = TABLES_LIB_BEGIN;
	}
	return lib;
}

/*
 * How many of stack s's innermost frames (all of them in path, outermost
 * first) a partial chain of depth frames takes: depth of the program's
 * own, with the library's frames among and below them (lib: the
 * model's functions, tables_library_fns).
 */
static uint32_t chain_len(const struct model *m, const struct model_stack *s, int depth,
			  const uint8_t *lib, uint32_t *path, int *begun)
{
	uint32_t counted = 0, k, own;

	*begun = 0;
	if (!s->n)
		return 0;
	model_path(m, s, path);
	for (k = s->n; k > 0 && counted < (uint32_t)depth; k--) {
		uint8_t l = lib[m->sites[path[k - 1]].fn];

		if (l == TABLES_LIB_BEGIN) {
			/* A Rust thread's start: the chain begins inside it,
			 * at the program's first frame (the closure std calls
			 * it through is not). */
			for (own = k; own < s->n && lib[m->sites[path[own]].fn]; own++)
				;
			*begun = 1;
			return s->n - (own < s->n ? own : k);
		}
		counted += !l;
	}
	/* The depth used up on a Rust thread's first frame: nothing of the
	 * program's above it, no "...". */
	for (own = k; own > 0 && lib[m->sites[path[own - 1]].fn]; own--)
		if (lib[m->sites[path[own - 1]].fn] == TABLES_LIB_BEGIN) {
			*begun = 1;
			break;
		}
	return s->n - k;
}

/*
 * A chain as its row prints it (sites[0..n), outermost first), into key:
 * each frame shown, as (function, offset where offsets, inlined), and a
 * run of library frames folded (fold: tables_library_run) as its count.
 * Two chains that print alike are one row (they were two rows alike).
 * Returns the key's length in uint32_t.
 */
static size_t row_key(const struct model *m, const uint8_t *lib, const uint32_t *sites,
		      uint32_t n, int offsets, int fold, uint32_t *key)
{
	size_t len = 0;

	for (uint32_t k = 0; k < n; k++) {
		const struct model_site *x = &m->sites[sites[k]];
		uint32_t more = fold ? tables_library_run(m, lib, sites, n, k) : 0;

		key[len++] = x->fn;
		key[len++] = offsets ? x->offset : 0;
		key[len++] = x->inlined;
		if (more) {
			key[len++] = MODEL_NONE;
			key[len++] = more;
			key[len++] = 0;
			k += more;
		}
	}
	return len;
}

/*
 * Merge the stacks into partial chains of o->depth callers (mprof.1, TABLE
 * 2; chain_len) that print alike (row_key): for CHAINS_KEPT the stacks
 * that keep something, for CHAINS_PEAK those live at the peak.
 */
static size_t collect(const struct model *m, int depth, int offsets, int fold,
		      const uint8_t *lib, enum chains_of of, struct tables_chain **out)
{
	struct tables_chain *lk = NULL;
	uint64_t ctr[FORMAT_MAX_COUNTERS];
	uint32_t *f, *g, *slot, *kf, *kg;
	size_t nl = 0, cap = 0, nslots = 64;

	while (nslots < 4 * m->nstacks)
		nslots *= 2;
	slot = xcalloc(nslots, sizeof(uint32_t));
	f = xcalloc((size_t)m->maxn + 1, sizeof(uint32_t));
	g = xcalloc((size_t)m->maxn + 1, sizeof(uint32_t));
	kf = xcalloc(6 * ((size_t)m->maxn + 1), sizeof(uint32_t));
	kg = xcalloc(6 * ((size_t)m->maxn + 1), sizeof(uint32_t));
	for (size_t i = 0; i < m->nstacks; i++) {
		const struct model_stack *s = &m->stacks[i];
		uint32_t n;
		int cut;
		uint64_t h;
		size_t j, nk;
		struct tables_chain *l = NULL;
		const uint64_t *v = model_counts(m, s, ctr);

		if (of == CHAINS_KEPT ? model_allocs(v) == model_frees(v) &&
						model_bytes(v) == model_freed(v)
				      : !model_peak(m, v) && !model_peak_objects(m, v))
			continue;
		n = chain_len(m, s, depth, lib, f, &cut);
		cut = (s->n > n && !cut) || s->cut;
		chain(m, (uint32_t)i, n, f);
		nk = row_key(m, lib, f, n, offsets, fold, kf);
		h = util_hash(kf, nk * sizeof(uint32_t), (uint64_t)cut);
		for (j = h & (nslots - 1); slot[j]; j = (j + 1) & (nslots - 1)) {
			struct tables_chain *c = &lk[slot[j] - 1];

			if (c->cut != cut)
				continue;
			chain(m, c->stack, c->n, g);
			if (row_key(m, lib, g, c->n, offsets, fold, kg) == nk &&
			    !memcmp(kf, kg, nk * sizeof(uint32_t))) {
				l = c;
				break;
			}
		}
		if (!l) {
			util_grow(&lk, &cap, nl + 1, sizeof(*lk));
			l = &lk[nl++];
			memset(l, 0, sizeof(*l));
			l->stack = (uint32_t)i;
			l->n = n;
			l->cut = cut;
			slot[j] = (uint32_t)nl;
		}
		l->allocs += model_allocs(v);
		l->bytes += model_bytes(v);
		l->frees += model_frees(v);
		l->freed += model_freed(v);
		l->peak += model_peak(m, v);
		l->peak_n += model_peak_objects(m, v);
		for (int k = 0; k < MPROF_NCLASSES; k++) {
			l->cls[2 * k] += model_class_bytes(m, v, k);
			l->cls[2 * k + 1] += model_class_objects(m, v, k);
		}
	}
	free(slot);
	free(f);
	free(g);
	free(kf);
	free(kg);
	*out = lk;
	return nl;
}

size_t tables_chains(const struct model *m, int depth, int offsets, int fold, const uint8_t *lib,
		     struct tables_chain **out)
{
	return collect(m, depth, offsets, fold, lib, CHAINS_KEPT, out);
}

/* The chains of `of`, sorted, largest first. */
static void chains_group(struct chains *ch, const struct model *m, const struct tables_opts *o,
			 enum chains_of of)
{
	int depth = o->depth > 0 ? o->depth : 5;
	struct tables_chain *lk;
	uint8_t *lib = tables_library_fns(m);
	int fold = o->verbosity != TABLES_VERBOSE;
	size_t nl = collect(m, depth, o->offsets, fold, lib, of, &lk);
	uint32_t *f = xcalloc((size_t)m->maxn + 1, sizeof(uint32_t));
	uint32_t *g = xcalloc((size_t)m->maxn + 1, sizeof(uint32_t));

	/* Sort indices, not the records: cheaper to move. */
	ch->order = xcalloc(nl + 1, sizeof(uint32_t));
	for (size_t i = 0; i < nl; i++)
		ch->order[i] = (uint32_t)i;
	sort_lk = lk;
	sort_lm = m;
	sort_fa = f;
	sort_fb = g;
	sort_of = of;
	qsort(ch->order, nl, sizeof(uint32_t), leak_cmp);
	ch->lk = lk;
	ch->n = nl;
	ch->f = f;
	ch->g = g;
	ch->lib = lib;
	ch->fold = fold;
}

static void chains_release(struct chains *ch)
{
	free(ch->order);
	free(ch->lk);
	free(ch->f);
	free(ch->g);
	free(ch->lib);
}

static void print_site(FILE *out, const struct model *m, uint32_t id, const struct tables_opts *o)
{
	const struct model_site *f = &m->sites[id];

	fputs(strtab_get(m->fns, f->fn), out);
	if (o->offsets && f->offset != MODEL_NO_OFFSET)
		fprintf(out, "+%u", f->offset);
	if (f->inlined)
		fputs(" [inline]", out);
	if (o->lines && f->loc != MODEL_NO_LOC)
		fprintf(out, " (%s)", strtab_get(m->locs, f->loc));
}

/* "... > a > b > c": a chain, outermost first, and a newline. */
static void print_chain(FILE *out, const struct model *m, const struct tables_opts *o,
			struct chains *ch, const struct tables_chain *l)
{
	if (l->cut)
		fputs("... > ", out);
	chain(m, l->stack, l->n, ch->f);
	for (uint32_t k = 0; k < l->n; k++) {
		uint32_t more = ch->fold ? tables_library_run(m, ch->lib, ch->f, l->n, k) : 0;

		if (k)
			fputs(" > ", out);
		print_site(out, m, ch->f[k], o);
		if (more) {
			fprintf(out, " > (%u more)", more);
			k += more;
		}
	}
	fputc('\n', out);
}

uint32_t tables_library_run(const struct model *m, const uint8_t *lib, const uint32_t *sites,
			    uint32_t n, uint32_t k)
{
	uint32_t end = k;

	if (k > 0 && lib[m->sites[sites[k - 1]].fn])
		return 0; /* not a run's first */
	while (end < n && lib[m->sites[sites[end]].fn])
		end++;
	/* The first (what the program called) and the last (what
	 * allocated) stay; fewer than two between them are shown too. */
	return end - k >= 5 ? end - k - 2 : 0;
}

static const char *const class_names[MPROF_NCLASSES] = {
	"definitely lost", "indirectly lost", "possibly lost", "still reachable",
};

/*
 * memcheck's LEAK SUMMARY, from the leak scan at exit (MPROF_LEAKS=scan):
 * the same four lines, so the two compare at a glance.  A run that asked
 * for the scan and did not get it says why.
 */
static void leak_summary(FILE *out, const struct model *m, const struct profile *p)
{
	const char *st = reader_info(p, "leak_scan");
	uint64_t kept = model_bytes(m->tot) - model_freed(m->tot), in = 0;

	if (!m->has_scan) {
		if (st) {
			fputs("  (what is kept was not classified at exit: ", out);
			escape_put(out, strncmp(st, "skipped: ", 9) ? st : st + 9);
			fputs(")\n\n", out);
		}
		return;
	}
	for (int k = 0; k < MPROF_NCLASSES; k++) {
		fprintf(out, "  %15s: %" PRIu64 " bytes in %" PRIu64 " objects\n", class_names[k],
			model_class_bytes(m, m->tot, k), model_class_objects(m, m->tot, k));
		in += model_class_bytes(m, m->tot, k);
	}
	if (st && strcmp(st, "complete")) {
		fputs("  (at exit: ", out);
		escape_put(out, st);
		fputs(")\n", out);
	}
	if (kept > in)
		fprintf(out, "  (%" PRIu64 " bytes kept are in no class: objects the monitor did not map)\n",
			kept - in);
	fputc('\n', out);
}

/* libc's own buffers (stdio's, locale and NSS data) are released at exit
 * as memcheck does, but not with another thread alive: then what they
 * hold is kept, and the table says so (xz -T2: 12,404 bytes of
 * setlocale's in still reachable that memcheck does not have). */
static void freeres_note(FILE *out, const struct profile *p)
{
	const char *st = reader_info(p, "freeres");

	if (!st || strncmp(st, "skipped: ", 9) || tables_snapshot(p))
		return;
	fputs("  (libc's own buffers were not released at exit (", out);
	escape_put(out, st + 9);
	fputs("): what they hold is kept here, where memcheck releases them)\n\n", out);
}

/* A count, or blanks for 0 (as mprof.1 leaves out frees when none). */
static void cell(FILE *out, int width, uint64_t v)
{
	if (v)
		fprintf(out, " %*" PRIu64, width, v);
	else
		fprintf(out, " %*s", width, "");
}

static void table_leaks(FILE *out, const struct model *m, const struct profile *p,
			const struct tables_opts *o)
{
	struct chains ch;
	size_t hidden = 0;
	uint64_t tot_bytes = model_bytes(m->tot), tot_kept = tot_bytes - model_freed(m->tot);
	uint64_t tot_lost = model_class_bytes(m, m->tot, MPROF_CLASS_LOST) +
			    model_class_bytes(m, m->tot, MPROF_CLASS_INDIRECT);
	uint64_t tot_possible = model_class_bytes(m, m->tot, MPROF_CLASS_POSSIBLE);
	double th = tables_threshold(o->verbosity);

	chains_group(&ch, m, o, CHAINS_KEPT);
	/* A snapshot's kept objects are what was live then, not leaks. */
	tables_rule(out, tables_snapshot(p) ? "LIVE AT THE SNAPSHOT (not leaks: the program went on)"
					    : "MEMORY LEAKS");
	leak_summary(out, m, p);
	freeres_note(out, p);
	fprintf(out, "   kept bytes  (%%)%s    allocs        bytes  (%%)     frees        bytes  (%%)  path\n",
		m->has_scan ? "       lost   indirect   possible  reachable" : "");
	for (size_t i = 0; i < ch.n; i++) {
		struct tables_chain *l = &ch.lk[ch.order[i]];
		uint64_t kept = l->bytes - l->freed;
		char pk[3], pb[3], pf[3];

		if (l->allocs <= l->frees && kept == 0)
			continue;
		/* A chain that loses memory shows among the lost, however
		 * little it keeps beside the reachable. */
		if (!over(kept, tot_kept, th) && !over(l->cls[0] + l->cls[2], tot_lost, th) &&
		    !over(l->cls[4], tot_possible, th)) {
			hidden++;
			continue;
		}
		tables_pct2(pk, kept, tot_kept);
		tables_pct2(pb, l->bytes, tot_bytes);
		fprintf(out, "%13" PRIu64 " (%s)", kept, pk);
		if (m->has_scan)
			for (int k = 0; k < MPROF_NCLASSES; k++)
				cell(out, 10, l->cls[2 * k]);
		fprintf(out, " %9" PRIu64 " %12" PRIu64 " (%s) ", l->allocs, l->bytes, pb);
		/* mprof.1: frees and bytes freed are omitted when nothing was freed. */
		if (l->frees) {
			fprintf(out, "%9" PRIu64 " ", l->frees);
			if (l->freed) {
				tables_pct2(pf, l->freed, tot_bytes);
				fprintf(out, "%12" PRIu64 " (%s)  ", l->freed, pf);
			} else {
				fprintf(out, "%12s %4s  ", "", "");
			}
		} else {
			fprintf(out, "%9s %12s %4s  ", "", "", "");
		}
		print_chain(out, m, o, &ch, l);
	}
	if (hidden)
		fprintf(out, "  (%zu smaller %s not shown; -verbose shows every chain)\n", hidden,
			hidden == 1 ? "leak" : "leaks");
	/* A sampled profile knows only its samples: a leak smaller than
	 * the interval may have none. */
	if (tot_kept == 0 && reader_sampled(p))
		fprintf(out, "  (no sampled allocation is kept: a leak of fewer bytes than the "
			     "sampling interval may have no sample)\n");
	else if (tot_kept == 0 && tables_snapshot(p))
		fprintf(out, "  (nothing was live)\n");
	else if (tot_kept == 0)
		fprintf(out, "  (no memory leaks: every allocated byte was freed)\n");
	chains_release(&ch);
}

/*
 * Who held the heap at its peak (issue 15): the live bytes and objects of
 * each partial chain at that moment, and what it keeps at the end, so a
 * chain that only ever held memory for a while (a peak, not a leak) stands
 * out.  Chains, not functions: a peak is what a path of calls held, as a
 * leak is, and the same -depth groups them.
 */
static void table_peak(FILE *out, const struct model *m, const struct profile *p,
		       const struct tables_opts *o)
{
	struct chains ch;
	size_t hidden = 0;
	uint64_t peak = model_peak(m, m->tot);

	chains_group(&ch, m, o, CHAINS_PEAK);
	tables_rule(out, "HEAP PEAK");
	fprintf(out, "   peak bytes  (%%)   objects   kept bytes  path\n");
	for (size_t i = 0; i < ch.n; i++) {
		struct tables_chain *l = &ch.lk[ch.order[i]];
		char pp[3];

		if (!over(l->peak, peak, tables_threshold(o->verbosity))) {
			hidden++;
			continue;
		}
		tables_pct2(pp, l->peak, peak);
		fprintf(out, "%13" PRIu64 " (%s) %9" PRIu64 " %12" PRIu64 "  ", l->peak, pp, l->peak_n,
			l->bytes - l->freed);
		print_chain(out, m, o, &ch, l);
	}
	if (hidden)
		fprintf(out, "  (%zu smaller %s not shown; -verbose shows every chain)\n", hidden,
			hidden == 1 ? "chain" : "chains");
	if (peak == 0 && reader_sampled(p))
		fprintf(out, "  (no sampled allocation was live at the peak)\n");
	else if (peak == 0)
		fprintf(out, "  (no peak: nothing was live)\n");
	chains_release(&ch);
}

/* ---- Table 3: direct allocation ---------------------------------------- */

static const struct callgraph *sort_g;
static const struct model *sort_m;

static int direct_cmp(const void *x, const void *y)
{
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
	uint64_t ba = cg_sum(sort_g->fn.node[a].self_b), bb = cg_sum(sort_g->fn.node[b].self_b);
	uint64_t na = cg_sum(sort_g->fn.node[a].self_n), nb = cg_sum(sort_g->fn.node[b].self_n);

	if (ba != bb)
		return ba > bb ? -1 : 1;
	if (na != nb)
		return na > nb ? -1 : 1;
	return strcmp(strtab_get(sort_m->fns, a), strtab_get(sort_m->fns, b));
}

/* temp: the row's temporary allocations, or -1 for a profile without
 * them (no column). */
static void direct_row(FILE *out, const uint64_t *b, const uint64_t *kept, uint64_t calls,
		       int64_t temp, uint64_t tb, uint64_t tk, const char *name)
{
	char pm[3], bm[16], bk[16], tc[24] = "";

	tables_pct2(pm, cg_sum(b), tb);
	breakdown(bm, b, tb);
	breakdown(bk, kept, tk);
	if (temp >= 0)
		snprintf(tc, sizeof tc, " %9" PRId64, temp);
	fprintf(out, "     %s %12" PRIu64 "  %s %13" PRIu64 "  %s%s %11" PRIu64 "  %s\n", pm, cg_sum(b),
		bm, cg_sum(kept), bk, tc, calls, name);
}

/* Each function's temporary allocations, as the innermost frame of a
 * stack (the direct allocation table's self), indexed by function id. */
static uint64_t *direct_temps(const struct model *m, const struct callgraph *g, uint64_t *total)
{
	uint64_t *t = xcalloc(g->nfns + 1, sizeof *t), buf[FORMAT_MAX_COUNTERS];

	*total = 0;
	for (size_t i = 0; i < m->nstacks; i++) {
		const struct model_stack *s = &m->stacks[i];
		uint64_t v;
		uint32_t fn;

		if (!s->n || s->leaf == MODEL_NONE)
			continue;
		v = model_counts(m, s, buf)[MPROF_C_TEMP_OBJECTS];
		fn = m->sites[m->site[s->leaf]].fn;
		if (fn < g->nfns)
			t[fn] += v;
		*total += v;
	}
	return t;
}

uint32_t *tables_direct_order(const struct model *m, const struct callgraph *g, size_t *n)
{
	uint32_t *ids = xcalloc(g->nfns + 1, sizeof(uint32_t));

	*n = 0;
	for (size_t f = 0; f < g->nfns; f++)
		if (cg_sum(g->fn.node[f].self_n))
			ids[(*n)++] = (uint32_t)f;
	sort_g = g;
	sort_m = m;
	qsort(ids, *n, sizeof(*ids), direct_cmp);
	return ids;
}

static void table_direct(FILE *out, const struct model *m, const struct callgraph *g)
{
	size_t n;
	uint32_t *ids = tables_direct_order(m, g, &n);
	uint64_t tb = cg_sum(g->tot_b), tk = cg_sum(g->tot_kept), ttot = 0;
	/* Temporary allocations (issue 24), in a profile that has them. */
	uint64_t *temps = m->has_temp ? direct_temps(m, g, &ttot) : NULL;

	tables_rule(out, "DIRECT ALLOCATION");
	fprintf(out, "  %% mem        bytes  %% mem(size)    bytes kept  %% all kept %s      calls  name\n",
		temps ? "     temp" : "");
	fprintf(out, "                      s  m  l  x                 s  m  l  x\n");
	direct_row(out, g->tot_b, g->tot_kept, cg_sum(g->tot_n), temps ? (int64_t)ttot : -1, tb, tk,
		   "<TOTAL>");
	for (size_t i = 0; i < n; i++) {
		const struct cg_node *x = &g->fn.node[ids[i]];
		direct_row(out, x->self_b, x->self_kept, cg_sum(x->self_n),
			   temps ? (int64_t)temps[ids[i]] : -1, tb, tk, strtab_get(m->fns, ids[i]));
	}
	free(temps);
	free(ids);
}

void tables_print(FILE *out, const struct model *m, const struct callgraph *g,
		  const struct profile *p, struct symbols *s, const struct tables_opts *o)
{
	uint64_t bytes = model_bytes(m->tot), freed = model_freed(m->tot),
		 peak = m->has_peak ? model_peak(m, m->tot) : 0;
	char cls[16];

	if (tables_lisp_print(out, m, g, p, o, cls) == 0) {
		tables_cg_print(out, m, g, cls, 1);
		return;
	}

	fputs("mprof: ", out);
	tables_run(out, p);
	/* Sampled: the allocations' totals are exact (INFO), and said first;
	 * an estimate of the count from a few large samples was far off
	 * (ffmpeg: 76,771 for 9,999). */
	if (reader_sampled(p) && reader_info(p, "allocs") && reader_info(p, "bytes")) {
		/* The frees and the bytes freed as the samples' shares of the
		 * exact totals (a ratio estimate): the samples' own sums
		 * stood for 388,321 frees of 229,847 allocations (perl, one
		 * run in six), each estimate off by as much as its count. */
		uint64_t xa = strtoull(reader_info(p, "allocs"), NULL, 10),
			 xb = strtoull(reader_info(p, "bytes"), NULL, 10), wa = model_allocs(m->tot),
			 wf = model_frees(m->tot), ef, eb;

		ef = wa ? (uint64_t)((double)xa * ((double)(wf < wa ? wf : wa) / (double)wa) + 0.5) : 0;
		eb = bytes ? (uint64_t)((double)xb * ((double)(freed < bytes ? freed : bytes) / (double)bytes) + 0.5)
			   : 0;
		fputs(": ", out);
		escape_put(out, reader_info(p, "allocs"));
		fputs(" allocations of ", out);
		escape_put(out, reader_info(p, "bytes"));
		fprintf(out, " bytes (exact); estimated: %" PRIu64 " frees of %" PRIu64
			" bytes, %" PRIu64 " bytes kept",
			ef, eb, bytes ? xb - eb : 0);
		/* The peak the same way: the samples' own sum was the weight of
		 * one 4096-byte object, a peak of 65536 bytes live in a program
		 * that allocated 4096 in all (a helper's sweep). */
		peak = bytes ? (uint64_t)((double)xb * ((double)(peak < bytes ? peak : bytes) / (double)bytes) + 0.5)
			     : 0;
	} else {
		fprintf(out, ": %" PRIu64 " %s of %" PRIu64 " bytes, %" PRIu64
			" %s of %" PRIu64 " bytes, %" PRIu64 " bytes kept",
			model_allocs(m->tot), model_allocs(m->tot) == 1 ? "allocation" : "allocations",
			bytes, model_frees(m->tot), model_frees(m->tot) == 1 ? "free" : "frees", freed,
			bytes - freed);
	}
	/* The sum of the stacks' shares: the peak itself (peak.h). */
	if (m->has_peak) {
		uint64_t every = reader_sampled(p), held = model_peak(m, m->tot);

		fprintf(out, ", peak %" PRIu64 " bytes live%s", peak,
			/* Runs merged: each run's peak, summed, as every other
			 * figure is (it read as one run's). */
			reader_info(p, "merged_files") ? " (the runs' peaks summed)" : "");
		/* Sampled, the peak is the most the samples held at once: a
		 * heap of a few samples' worth is far off, and high (the
		 * most of a noisy sum; a churn of 1.5 MB live said 4.8 MB at
		 * the default 512 KiB).  Under 100 samples (10%) it says so. */
		if (every && held && held / every < 100) {
			uint64_t n = held / every ? held / every : 1;

			fprintf(out, " (rough: about %" PRIu64 " %s live at the peak; "
				     "a smaller --sample, or none, for a closer figure)",
				n, n == 1 ? "sample" : "samples");
		}
	}
	fputc('\n', out);
	/* A sampled profile's figures are estimates (pprof's unsampling of
	 * each sample); its INFO totals of allocations are exact. */
	if (reader_sampled(p)) {
		const char *a = reader_info(p, "allocs"), *b = reader_info(p, "bytes");

		fprintf(out, "  (one allocation sampled, with its stack, in every %" PRIu64
			     " bytes allocated on average: the tables are estimates, %" PRIu64
			     " allocations of %" PRIu64 " bytes",
			reader_sampled(p), model_allocs(m->tot), bytes);
		/* The peak table's own total, the samples' sum (the first
		 * line's is a share of the exact bytes). */
		if (m->has_peak)
			fprintf(out, ", peak %" PRIu64, model_peak(m, m->tot));
		fprintf(out, "; exact totals: %s allocations of %s bytes)\n", a ? a : "?", b ? b : "?");
		/* The temporaries the same way as the peak: a sample stands for
		 * about BYTES of them.  Six runs of a perl script said 5 to
		 * 209,719 where 156,177 were, from a few samples each. */
		if (m->has_temp) {
			uint64_t tb = 0, to = 0, buf[FORMAT_MAX_COUNTERS], n;

			for (size_t i = 0; i < m->nstacks; i++) {
				const uint64_t *c = model_counts(m, &m->stacks[i], buf);

				to += c[MPROF_C_TEMP_OBJECTS];
				tb += c[MPROF_C_TEMP_BYTES];
			}
			n = tb / reader_sampled(p);
			if (to && n < 100)
				fprintf(out, "  (the temporaries, rough: about %" PRIu64 " %s of them; a "
					     "smaller --sample, or none, for a closer figure)\n",
					n ? n : 1, n > 1 ? "samples" : "sample");
		}
		if (model_allocs(m->tot) == 0)
			fprintf(out, "  (no allocation was sampled: run without --sample, or with "
				     "fewer BYTES, for tables of this program)\n");
	}
	table_bins(out, m, p, s, o);
	if (o->leaktable)
		table_leaks(out, m, p, o);
	if (o->peaktable && m->has_peak)
		table_peak(out, m, p, o);
	table_direct(out, m, g);
	tables_cg_print(out, m, g, " s  m  l  x", 0);
}
