/*
 * mergetime.c - owns merging the sections of the heap over time
 * (mergetime_put; issue 24): the runs' timelines side by side, one after
 * the other on one time axis (each from where the one before ended, its
 * first point marked FORMAT_TL_RUN), their tracked stacks renumbered as
 * merge.c writes the stacks (file after file); and their lifetimes, each
 * stack's as it was.  What does not fit the format's bounds is left out,
 * and said in one line.
 */
#include "merge/mergetime.h"

#include <stdio.h>

#include "base/util.h"
#include "format/format.h"
#include "read/reader.h"

static void put_timelines(struct format_writer *w, const struct profile *p, int n)
{
	uint64_t off = 0, base = 0, npoints = 0;
	uint32_t ntrack = 0, flags = 0, slot[FORMAT_TL_TRACK];
	int any = 0;

	for (int i = 0; i < n; i++) {
		if (!p[i].timeline || !p[i].timeline->npoints)
			continue;
		any = 1;
		npoints += p[i].timeline->npoints;
		flags |= p[i].timeline->flags;
	}
	if (!any)
		return;
	if (npoints > FORMAT_TL_POINTS) {
		fprintf(stderr,
			"%s: merge: the runs' timelines hold %llu points, more than a file holds (%d): "
			"the merged file has none\n",
			util_progname, (unsigned long long)npoints, FORMAT_TL_POINTS);
		return;
	}
	format_begin_section(w, FORMAT_SEC_TIMELINE);
	format_put_u32(w, flags);
	for (int i = 0; i < n; i++)
		if (p[i].timeline)
			ntrack += p[i].timeline->ntrack;
	ntrack = ntrack < FORMAT_TL_TRACK ? ntrack : FORMAT_TL_TRACK;
	format_put_u32(w, ntrack);
	/* The tracked stacks, file after file, until the format's bound. */
	for (int i = 0, k = 0; i < n; off += p[i].nstacks, i++)
		for (uint32_t j = 0; p[i].timeline && j < p[i].timeline->ntrack && k < (int)ntrack;
		     j++, k++)
			format_put_u64(w, off + p[i].timeline->track[j]);
	format_put_u32(w, (uint32_t)npoints);
	for (uint32_t i = 0, k0 = 0, first = 1; i < (uint32_t)n; i++) {
		const struct prof_timeline *t = p[i].timeline;
		struct format_tl_top top[FORMAT_TL_TOP];

		if (!t || !t->npoints)
			continue;
		for (uint32_t j = 0; j < t->ntrack; j++)
			slot[j] = k0 + j < ntrack ? k0 + j : UINT32_MAX;
		for (uint32_t j = 0; j < t->npoints; j++) {
			const struct prof_tl_point *q = &t->points[j];
			uint32_t m = 0;

			for (uint32_t x = 0; x < q->ntop; x++)
				if (slot[q->top[x].slot] != UINT32_MAX)
					top[m++] = (struct format_tl_top){ slot[q->top[x].slot], 0,
									   (int64_t)q->top[x].bytes };
			format_put_tl_point(w, base + q->ns, (int64_t)q->live, (int64_t)q->objects,
					    q->allocated,
					    q->flags | (j == 0 && !first ? FORMAT_TL_RUN : 0), m, top);
		}
		first = 0;
		base += t->points[t->npoints - 1].ns;
		k0 += t->ntrack;
	}
	format_end_section(w);
}

static void put_lifetimes(struct format_writer *w, const struct profile *p, int n)
{
	uint64_t off = 0, total = 0;

	for (int i = 0; i < n; i++)
		total += p[i].nlifetimes;
	if (!total)
		return;
	if (total > FORMAT_LT_MAX_STACKS) {
		fprintf(stderr,
			"%s: merge: the runs' lifetimes name %llu stacks, more than a file holds (%u): "
			"the merged file has none\n",
			util_progname, (unsigned long long)total, FORMAT_LT_MAX_STACKS);
		return;
	}
	format_begin_section(w, FORMAT_SEC_LIFETIMES);
	format_put_u32(w, FORMAT_LT_BUCKETS);
	format_put_u32(w, (uint32_t)total);
	for (int i = 0; i < n; off += p[i].nstacks, i++)
		for (size_t j = 0; j < p[i].nlifetimes; j++) {
			const struct prof_lifetime *l = &p[i].lifetimes[j];

			format_put_u64(w, off + l->stack);
			format_put_u64(w, l->samples);
			for (int k = 0; k < FORMAT_LT_BUCKETS; k++)
				format_put_u64(w, l->t[k]);
			for (int k = 0; k < FORMAT_LT_BUCKETS; k++)
				format_put_u64(w, l->b[k]);
			format_put_u64(w, l->live);
		}
	format_end_section(w);
}

void mergetime_put(struct format_writer *w, const struct profile *p, int n)
{
	put_timelines(w, p, n);
	put_lifetimes(w, p, n);
}
