/*
 * salvage_mprof.c - owns writing an mprof profile from a dead program's
 * keep (salvage_mprof, keeper.h): what runtime/mprof/writer.c writes at
 * exit, read from the monitor's tables as they were at the moment of
 * death.  The monitor's root (mkeep.h) leads to the stack records (by the
 * directory) and to every thread's block (by the list); a stack's
 * counters are the sum of its counters in the blocks of the profile's
 * epoch, and its share of the heap's peak is settled as the saver does
 * (peak.h's peak_share).  No leak scan: that runs only at exit.  A
 * language profile's names: keeper_put_info.
 *
 * The image is the dead program's memory: every address is checked
 * (keeper_at), every walk bounded.  A stack whose record cannot be read
 * is left out, and a block that cannot be is not summed; INFO's
 * salvage_lost says how many of each.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "blocks.h"
#include "format/format.h"
#include "run/keeper.h"
#include "format/keepfmt.h"
#include "layout.h"
#include "mkeep.h"
#include "peak.h"
#include "stacks.h"
#include "timeline.h"
#include "base/util.h"

/* Blocks at most: one a thread alive at once (they are reused). */
#define MAX_BLOCKS (1u << 20)

/* The heap at death (put_timeline's last point). */
struct tl_end {
	int64_t live, objects;
	uint64_t allocated;
};

struct ms {
	struct salvage *s;
	const struct mkeep *mk;
	const struct blocks_thread **b; /* the blocks of the epoch */
	size_t nb, lost_blocks;
	uint64_t peak;  /* the peak this file reports */
	int peak_now;   /* the heap at death was above it: shares are now's */
	uint64_t frames[STACKS_MAX_DEPTH];
};

/* The blocks of the profile's epoch, from the list (bounded: a cycle in a
 * scribbled list ends when it has visited as many blocks as the image can
 * hold). */
static void blocks(struct ms *m)
{
	uint64_t a = m->mk->blocks_all, max = m->s->k->len / sizeof(struct blocks_thread);
	size_t cap = 0, n = 0;

	if (max > MAX_BLOCKS)
		max = MAX_BLOCKS;
	while (a && n < max) {
		const struct blocks_thread *t = keeper_at(m->s->k, a, sizeof *t);

		if (!t) {
			m->lost_blocks++;
			break;
		}
		n++;
		if (t->epoch == m->mk->epoch) {
			util_grow(&m->b, &cap, m->nb + 1, sizeof *m->b);
			m->b[m->nb++] = t;
		}
		a = (uint64_t)(uintptr_t)t->all;
	}
}

/* Bin i of every block: allocs, frees, bytes, freed (blocks.c's add_bin). */
static void bins(const struct ms *m, uint64_t (*bin)[4])
{
	memset(bin, 0, FORMAT_NBINS * sizeof *bin);
	for (size_t k = 0; k < m->nb; k++) {
		const struct blocks_thread *t = m->b[k];

		for (uint32_t i = 0; i < FORMAT_NBINS; i++) {
			uint64_t *b = bin[i], a = t->bins[i][0], f = t->bins[i][1];

			b[0] += a;
			b[1] += f;
			if (i == FORMAT_NBINS - 1) {
				b[2] += t->big[0];
				b[3] += t->big[1];
			} else {
				b[2] += a * i;
				b[3] += f * i;
			}
		}
	}
}

/* Stack idx's record, and its frames into m->frames; NULL if unreadable. */
static const struct stacks_rec *record(struct ms *m, uint32_t idx)
{
	const uint64_t *chunk;
	const struct stacks_rec *r, *top;
	const uint64_t *own;
	uint32_t i = 0, j = 0, depth;
	uint64_t a;

	if (idx >> STACKS_CHUNK_SHIFT >= MKEEP_DIR)
		return NULL;
	chunk = keeper_at(m->s->k, m->mk->stacks_dir[idx >> STACKS_CHUNK_SHIFT],
			  STACKS_CHUNK * sizeof *chunk);
	if (!chunk)
		return NULL;
	a = chunk[idx & (STACKS_CHUNK - 1)];
	top = r = keeper_at(m->s->k, a, sizeof *r);
	if (!r || r->depth > STACKS_MAX_DEPTH || r->idx != idx)
		return NULL;
	depth = r->depth;
	/*
	 * As stacks_frames: r's own frames from j on, then its parent's.  A
	 * parent may keep more frames than the stack is deep (a shallower
	 * stack sharing a deeper one's outer frames), and the stack itself
	 * may keep none (every frame shared: its innermost is a frame of the
	 * stack before it).  Every hop but the first gives a frame, so a
	 * scribbled cycle ends after depth + 1.
	 */
	for (uint32_t hop = 0;; hop++) {
		uint32_t k;

		if (hop > depth || r->nown > STACKS_MAX_DEPTH || j > r->nown ||
		    !(own = keeper_at(m->s->k, a + sizeof *r, (uint64_t)r->nown * sizeof *own)))
			return NULL;
		k = r->nown - j;
		if (k > depth - i || (k == 0 && hop > 0))
			return NULL;
		memcpy(m->frames + i, own + j, (size_t)k * sizeof *own);
		i += k;
		if (i == depth)
			return top;
		j = r->pbase;
		a = (uint64_t)(uintptr_t)r->parent;
		if (!(r = keeper_at(m->s->k, a, sizeof *r)))
			return NULL;
	}
}

/*
 * The TIMELINE section from the monitor's table (timeline.h), if it is
 * there and of this profile: its points as they were, up to the first
 * that does not read right, and the peak's point among them (the peak,
 * with peak_objects, the stacks' shares: timed by the time stamp counter
 * the peak's publish left, on the scale of the last point).  file[]:
 * each stack's number in the file (or UINT32_MAX: left out); a tracked
 * stack left out drops what the points say of the tracked ones.
 */
static void counters(const struct ms *m, uint32_t idx, uint64_t *out);

/*
 * The heap at death, the timeline's last point (as the monitor's save
 * adds one at its end): without it, a program that stopped allocating
 * early (go build's go: 0.136 s of points in a 9.9 s run) had a timeline
 * that ended there.  Its tracked stacks' live bytes, the largest first.
 */
static int end_point(const struct ms *m, const struct tl_table *t, uint32_t ntrack,
		     const struct tl_end *e, struct tl_point *q)
{
	struct timespec ts;
	uint64_t now, ctr[MPROF_NCOUNTERS_ALL];

	if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
		return 0;
	now = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	if (now < t->mono0)
		return 0;
	memset(q, 0, sizeof *q);
	q->ns = now - t->mono0;
	q->live = e->live;
	q->objects = e->objects;
	q->allocated = e->allocated;
	q->flags = FORMAT_TL_END;
	for (uint32_t k = 0; k < ntrack; k++) {
		int64_t live = 0;
		uint32_t j;

		counters(m, t->track[k], ctr);
		for (int sc = 0; sc < SIZE_NCLASSES; sc++)
			live += (int64_t)(ctr[MPROF_C_BYTES + sc] - ctr[MPROF_C_FREED + sc]);
		if (live <= 0)
			continue;
		/* Insert by bytes, keeping the FORMAT_TL_TOP largest. */
		for (j = q->ntop; j > 0 && q->top[j - 1].bytes < live; j--)
			if (j < FORMAT_TL_TOP)
				q->top[j] = q->top[j - 1];
		if (j < FORMAT_TL_TOP) {
			q->top[j].slot = k;
			q->top[j].pad = 0;
			q->top[j].bytes = live;
			if (q->ntop < FORMAT_TL_TOP)
				q->ntop++;
		}
	}
	return 1;
}

static void put_timeline(struct ms *m, const uint32_t *file, uint32_t first, uint32_t n,
			 int64_t peak_objects, const struct tl_end *e)
{
	const struct tl_table *t;
	uint32_t np, ntrack, k, i;
	uint64_t pns = 0, last = 0;
	int with_peak, with_end;
	struct tl_point end;

	if (!m->mk->timeline || !(t = keeper_at(m->s->k, m->mk->timeline, sizeof *t)) ||
	    t->epoch != m->mk->epoch)
		return;
	np = t->n < TL_CAP ? t->n : TL_CAP;
	for (i = 0; i < np; i++) {
		if (t->p[i].ns < last || t->p[i].ntop > FORMAT_TL_TOP)
			break;
		last = t->p[i].ns;
	}
	np = i;
	ntrack = t->ntrack <= FORMAT_TL_TRACK ? t->ntrack : 0;
	for (k = 0; k < ntrack; k++)
		if (t->track[k] < first || t->track[k] >= n || file[t->track[k] - first] == UINT32_MAX)
			ntrack = 0;
	with_peak = m->peak && t->peak_tsc > t->tsc0 && t->last_tsc > t->tsc0 && np;
	if (with_peak)
		pns = (uint64_t)((unsigned __int128)(t->peak_tsc - t->tsc0) * t->last_ns /
				 (t->last_tsc - t->tsc0));
	with_end = end_point(m, t, ntrack, e, &end) && (!np || end.ns >= t->p[np - 1].ns);
	/* The heap at death is the peak: that point says so, no other. */
	if (with_end && m->peak_now) {
		end.flags |= FORMAT_TL_PEAK;
		with_peak = 0;
	}
	format_begin_section(m->s->w, FORMAT_SEC_TIMELINE);
	format_put_u32(m->s->w, m->mk->sample ? FORMAT_TL_ESTIMATES : 0);
	format_put_u32(m->s->w, ntrack);
	for (k = 0; k < ntrack; k++)
		format_put_u64(m->s->w, file[t->track[k] - first]);
	format_put_u32(m->s->w, np + (uint32_t)with_peak + (uint32_t)with_end);
	for (i = 0; i < np + (uint32_t)with_end; i++) {
		const struct tl_point *q = i < np ? &t->p[i] : &end;
		uint32_t ntop = ntrack ? q->ntop : 0;

		for (k = 0; k < ntop; k++)
			if (q->top[k].slot >= ntrack)
				ntop = 0;
		if (with_peak && q->ns > pns) {
			format_put_tl_point(m->s->w, pns, (int64_t)m->peak, peak_objects,
					    i ? t->p[i - 1].allocated : q->allocated, FORMAT_TL_PEAK, 0,
					    NULL);
			with_peak = 0;
		}
		format_put_tl_point(m->s->w, q->ns, q->live, q->objects, q->allocated,
				    i < np ? 0 : q->flags, ntop, q->top);
	}
	if (with_peak)
		format_put_tl_point(m->s->w, pns, (int64_t)m->peak, peak_objects,
				    t->p[np - 1].allocated, FORMAT_TL_PEAK, 0, NULL);
	format_end_section(m->s->w);
}

/* Stack idx's counters summed over the blocks (blocks.c's
 * blocks_read_counters, with its peak shares). */
static void counters(const struct ms *m, uint32_t idx, uint64_t *out)
{
	int64_t sb = 0, sn = 0;

	memset(out, 0, MPROF_NCOUNTERS_ALL * sizeof *out);
	for (size_t n = 0; n < m->nb; n++) {
		const struct blocks_thread *t = m->b[n];
		const struct blocks_counters *bc;
		int64_t lb = 0, ln = 0;

		if ((idx >> BLOCKS_CTR_SHIFT) >= t->nchunks || !t->dir[idx >> BLOCKS_CTR_SHIFT])
			continue;
		bc = keeper_at(m->s->k,
			       (uint64_t)(uintptr_t)t->dir[idx >> BLOCKS_CTR_SHIFT] +
				       (uint64_t)(idx & (BLOCKS_CTR_CHUNK - 1)) * sizeof *bc,
			       sizeof *bc);
		if (!bc)
			continue;
		for (int k = 0; k < MPROF_NCOUNTERS; k++)
			out[k] += bc->c[BLOCKS_CTR(k / SIZE_NCLASSES * SIZE_NCLASSES, k % SIZE_NCLASSES)];
		out[MPROF_C_TEMP_OBJECTS] += bc->temp[0];
		out[MPROF_C_TEMP_BYTES] += bc->temp[1];
		for (int sc = 0; sc < SIZE_NCLASSES; sc++) {
			lb += (int64_t)(bc->c[BLOCKS_CTR(MPROF_C_BYTES, sc)] -
					bc->c[BLOCKS_CTR(MPROF_C_FREED, sc)]);
			ln += (int64_t)(bc->c[BLOCKS_CTR(MPROF_C_ALLOCS, sc)] -
					bc->c[BLOCKS_CTR(MPROF_C_FREES, sc)]);
		}
		if (m->peak_now) {
			sb += lb;
			sn += ln;
		} else {
			peak_share(&t->peak, &bc->peak, lb, ln, m->peak, &sb, &sn);
		}
	}
	out[MPROF_C_PEAK_BYTES] = sb > 0 ? (uint64_t)sb : 0;
	out[MPROF_C_PEAK_OBJECTS] = sn > 0 ? (uint64_t)sn : 0;
}

int salvage_mprof(struct salvage *s)
{
	struct ms m = { .s = s };
	uint64_t (*bin)[4] = xcalloc(FORMAT_NBINS, sizeof *bin), tot[4] = { 0 }, unknown = 0;
	struct tl_end end = { 0, 0, 0 };
	uint64_t pe, nstacks = 0, lost_stacks = 0, ctr[MPROF_NCOUNTERS_ALL];
	uint64_t *prev = xmalloc(STACKS_MAX_DEPTH * sizeof *prev);
	uint32_t *file = NULL, nfile = 0;
	int64_t peak_objects = 0;
	uint32_t first, n, prev_depth = 0, nbins = 0;
	unsigned char *ok;
	char num[7][24], lost[48];
	int rc = -1;

	if (s->k->h->layout != MKEEP_LAYOUT) {
		snprintf(s->why, sizeof s->why,
			 "its keep was written by a libmprof.so of another version");
		goto out;
	}
	m.mk = keeper_at(s->k, s->k->h->root, sizeof *m.mk);
	if (!m.mk) {
		snprintf(s->why, sizeof s->why, "its keep has no monitor's tables");
		goto out;
	}
	first = m.mk->stacks_first;
	n = m.mk->stacks_n;
	if (n > STACKS_MAX || first > n) {
		snprintf(s->why, sizeof s->why, "its keep is damaged (%u stacks from %u)", n, first);
		goto out;
	}
	blocks(&m);
	bins(&m, bin);
	for (uint32_t i = 0; i < FORMAT_NBINS; i++) {
		for (int k = 0; k < 4; k++)
			tot[k] += bin[i][k];
		nbins += (bin[i][0] | bin[i][1]) != 0;
	}
	for (size_t k = 0; k < m.nb; k++)
		unknown += m.b[k]->t[BLOCKS_T_UNKNOWN];
	/* The peak: the word's last value of this epoch (peak.c's
	 * peak_value), or the heap at death if that is more. */
	pe = m.mk->peak_pe;
	m.peak = (pe & ~PEAK_MASK) == (m.mk->epoch & 0xffff) << PEAK_BITS ? pe & PEAK_MASK : 0;
	if (tot[2] > tot[3] && tot[2] - tot[3] > m.peak) {
		m.peak = tot[2] - tot[3];
		m.peak_now = 1;
	}
	/* The heap at death, for the timeline's last point: the bins'
	 * (estimates, sampled, as the points are), but the bytes allocated,
	 * exact. */
	end.live = (int64_t)(tot[2] - tot[3]);
	end.objects = (int64_t)(tot[0] - tot[1]);
	/* Sampled: the bins are estimates; the exact totals counted apart
	 * (as the monitor's mon_read_totals). */
	if (m.mk->sample) {
		uint64_t a = 0, b = 0;

		for (size_t k = 0; k < m.nb; k++) {
			a += m.b[k]->s_allocs;
			/* As blocks_sampled_bytes counts them. */
			b += m.b[k]->s_bytes + m.b[k]->tl_set - (uint64_t)m.b[k]->s_left;
		}
		tot[0] = a;
		tot[2] = b;
	}
	end.allocated = tot[2];
	ok = xcalloc(n - first + 1, 1);
	file = xcalloc(n - first + 1, sizeof *file);
	for (uint32_t i = first; i < n; i++) {
		if (record(&m, i)) {
			ok[i - first] = 1;
			nstacks++;
		} else {
			lost_stacks++;
		}
	}
	snprintf(num[0], sizeof num[0], "%" PRIu64, m.mk->start_ns);
	snprintf(num[1], sizeof num[1], "%" PRIu64, tot[0]);
	snprintf(num[2], sizeof num[2], "%" PRIu64, tot[1]);
	snprintf(num[3], sizeof num[3], "%" PRIu64, tot[2]);
	snprintf(num[4], sizeof num[4], "%" PRIu64, tot[3]);
	snprintf(num[5], sizeof num[5], "%" PRIu64, unknown);
	snprintf(num[6], sizeof num[6], "%" PRIu64, m.mk->dropped);
	snprintf(lost, sizeof lost, "%" PRIu64 " stacks, %zu blocks", lost_stacks, m.lost_blocks);
	const char *const kv[][2] = {
		{ "start_ns", num[0] }, { "allocs", num[1] },        { "frees", num[2] },
		{ "bytes", num[3] },    { "bytes_freed", num[4] },   { "unknown_frees", num[5] },
		{ "dropped", num[6] },  { "salvage_lost", lost },
	};
	keeper_put_info(s, kv, sizeof kv / sizeof kv[0], m.mk->lang);
	keeper_put_modules(s);
	keeper_put_counters(s);
	format_begin_section(s->w, FORMAT_SEC_STACKS);
	format_put_u64(s->w, nstacks);
	for (uint32_t i = first; i < n; i++) {
		const struct stacks_rec *r;
		uint32_t shared;

		file[i - first] = UINT32_MAX;
		if (!ok[i - first] || !(r = record(&m, i)))
			continue;
		file[i - first] = nfile++;
		counters(&m, i, ctr);
		peak_objects += (int64_t)ctr[MPROF_C_PEAK_OBJECTS];
		/* Outer frames in common with the stack before go by reference. */
		shared = prev_depth ? format_common_outer(m.frames, r->depth, prev, prev_depth) : 0;
		format_put_stack(s->w, r->depth, r->flags, shared ? 1 : 0, shared, m.frames, ctr,
				 MPROF_NCOUNTERS_ALL);
		memcpy(prev, m.frames, (size_t)r->depth * sizeof *prev);
		prev_depth = r->depth;
	}
	format_end_section(s->w);
	format_begin_section(s->w, FORMAT_SEC_BINS);
	format_put_u32(s->w, nbins);
	for (uint32_t i = 0; i < FORMAT_NBINS; i++) {
		if (!(bin[i][0] | bin[i][1]))
			continue;
		format_put_u32(s->w, i);
		for (int k = 0; k < 4; k++)
			format_put_u64(s->w, bin[i][k]);
	}
	format_end_section(s->w);
	put_timeline(&m, file, first, n, peak_objects, &end);
	free(ok);
	free(file);
	rc = 0;
out:
	free(prev);
	free(bin);
	free(m.b);
	return rc;
}
