/*
 * tables_timeline.c - owns `mprof timeline` (tables_timeline): the heap
 * over time from a profile's TIMELINE (format.h), as a text chart in the
 * manner of massif's ms_print (live bytes against time, the peak marked,
 * the largest stacks stacked in letters) with a key of those stacks, or
 * as CSV, one row a point.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/escape.h"
#include "model/model.h"
#include "read/reader.h"
#include "views/tables.h"
#include "base/util.h"

#define CHART_W 72 /* columns of the chart */
#define CHART_H 18 /* rows */
#define KEYS 8     /* stacks drawn in letters */
#define DEPTH 4    /* callers named in the key */

/* n bytes in at most 8 characters: 512B, 12.3KiB, 1.5GiB. */
static const char *human(char *buf, size_t len, uint64_t n)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
	double v = (double)n;
	int u = 0;

	while (v >= 1024 && u < 5) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, len, "%" PRIu64 "B", n);
	else
		snprintf(buf, len, v < 10 ? "%.1f%s" : "%.0f%s", v, unit[u]);
	return buf;
}

static uint64_t top_bytes(const struct prof_tl_point *q, uint32_t slot, const uint64_t *peak);

/* The points, a line each; a stack's column empty where it had no bytes
 * known (the peak's point: the file's peak counters, peak[]). */
static void csv(FILE *out, const struct prof_timeline *t, const uint64_t *peak)
{
	fputs("time_s,live_bytes,live_objects,allocated_bytes,mark", out);
	for (uint32_t k = 0; k < t->ntrack; k++)
		fprintf(out, ",stack_%" PRIu64, t->track[k]);
	fputc('\n', out);
	for (uint32_t i = 0; i < t->npoints; i++) {
		const struct prof_tl_point *q = &t->points[i];
		char mark[24] = "";

		/* Words for the point's flags: peak, end, run (a merged
		 * file's next run begins). */
		if (q->flags & FORMAT_TL_RUN)
			strcat(mark, "run");
		if (q->flags & FORMAT_TL_PEAK)
			strcat(mark, *mark ? " peak" : "peak");
		if (q->flags & FORMAT_TL_END)
			strcat(mark, *mark ? " end" : "end");

		fprintf(out, "%" PRIu64 ".%06" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%s",
			q->ns / 1000000000u, q->ns / 1000 % 1000000, q->live, q->objects, q->allocated,
			mark);
		for (uint32_t k = 0; k < t->ntrack; k++) {
			uint64_t v = top_bytes(q, k, peak);

			if (v)
				fprintf(out, ",%" PRIu64, v);
			else
				fputc(',', out);
		}
		fputc('\n', out);
	}
}

/* The peak's share of stack i (its peak counters), or 0; without a
 * model (the CSV's), from the file's own counter. */
static uint64_t at_peak(const struct model *m, const struct profile *p, uint64_t i)
{
	uint64_t buf[FORMAT_MAX_COUNTERS];
	int k;

	if (!m) {
		if (i >= p->nstacks || (k = reader_counter(p, "peak_bytes")) < 0)
			return 0;
		return reader_counts(p, i, buf)[k];
	}
	if (!m->has_peak || m->nstacks != p->nstacks || i >= m->nstacks)
		return 0;
	return model_peak(m, model_counts(m, &m->stacks[i], buf));
}

/* A point's bytes of tracked stack slot, or 0.  The peak's point gives
 * none: the file's peak counters give every stack's (peak_share). */
static uint64_t top_bytes(const struct prof_tl_point *q, uint32_t slot, const uint64_t *peak)
{
	if ((q->flags & FORMAT_TL_PEAK) && !q->ntop)
		return peak[slot];
	for (uint32_t j = 0; j < q->ntop; j++)
		if (q->top[j].slot == slot)
			return q->top[j].bytes;
	return 0;
}

/* A point's bytes of the tracked slots of group g (grp[k] == g). */
static uint64_t group_bytes(const struct prof_tl_point *q, uint32_t g, const uint32_t *grp,
			    uint32_t ntrack, const uint64_t *peak)
{
	uint64_t v = 0;

	if ((q->flags & FORMAT_TL_PEAK) && !q->ntop) {
		for (uint32_t k = 0; k < ntrack; k++)
			if (grp[k] == g)
				v += peak[k];
		return v;
	}
	for (uint32_t j = 0; j < q->ntop; j++)
		if (q->top[j].slot < ntrack && grp[q->top[j].slot] == g)
			v += q->top[j].bytes;
	return v;
}

/* "... > a > b > c", the innermost DEPTH frames of stack i (or its number). */
static void put_stack(FILE *out, const struct model *m, const struct profile *p, uint64_t i)
{
	uint32_t f[DEPTH], n;
	const struct model_stack *s;

	if (!m || m->nstacks != p->nstacks || i >= m->nstacks) {
		fprintf(out, "stack %" PRIu64, i);
		return;
	}
	s = &m->stacks[i];
	n = s->n < DEPTH ? s->n : DEPTH;
	if (s->n > n || s->cut)
		fputs("... > ", out);
	model_inner(m, s, n, f);
	for (uint32_t k = 0; k < n; k++) {
		const struct model_site *site = &m->sites[f[k]];

		fprintf(out, "%s%s%s", k ? " > " : "", strtab_get(m->fns, site->fn),
			site->inlined ? " [inline]" : "");
	}
	if (!n)
		fputs("(no frames)", out);
}

/* put_stack's text, malloc'd (xmalloc: never NULL). */
static char *stack_label(const struct model *m, const struct profile *p, uint64_t i)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		die("out of memory");
	put_stack(f, m, p, i);
	if (fclose(f) != 0 || !buf)
		die("out of memory");
	return buf;
}

/* grp[k] for k < n: the first of labels 0..k printed as label k (stacks
 * that differ only in call sites, or beyond the frames named, read as one
 * row: they are one). */
static void group_labels(char **lab, uint32_t n, uint32_t *grp)
{
	for (uint32_t k = 0; k < n; k++) {
		grp[k] = k;
		for (uint32_t j = 0; j < k; j++)
			if (!strcmp(lab[j], lab[k])) {
				grp[k] = grp[j];
				break;
			}
	}
}

/* "37%", " .": a share of den, or blank for none. */
static const char *share(char *buf, size_t len, uint64_t v, uint64_t den)
{
	if (!v)
		snprintf(buf, len, "%s", "");
	else if (v * 100 < den)
		snprintf(buf, len, "%s", ".");
	else
		snprintf(buf, len, "%" PRIu64 "%%", v * 100 / den);
	return buf;
}

static const struct prof_lifetime *sort_lt;
static int by_samples(const void *a, const void *b)
{
	const struct prof_lifetime *x = &sort_lt[*(const uint32_t *)a], *y = &sort_lt[*(const uint32_t *)b];

	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	return x->stack < y->stack ? -1 : x->stack > y->stack;
}

/*
 * How long objects lived, by stack (LIFETIMES): the stacks with the most
 * samples, each sample one allocated byte's object, by time and by the
 * bytes allocated meanwhile, and what is still live.
 */
static void lifetimes(FILE *out, const struct profile *p, const struct model *m)
{
	uint32_t *ord, *grp, n = (uint32_t)p->nlifetimes, ng = 0, shown;
	char c[FORMAT_LT_BUCKETS * 2 + 1][8], **lab;
	struct prof_lifetime *lt;

	if (!n)
		return;
	/* Stacks printed the same are one row, their samples summed. */
	lab = xcalloc(n, sizeof *lab);
	grp = xcalloc(n, sizeof *grp);
	lt = xcalloc(n, sizeof *lt);
	for (uint32_t i = 0; i < n; i++)
		lab[i] = stack_label(m, p, p->lifetimes[i].stack);
	group_labels(lab, n, grp);
	for (uint32_t i = 0; i < n; i++) {
		const struct prof_lifetime *l = &p->lifetimes[i];
		struct prof_lifetime *g = &lt[grp[i]];

		if (grp[i] == i) {
			*g = *l;
			continue;
		}
		g->samples += l->samples;
		g->live += l->live;
		for (int k = 0; k < FORMAT_LT_BUCKETS; k++) {
			g->t[k] += l->t[k];
			g->b[k] += l->b[k];
		}
	}
	ord = xcalloc(n, sizeof *ord);
	ng = 0;
	for (uint32_t i = 0; i < n; i++)
		if (grp[i] == i)
			ord[ng++] = i;
	shown = ng < 10 ? ng : 10;
	sort_lt = lt;
	qsort(ord, ng, sizeof *ord, by_samples);
	fputs("\nLIFETIMES: how long the objects of the stacks sampled most lived (each sample\n"
	      "one allocated byte's object; bytes: allocated meanwhile)\n\n", out);
	fputs("  samples  <10us  <1ms <100ms  <10s longer |  <4KiB <256KiB <16MiB <1GiB  more |  live  stack\n",
	      out);
	for (uint32_t r = 0; r < shown; r++) {
		const struct prof_lifetime *l = &lt[ord[r]];

		for (int k = 0; k < FORMAT_LT_BUCKETS; k++) {
			share(c[k], sizeof c[k], l->t[k], l->samples);
			share(c[FORMAT_LT_BUCKETS + k], sizeof c[0], l->b[k], l->samples);
		}
		share(c[2 * FORMAT_LT_BUCKETS], sizeof c[0], l->live, l->samples);
		fprintf(out, "  %7" PRIu64 " %6s %5s %6s %5s %6s | %6s %7s %6s %5s %5s | %5s  ", l->samples,
			c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[8], c[9], c[10]);
		put_stack(out, m, p, l->stack);
		fputc('\n', out);
	}
	if (ng > shown)
		fprintf(out, "  (%u more %s sampled)\n", ng - shown, ng - shown == 1 ? "stack" : "stacks");
	for (uint32_t i = 0; i < n; i++)
		free(lab[i]);
	free(lab);
	free(grp);
	free(lt);
	free(ord);
}

int tables_timeline(FILE *out, const struct profile *p, const struct model *m, int as_csv)
{
	const struct prof_timeline *t = p->timeline;
	const struct prof_tl_point *col[CHART_W] = { 0 }, *last[CHART_W] = { 0 }, *pk = NULL;
	uint64_t tmax, ymax = 0, best[FORMAT_TL_TRACK] = { 0 }, peak[FORMAT_TL_TRACK] = { 0 };
	uint64_t gpeak[FORMAT_TL_TRACK] = { 0 };
	uint32_t key[KEYS], nkey = 0, peakcol = 0, grp[FORMAT_TL_TRACK];
	int merged = 0;
	char a[24], b[24], *lab[FORMAT_TL_TRACK];

	if (!t || !t->npoints)
		return -1;
	tmax = t->points[t->npoints - 1].ns;
	/* The peak counters are one run's peak shares; a merged file's
	 * (runs side by side) are the runs' summed: no one point's. */
	for (uint32_t i = 0; i < t->npoints; i++)
		merged |= (t->points[i].flags & FORMAT_TL_RUN) != 0;
	for (uint32_t k = 0; k < t->ntrack && !merged; k++)
		best[k] = peak[k] = at_peak(m, p, t->track[k]);
	/* The CSV's peak row too: its stacks' bytes from the peak counters
	 * (they were empty there, where a plot of them wants them most). */
	if (as_csv) {
		csv(out, t, peak);
		return 0;
	}
	/* The tracked stacks printed the same (differing only in call sites,
	 * or beyond the frames named) are one series: best, gpeak and the
	 * chart go by group, a group by its first slot. */
	for (uint32_t k = 0; k < t->ntrack; k++)
		lab[k] = stack_label(m, p, t->track[k]);
	group_labels(lab, t->ntrack, grp);
	for (uint32_t k = 0; k < t->ntrack; k++) {
		free(lab[k]);
		gpeak[grp[k]] += peak[k];
	}
	for (uint32_t k = 0; k < t->ntrack; k++)
		best[k] = gpeak[k];
	/* Each column shows the point in its span of time with the most live
	 * bytes; a column with none, the last point before it (the heap held
	 * there). */
	for (uint32_t i = 0; i < t->npoints; i++) {
		const struct prof_tl_point *q = &t->points[i];
		uint32_t c = tmax ? (uint32_t)((unsigned __int128)q->ns * (CHART_W - 1) / tmax) : 0;

		if (!col[c] || q->live > col[c]->live)
			col[c] = q;
		last[c] = q;
		if (q->live > ymax)
			ymax = q->live;
		if ((q->flags & FORMAT_TL_PEAK) && (!pk || q->live > pk->live)) {
			pk = q;
			peakcol = c;
		}
		for (uint32_t k = 0; k < t->ntrack; k++) {
			uint64_t v = grp[k] == k ? group_bytes(q, k, grp, t->ntrack, peak) : 0;

			if (v > best[k])
				best[k] = v;
		}
	}
	for (uint32_t c = 1; c < CHART_W; c++) {
		if (!col[c])
			col[c] = last[c] = last[c - 1];
	}
	if (pk)
		col[peakcol] = pk;
	/* The stacks drawn: those that held the most at any point. */
	for (uint32_t k = 0; k < t->ntrack; k++) {
		uint32_t j;

		if (!best[k] || (nkey == KEYS && best[k] <= best[key[KEYS - 1]]))
			continue;
		j = nkey < KEYS ? nkey++ : KEYS - 1;
		for (; j > 0 && best[key[j - 1]] < best[k]; j--)
			key[j] = key[j - 1];
		key[j] = k;
	}

	fputs("mprof timeline: ", out);
	tables_run(out, p);
	fprintf(out, "\n%u points over %" PRIu64 ".%03" PRIu64 " s", t->npoints, tmax / 1000000000u,
		tmax / 1000000 % 1000);
	if (pk)
		fprintf(out, "; peak %s live at %" PRIu64 ".%03" PRIu64 " s (^)",
			human(a, sizeof a, pk->live), pk->ns / 1000000000u, pk->ns / 1000000 % 1000);
	fputc('\n', out);
	if (t->flags & FORMAT_TL_ESTIMATES)
		fputs("(a sampled run: live bytes are estimates)\n", out);
	fputc('\n', out);
	if (!ymax)
		ymax = 1;
	for (int r = CHART_H - 1; r >= 0; r--) {
		/* The row's middle, in bytes. */
		double y = ((double)r + 0.5) * (double)ymax / CHART_H;

		if (r == CHART_H - 1)
			fprintf(out, "%8s ^", human(a, sizeof a, ymax));
		else if (r == CHART_H / 2)
			fprintf(out, "%8s |", human(a, sizeof a, ymax / 2));
		else
			fputs("         |", out);
		for (uint32_t c = 0; c < CHART_W; c++) {
			const struct prof_tl_point *q = col[c];
			double cum = 0;
			int ch = ' ';

			if (q && (double)q->live >= y) {
				ch = c == peakcol && pk ? '#' : ':';
				for (uint32_t k = 0; k < nkey; k++) {
					cum += (double)group_bytes(q, key[k], grp, t->ntrack, peak);
					if (cum >= y) {
						ch = 'A' + (int)k;
						break;
					}
				}
			}
			fputc(ch, out);
		}
		fputc('\n', out);
	}
	fputs("       0 +", out);
	for (uint32_t c = 0; c < CHART_W; c++)
		fputc('-', out);
	fputs("> s\n          0", out);
	snprintf(a, sizeof a, "%" PRIu64 ".%03" PRIu64, tmax / 1000000000u, tmax / 1000000 % 1000);
	fprintf(out, "%*s\n", (int)(CHART_W - 1), a);
	if (pk)
		fprintf(out, "%*s^ peak\n", 10 + (int)peakcol, "");
	fputc('\n', out);
	if (nkey) {
		fputs("  key  most live     at peak  stack (innermost frames)\n", out);
		for (uint32_t k = 0; k < nkey; k++) {
			uint64_t i = t->track[key[k]], at = gpeak[key[k]];

			fprintf(out, "   %c  %9s  %10s  ", 'A' + (int)k, human(a, sizeof a, best[key[k]]),
				merged ? "-" : human(b, sizeof b, at));
			put_stack(out, m, p, i);
			fputc('\n', out);
		}
		fputs("   :  the rest of the heap\n", out);
	} else {
		fputs("  (no stack's live bytes recorded: the heap never grew enough to look)\n", out);
	}
	lifetimes(out, p, m);
	return 0;
}

/* The most live bytes of t's points in [t0, t1), or, if none is there, at
 * the last point before t0 (the heap held); -1 past t's end. */
static int64_t live_in(const struct prof_timeline *t, uint64_t t0, uint64_t t1)
{
	int64_t best = -1, before = -1;

	if (!t->npoints || t0 > t->points[t->npoints - 1].ns)
		return -1;
	for (uint32_t i = 0; i < t->npoints; i++) {
		const struct prof_tl_point *q = &t->points[i];

		if (q->ns < t0)
			before = (int64_t)q->live;
		else if (q->ns < t1 && (int64_t)q->live > best)
			best = (int64_t)q->live;
	}
	return best >= 0 ? best : before >= 0 ? before : 0;
}

static void summary(FILE *out, const char *who, const char *path, const struct prof_timeline *t)
{
	const struct prof_tl_point *pk = NULL, *end = &t->points[t->npoints - 1];
	char a[24], b[24];

	for (uint32_t i = 0; i < t->npoints; i++)
		if (!pk || t->points[i].live > pk->live)
			pk = &t->points[i];
	fprintf(out, "%-4s ", who);
	escape_put(out, path);
	fprintf(out, ": peak %s at %" PRIu64 ".%03" PRIu64 " s, %s live at the end (%" PRIu64
		     ".%03" PRIu64 " s)\n",
		human(a, sizeof a, pk->live), pk->ns / 1000000000u, pk->ns / 1000000 % 1000,
		human(b, sizeof b, end->live), end->ns / 1000000000u, end->ns / 1000000 % 1000);
}

int tables_timeline_diff(FILE *out, const struct profile *bp, const char *bpath,
			 const struct profile *np, const char *npath)
{
	const struct prof_timeline *b = bp->timeline, *n = np->timeline;
	int64_t vb[CHART_W], vn[CHART_W], ymax = 1;
	uint64_t tmax;
	char a[24];

	if (!b || !n || !b->npoints || !n->npoints)
		return -1;
	tmax = b->points[b->npoints - 1].ns;
	if (n->points[n->npoints - 1].ns > tmax)
		tmax = n->points[n->npoints - 1].ns;
	for (uint32_t c = 0; c < CHART_W; c++) {
		uint64_t t0 = (uint64_t)((unsigned __int128)tmax * c / CHART_W);
		uint64_t t1 = c + 1 == CHART_W ? tmax + 1 : (uint64_t)((unsigned __int128)tmax * (c + 1) / CHART_W);

		vb[c] = live_in(b, t0, t1);
		vn[c] = live_in(n, t0, t1);
		if (vb[c] > ymax)
			ymax = vb[c];
		if (vn[c] > ymax)
			ymax = vn[c];
	}
	fputs("\n--------- HEAP OVER TIME (BASE and NEW) ---------\n\n", out);
	summary(out, "BASE", bpath, b);
	summary(out, "NEW", npath, n);
	fputs("(b: BASE's heap alone, n: NEW's alone, *: both; one time axis from each start)\n\n",
	      out);
	for (int r = CHART_H - 1; r >= 0; r--) {
		double y = ((double)r + 0.5) * (double)ymax / CHART_H;

		if (r == CHART_H - 1)
			fprintf(out, "%8s ^", human(a, sizeof a, (uint64_t)ymax));
		else if (r == CHART_H / 2)
			fprintf(out, "%8s |", human(a, sizeof a, (uint64_t)ymax / 2));
		else
			fputs("         |", out);
		for (uint32_t c = 0; c < CHART_W; c++) {
			int inb = (double)vb[c] >= y, inn = (double)vn[c] >= y;

			fputc(inb && inn ? '*' : inb ? 'b' : inn ? 'n' : ' ', out);
		}
		fputc('\n', out);
	}
	fputs("       0 +", out);
	for (uint32_t c = 0; c < CHART_W; c++)
		fputc('-', out);
	fputs("> s\n          0", out);
	snprintf(a, sizeof a, "%" PRIu64 ".%03" PRIu64, tmax / 1000000000u, tmax / 1000000 % 1000);
	fprintf(out, "%*s\n", (int)(CHART_W - 1), a);
	return 0;
}
