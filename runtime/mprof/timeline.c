/*
 * timeline.c - owns the heap over time (timeline_*): the table of points
 * in the keep, when a point is due, taking one (the blocks' sums, the
 * tracked stacks' live bytes), merging neighbours when the table is full,
 * choosing the stacks to track, and the save's TIMELINE section.  Why and
 * when: timeline.h.
 */
#include <string.h>
#include <time.h>
#include <x86intrin.h>

#include "blocks.h"
#include "addrmap.h"
#include "keep.h"
#include "lifetime.h"
#include "lock.h"
#include "mkeep.h"
#include "monitor.h"
#include "peak.h"
#include "stacks.h"
#include "timeline.h"

/*
 * The spacing at first: 50 ms, or 512 KiB allocated, or the heap moved by
 * as much.  A point costs a few thousand instructions (the blocks' bins
 * summed for the live objects), so that points stay below one
 * instruction an allocation: 512 KiB is a thousand or more of most
 * programs' allocations.  A thread ticks every half of that.
 */
#define TL_DT0 50000000ull
#define TL_DB0 (512ull << 10)
#define TL_CHUNK_MAX (16ull << 20)

static struct tl_table tl_none; /* no keep and no memory: points, unsalvageable */
static struct tl_table *tl = &tl_none;
static int tl_mapped;
static struct lock tl_lk = LOCK_INIT;
/* Under tl_lk: the spacing now, and where the last point and the last
 * choice of stacks were. */
static uint64_t tl_dt = TL_DT0, tl_db = TL_DB0;
static uint64_t tl_last_alloc, tl_sel_alloc;
static int64_t tl_last_live, tl_sel_live;
static uint32_t tl_cur[FORMAT_TL_TOP], tl_ncur; /* the stacks points give, as slots */
/* Read on the rare paths without the lock. */
static uint64_t tl_chunk = TL_CHUNK0; /* each thread's countdown */
static uint64_t tl_ticked;            /* bytes the countdowns have counted */

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void timeline_restart(uint64_t e)
{
	int held = lock_take(&tl_lk, "the timeline's lock") == 0;

	if (!tl_mapped) {
		struct tl_table *m = keep_map(sizeof *m);

		tl_mapped = 1;
		if (m)
			tl = m;
	}
	tl->n = 0;
	tl->ntrack = 0;
	tl->mono0 = mono_ns();
	tl->tsc0 = __rdtsc();
	tl->peak_tsc = 0;
	tl->last_tsc = tl->tsc0;
	tl->last_ns = 0;
	__atomic_store_n(&tl->epoch, e, __ATOMIC_RELEASE);
	tl_dt = TL_DT0;
	/* Sampled, a sample moves the estimate of the heap by the mean
	 * distance between samples or more: a point a sample is noise. */
	tl_db = TL_DB0 > 8 * mon.sample ? TL_DB0 : 8 * mon.sample;
	tl_last_alloc = tl_sel_alloc = 0;
	tl_last_live = tl_sel_live = 0;
	tl_ncur = 0;
	__atomic_store_n(&tl_chunk, TL_CHUNK0, __ATOMIC_RELAXED);
	__atomic_store_n(&tl_ticked, 0, __ATOMIC_RELAXED);
	mon_keep->timeline = tl == &tl_none ? 0 : (uint64_t)(uintptr_t)tl;
	peak_tsc_mirror = &tl->peak_tsc;
	if (held)
		lock_give(&tl_lk);
}

/* The slot of stack idx among the tracked ones (added), or -1: full. */
static int track_slot(uint32_t idx)
{
	uint32_t k;

	for (k = 0; k < tl->ntrack; k++)
		if (tl->track[k] == idx)
			return (int)k;
	if (tl->ntrack == FORMAT_TL_TRACK)
		return -1;
	tl->track[tl->ntrack] = idx;
	return (int)tl->ntrack++;
}

/*
 * Choose the stacks points give: the FORMAT_TL_TOP with the most live
 * bytes, once the heap has doubled since the last choice, and only when
 * reading every stack costs little beside the bytes allocated since (a
 * stack read in each block for every 64 bytes: a few instructions an
 * allocation at most, over the run).
 */
static void choose(uint64_t e, int64_t live, uint64_t allocated)
{
	uint32_t base = stacks_base(), n = stacks_count(), nb = blocks_count(e), i, k, m = 0;
	uint32_t idx[FORMAT_TL_TOP];
	int64_t b[FORMAT_TL_TOP];

	if (live <= 0 || (tl_ncur && live < 2 * tl_sel_live))
		return;
	if ((uint64_t)(n - base) * (nb ? nb : 1) * 64 > allocated - tl_sel_alloc)
		return;
	for (i = base; i < n; i++) {
		int64_t v = blocks_stack_live(e, i);

		if (v <= 0 || (m == FORMAT_TL_TOP && v <= b[m - 1]))
			continue;
		k = m < FORMAT_TL_TOP ? m++ : m - 1;
		for (; k > 0 && b[k - 1] < v; k--) {
			b[k] = b[k - 1];
			idx[k] = idx[k - 1];
		}
		b[k] = v;
		idx[k] = i;
	}
	tl_ncur = 0;
	for (k = 0; k < m; k++) {
		int s = track_slot(idx[k]);

		if (s >= 0)
			tl_cur[tl_ncur++] = (uint32_t)s;
	}
	tl_sel_live = live;
	tl_sel_alloc = allocated;
}

/* Full: of each two neighbours, the one with more live bytes stays; the
 * spacing doubles. */
static void merge(void)
{
	uint32_t i, n = tl->n;

	for (i = 0; 2 * i + 1 < n; i++)
		tl->p[i] = tl->p[2 * i + (tl->p[2 * i + 1].live > tl->p[2 * i].live)];
	if (n & 1)
		tl->p[i++] = tl->p[n - 1];
	__atomic_store_n(&tl->n, i, __ATOMIC_RELEASE);
	tl_dt *= 2;
	tl_db *= 2;
	if (tl_db / 2 <= TL_CHUNK_MAX)
		__atomic_store_n(&tl_chunk, tl_db / 2, __ATOMIC_RELAXED);
}

/* The heap now into *p (its tracked stacks' too). */
static void now_point(uint64_t e, struct tl_point *p, uint64_t ns)
{
	int64_t d;

	blocks_read_now(e, mon.sample != 0, &d, &p->objects, &p->allocated);
	p->live = __atomic_load_n(&peak_g.g, __ATOMIC_RELAXED) + d;
	p->ns = ns;
	p->flags = 0;
	choose(e, p->live, p->allocated);
	p->ntop = tl_ncur;
	for (uint32_t k = 0; k < tl_ncur; k++) {
		p->top[k].slot = tl_cur[k];
		p->top[k].pad = 0;
		p->top[k].bytes = blocks_stack_live(e, tl->track[tl_cur[k]]);
	}
}

/* Take a point if one is due (any thread; one at a time). */
static void take(int moved)
{
	uint64_t e = __atomic_load_n(&mon.epoch, __ATOMIC_ACQUIRE), ns;
	struct tl_point *p;

	if (lock_try(&tl_lk) != 0)
		return; /* another thread is taking one */
	if (tl->epoch != e)
		goto out;
	ns = mono_ns() - tl->mono0;
	if (tl->n && !moved && ns - tl->last_ns < tl_dt &&
	    __atomic_load_n(&tl_ticked, __ATOMIC_RELAXED) - tl_last_alloc < tl_db)
		goto out;
	if (tl->n == TL_CAP)
		merge();
	p = &tl->p[tl->n];
	now_point(e, p, ns);
	tl->last_ns = ns;
	tl->last_tsc = __rdtsc();
	tl_last_alloc = __atomic_load_n(&tl_ticked, __ATOMIC_RELAXED);
	tl_last_live = p->live;
	__atomic_store_n(&tl->n, tl->n + 1, __ATOMIC_RELEASE);
out:
	lock_give(&tl_lk);
}

uint64_t timeline_ns(void)
{
	return mono_ns() - tl->mono0;
}

uint64_t timeline_allocated(const struct blocks_thread *t)
{
	uint64_t a = __atomic_load_n(&tl_ticked, __ATOMIC_RELAXED);

	return mon.sample ? a : a + t->tl_set - (uint64_t)t->s_left;
}

__attribute__((noinline)) void timeline_tick(struct blocks_thread *t, const void *p)
{
	MON_KEEP_ERRNO;
	uint64_t c = __atomic_load_n(&tl_chunk, __ATOMIC_RELAXED), used;

	if (mon.sample) {
		/* At a sample: the bytes since this thread's last. */
		uint64_t now = blocks_sampled_bytes(t);

		used = now - t->tl_alloc;
		t->tl_alloc = now;
	} else {
		used = t->tl_set - (uint64_t)t->s_left;
		t->tl_alloc += used;
		t->tl_set = c;
		t->s_left = (int64_t)c;
	}
	__atomic_fetch_add(&tl_ticked, used, __ATOMIC_RELAXED);
	take(0);
	/* The allocation that made the tick: a lifetime sample. */
	if (p) {
		uint32_t idx, k;
		uint64_t size;

		if (addrmap_take((uintptr_t)p, &idx, &size)) {
			k = lifetime_sample(idx, timeline_ns(), timeline_allocated(t));
			addrmap_put((uintptr_t)p, k, size);
		} else if (addrmap_take_fine((uintptr_t)p, &idx, &size)) {
			k = lifetime_sample(idx, timeline_ns(), timeline_allocated(t));
			addrmap_put_fine((uintptr_t)p, k, size);
		}
	}
}

/*
 * At a thread's publish (every 4 KiB of its net allocation): a point now
 * if the heap moved by the spacing's bytes, or one when it is due by
 * time if the heap moved by a quarter of what it was at the last point
 * (4 KiB at least).  A program whose heap stays small (pandoc's malloc
 * heap, 146 KB: GHC allocates its own by mmap) never moved by 512 KiB or
 * allocated 256 KiB, and its chart held 5 bytes for 9 s.
 */
void timeline_moved(int64_t g)
{
	int64_t last = __atomic_load_n(&tl_last_live, __ATOMIC_RELAXED), d = g - last;
	uint64_t ad = (uint64_t)(d < 0 ? -d : d), rel = (uint64_t)(last < 0 ? -last : last) / 4;

	if (ad >= __atomic_load_n(&tl_db, __ATOMIC_RELAXED)) {
		MON_KEEP_ERRNO;
		take(1);
	} else if (ad >= (rel > 4096 ? rel : 4096)) {
		MON_KEEP_ERRNO;
		take(0);
	}
}

/* The time of time stamp counter value c, by the scale from the start to
 * (tsc, ns). */
static uint64_t tsc_ns(uint64_t c, uint64_t tsc, uint64_t ns)
{
	if (c <= tl->tsc0 || tsc <= tl->tsc0)
		return 0;
	if (c >= tsc)
		return ns;
	return (uint64_t)((unsigned __int128)(c - tl->tsc0) * ns / (tsc - tl->tsc0));
}

/* Bytes allocated at time ns, between the points around it (the n stored
 * ones, then end), and never fewer than live then: the heap cannot hold
 * more than was allocated (the peak after the last stored point took the
 * one before it, 100000 allocated beside 150000 live). */
static uint64_t allocated_at(const struct tl_point *q, uint32_t n, const struct tl_point *end,
			     uint64_t ns, uint64_t live)
{
	const struct tl_point *a = NULL, *b = end;
	uint64_t r;
	uint32_t i;

	for (i = 0; i < n && q[i].ns <= ns; i++)
		a = &q[i];
	if (i < n)
		b = &q[i];
	if (!a)
		r = b->allocated < live ? b->allocated : live;
	else if (b->ns <= a->ns || b->allocated < a->allocated)
		r = a->allocated;
	else
		r = a->allocated + (uint64_t)((unsigned __int128)(b->allocated - a->allocated) *
					      (ns - a->ns) / (b->ns - a->ns));
	if (r < live)
		r = live;
	if (r > b->allocated && b->allocated >= live)
		r = b->allocated;
	return r;
}

void timeline_put(struct format_writer *w, uint64_t peak, int64_t peak_objects, uint32_t base)
{
	static struct tl_point end; /* under the save lock */
	uint64_t e = __atomic_load_n(&mon.epoch, __ATOMIC_ACQUIRE), tsc, pns = 0;
	uint32_t i, n, k, npts;
	int held = lock_take(&tl_lk, "the timeline's lock") == 0, with_peak;

	if (tl->epoch != e) {
		if (held)
			lock_give(&tl_lk);
		return;
	}
	n = tl->n;
	end.ns = mono_ns() - tl->mono0;
	tsc = __rdtsc();
	now_point(e, &end, end.ns);
	end.flags = FORMAT_TL_END;
	/* The peak: a point of its own at the moment the heap reached it,
	 * unless the heap is there now (the saver took now for the peak). */
	with_peak = peak > 0 && tl->peak_tsc && end.live < (int64_t)peak;
	if (!with_peak && peak > 0 && end.live >= (int64_t)peak)
		end.flags |= FORMAT_TL_PEAK;
	if (with_peak)
		pns = tsc_ns(tl->peak_tsc, tsc, end.ns);
	npts = n + 1 + (uint32_t)with_peak;
	format_begin_section(w, FORMAT_SEC_TIMELINE);
	format_put_u32(w, mon.sample ? FORMAT_TL_ESTIMATES : 0);
	format_put_u32(w, tl->ntrack);
	for (k = 0; k < tl->ntrack; k++)
		format_put_u64(w, tl->track[k] >= base ? tl->track[k] - base : 0);
	format_put_u32(w, npts);
	for (i = 0; i <= n; i++) {
		const struct tl_point *q = i < n ? &tl->p[i] : &end;

		if (with_peak && q->ns > pns) {
			format_put_tl_point(w, pns, (int64_t)peak, peak_objects,
					    allocated_at(tl->p, n, &end, pns, peak), FORMAT_TL_PEAK, 0, NULL);
			with_peak = 0;
		}
		format_put_tl_point(w, q->ns, q->live, q->objects, q->allocated, q->flags, q->ntop,
				    q->top);
	}
	if (with_peak) /* at the very end */
		format_put_tl_point(w, end.ns, (int64_t)peak, peak_objects, end.allocated,
				    FORMAT_TL_PEAK, 0, NULL);
	format_end_section(w);
	if (held)
		lock_give(&tl_lk);
}

void timeline_lock_reinit(void)
{
	lock_reinit(&tl_lk);
}
