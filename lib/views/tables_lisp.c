/*
 * tables_lisp.c - owns the tables of a Lisp profile (tables_lisp_print):
 * the mprof paper's Lisp version of mprof's tables, for a program run on
 * ECL (lispview.h).
 *
 * The paper, "The Memory Leak Table": Lisp reclaims memory itself, so the
 * Lisp version has no leak table; nothing is freed by the program and
 * nothing is "kept" in its sense, so no table here has the kept columns
 * either.  Its footnote on the direct allocation table: for Lisp the
 * breakdown is by type, not size: cons (c), floating point (f),
 * structure or vector (s), other (o).  The direct allocation table gives
 * each function's objects of each type as counts too, where the C tables
 * give kept bytes: a Lisp programmer counts conses.  Table 4 is the C
 * one with the type labels (tables_cg.c).
 */
#include "model/callgraph.h"
#include "base/escape.h"
#include "model/lispview.h"
#include "model/model.h"
#include "read/reader.h"
#include "views/tables.h"
#include "base/util.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static void rule(FILE *out, const char *title)
{
	fprintf(out, "\n--------- %s ---------\n\n", title);
}

/* The labels of INFO classes ("c f s o"), two columns each: " c  f  s  o". */
static void labels(const char *classes, char *cls)
{
	char l[SIZE_NCLASSES] = { '?', '?', '?', '?' };
	int k = 0;

	for (const char *c = classes; *c && k < SIZE_NCLASSES; c++)
		if (*c != ' ') /* one column: no control, no UTF-8 */
			l[k++] = escape_is_control((unsigned char)*c) || (unsigned char)*c > 0x7f
					 ? '?'
					 : *c;
	snprintf(cls, 16, " %c  %c  %c  %c", l[0], l[1], l[2], l[3]);
}

static void table_bins(FILE *out, const struct profile *p, const struct tables_opts *o)
{
	uint64_t tb = 0, ta = 0;
	double th = tables_threshold(o->verbosity);
	size_t hidden = 0;

	for (size_t i = 0; i < p->nbins; i++) {
		tb += p->bins[i].bytes;
		ta += p->bins[i].allocs;
	}
	rule(out, "ALLOCATION BINS");
	fprintf(out, "     size   objects        bytes  (%%)\n");
	for (size_t i = 0; i < p->nbins; i++) {
		const struct prof_bin *b = &p->bins[i];
		char pb[3], size[16];

		if (!b->allocs)
			continue;
		if (th >= 0 && !((double)b->bytes * 100.0 > th * (double)tb) &&
		    !((double)b->allocs * 100.0 > th * (double)ta)) {
			hidden++;
			continue;
		}
		tables_pct2(pb, b->bytes, tb);
		if (b->size > 1024)
			snprintf(size, sizeof(size), ">1024");
		else
			snprintf(size, sizeof(size), "%u", b->size);
		fprintf(out, "%9s %9" PRIu64 " %12" PRIu64 " (%s)\n", size, b->allocs, b->bytes, pb);
	}
	if (hidden)
		fprintf(out, "  (%zu smaller %s not shown; -verbose shows every bin)\n", hidden,
			hidden == 1 ? "bin" : "bins");
}

static void direct_row(FILE *out, const uint64_t *b, const uint64_t *n, uint64_t tb,
		       const char *name)
{
	char pm[3], bm[16];

	tables_pct2(pm, cg_sum(b), tb);
	tables_breakdown(bm, b, tb);
	fprintf(out, "     %s %12" PRIu64 "  %s %11" PRIu64, pm, cg_sum(b), bm, cg_sum(n));
	for (int k = 0; k < SIZE_NCLASSES; k++)
		fprintf(out, " %9" PRIu64, n[k]);
	fprintf(out, "  %s\n", name);
}

static void table_direct(FILE *out, const struct model *m, const struct callgraph *g,
			 const char *cls)
{
	size_t n;
	uint32_t *ids = tables_direct_order(m, g, &n); /* as the C table's */
	uint64_t tb = cg_sum(g->tot_b);

	rule(out, "DIRECT ALLOCATION");
	fprintf(out, "  %% mem        bytes  %% mem(type)     objects   objects of each type   "
		     "           name\n");
	fprintf(out, "                     %s              %9c %9c %9c %9c\n", cls, cls[1], cls[4],
		cls[7], cls[10]);
	direct_row(out, g->tot_b, g->tot_n, tb, "<TOTAL>");
	for (size_t i = 0; i < n; i++) {
		const struct cg_node *x = &g->fn.node[ids[i]];
		direct_row(out, x->self_b, x->self_n, tb, strtab_get(m->fns, ids[i]));
	}
	free(ids);
}

int tables_lisp_print(FILE *out, const struct model *m, const struct callgraph *g,
		      const struct profile *p, const struct tables_opts *o, char *cls)
{
	const char *classes = lispview_classes(p);

	if (!classes)
		return -1;
	labels(classes, cls);
	fputs("mprof: ", out);
	tables_run(out, p);
	fprintf(out, ": %" PRIu64 " Lisp objects of %" PRIu64
		     " bytes (garbage collected: no frees)\n",
		model_allocs(m->tot), model_bytes(m->tot));
	table_bins(out, p, o);
	if (o->leaktable) {
		rule(out, "MEMORY LEAKS");
		fprintf(out, "  (none in a Lisp profile: the garbage collector frees objects, the\n"
			     "   program never does, so no object is a leak; mprof paper, \"The Memory\n"
			     "   Leak Table\")\n");
	}
	table_direct(out, m, g, cls);
	return 0;
}
