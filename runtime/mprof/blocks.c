/*
 * blocks.c - owns the monitor's per-thread blocks (blocks_*): making them
 * (from the pool, or mapped), giving them back at thread exit, zeroing
 * them for a new profile, their counter chunks, the orphan block and its
 * lock, the pool across fork, a block's part of the heap's peak (peak.c
 * keeps the shared word), and the saver's sums over every block.  What a
 * block holds and why: blocks.h; counting into one: monitor.c.
 */
#include <emmintrin.h>
#include <pthread.h>
#include <string.h>

#include "arena.h"
#include "blocks.h"
#include "keep.h"
#include "lock.h"
#include "mkeep.h"
#include "timeline.h"
#include "monitor.h"
#include "writer.h"

#define BLOCK_BYTES ((sizeof(struct blocks_thread) + 4095) & ~(size_t)4095)
#define CHUNK_BYTES (BLOCKS_CTR_CHUNK * sizeof(struct blocks_counters))

__thread struct blocks_thread *blocks_self;
static __thread int blocks_dead; /* this thread's block went back to the pool */
static pthread_key_t blocks_key;
static int blocks_key_ok;
static struct lock blocks_pool_lk = LOCK_INIT;
static struct blocks_thread *blocks_pool; /* free blocks */
static struct blocks_thread *blocks_all;  /* every block (release-published) */
static struct lock blocks_orphan_lk = LOCK_INIT;
static struct blocks_thread *blocks_orphan;

/*
 * This block's live bytes and objects of the stack whose counters are c
 * (negative when other threads freed more of its objects than this one
 * allocated: the sum over blocks is right).  Summed when needed, not kept:
 * the hot path pays nothing for them.  The four classes one by one (a
 * loop costs twice the instructions, at every first change after a peak).
 */
struct live {
	int64_t bytes, objects;
};
#define LIVE_CLASS(c, sc) \
	(__atomic_load_n(&(c)[BLOCKS_CTR(MPROF_C_BYTES, sc)], __ATOMIC_RELAXED) - \
	 __atomic_load_n(&(c)[BLOCKS_CTR(MPROF_C_FREED, sc)], __ATOMIC_RELAXED))
#define LIVE_OBJECTS(c, sc) \
	(__atomic_load_n(&(c)[BLOCKS_CTR(MPROF_C_ALLOCS, sc)], __ATOMIC_RELAXED) - \
	 __atomic_load_n(&(c)[BLOCKS_CTR(MPROF_C_FREES, sc)], __ATOMIC_RELAXED))
_Static_assert(SIZE_NCLASSES == 4, "live() sums four classes");
static inline __attribute__((always_inline)) struct live live(const uint64_t *c)
{
	return (struct live){
		(int64_t)(LIVE_CLASS(c, 0) + LIVE_CLASS(c, 1) + LIVE_CLASS(c, 2) + LIVE_CLASS(c, 3)),
		(int64_t)(LIVE_OBJECTS(c, 0) + LIVE_OBJECTS(c, 1) + LIVE_OBJECTS(c, 2) +
			  LIVE_OBJECTS(c, 3)),
	};
}

static struct blocks_thread *block_new(void)
{
	struct blocks_thread *t;

	if (lock_take(&blocks_pool_lk, "the thread blocks") < 0)
		return NULL;
	t = blocks_pool;
	if (t) {
		blocks_pool = t->pool;
	} else if ((t = keep_map(BLOCK_BYTES)) != NULL) {
		t->all = blocks_all;
		__atomic_store_n(&blocks_all, t, __ATOMIC_RELEASE);
		__atomic_store_n(&mon_keep->blocks_all, (uint64_t)(uintptr_t)t, __ATOMIC_RELEASE);
	}
	if (t)
		t->owned = 1;
	lock_give(&blocks_pool_lk);
	return t;
}

/* Back to the pool.  If the lock cannot be had, the block stays owned: its
 * counts are still summed, it is only not reused. */
static void block_put(struct blocks_thread *t)
{
	if (lock_take(&blocks_pool_lk, "the thread blocks") < 0)
		return;
	t->owned = 0;
	t->pool = blocks_pool;
	blocks_pool = t;
	lock_give(&blocks_pool_lk);
}

static void block_release(void *p)
{
	struct blocks_thread *t = p;

	blocks_self = NULL;
	blocks_dead = 1;
	/* What the thread held back from the others' view of the heap (of
	 * an old profile: peak_publish drops it). */
	if (t->peak.delta)
		peak_publish(&t->peak, t->epoch);
	peak_threads(-1);
	block_put(p);
}

void blocks_init(void)
{
	if (pthread_key_create(&blocks_key, block_release) == 0)
		blocks_key_ok = 1;
}

struct blocks_thread *blocks_attach(void)
{
	MON_KEEP_ERRNO;
	struct blocks_thread *t;

	if (blocks_dead)
		return NULL;
	t = block_new();
	if (!t)
		return NULL;
	blocks_self = t;
	peak_threads(1);
	/* Returned to the pool at thread exit.  May calloc: we hold the guard. */
	if (blocks_key_ok)
		pthread_setspecific(blocks_key, t);
	return t;
}

void blocks_reset(struct blocks_thread *t, uint64_t e)
{
	MON_KEEP_ERRNO;
	uint32_t i;

	if (t->epoch) {
		for (i = 0; i < t->nchunks; i++) {
			keep_unmap(t->dir[i], CHUNK_BYTES);
			t->dir[i] = NULL;
		}
		t->nchunks = 0;
		memset(t->t, 0, sizeof t->t);
		t->s_allocs = t->s_bytes = 0;
		if (!mon.sample)
			t->s_left = 0; /* the timeline's countdown: a tick first */
		t->tl_set = t->tl_alloc = 0;
		if (mon.sample) /* the countdown goes on: no bytes yet */
			t->tl_set = (uint64_t)t->s_left;
		memset(&t->peak, 0, sizeof t->peak);
		memset(t->cache, 0, sizeof t->cache);
		t->last = NULL;
		t->last_p = 0;
		memset(t->bins, 0, sizeof t->bins);
		memset(t->big, 0, sizeof t->big);
	}
	__atomic_store_n(&t->epoch, e, __ATOMIC_RELEASE);
}

__attribute__((noinline)) struct blocks_counters *blocks_chunk(struct blocks_thread *t,
								uint32_t idx)
{
	MON_KEEP_ERRNO;
	struct blocks_counters *c = keep_map(CHUNK_BYTES);

	if (!c)
		return NULL;
	__atomic_store_n(&t->dir[idx >> BLOCKS_CTR_SHIFT], c, __ATOMIC_RELEASE);
	if (t->nchunks <= idx >> BLOCKS_CTR_SHIFT)
		t->nchunks = (idx >> BLOCKS_CTR_SHIFT) + 1;
	return c;
}

__attribute__((noinline)) void blocks_turn(struct blocks_thread *t, uint64_t *c)
{
	struct live l = live(c);

	peak_turn(&t->peak, blocks_ctr_peak(c), l.bytes, l.objects);
}

__attribute__((noinline)) void blocks_publish(struct blocks_thread *t)
{
	peak_publish(&t->peak, t->epoch);
	timeline_moved(__atomic_load_n(&peak_g.g, __ATOMIC_RELAXED));
}

/*
 * The block is made without the orphan lock: the pool lock comes first in
 * the order (blocks_lock's), so block_new must not run under the orphan's.
 */
struct blocks_thread *blocks_orphan_lock(uint64_t e)
{
	struct blocks_thread *fresh = NULL;

	for (;;) {
		if (lock_take(&blocks_orphan_lk, "the orphan block") < 0)
			break;
		if (!blocks_orphan && fresh) {
			blocks_orphan = fresh;
			fresh = NULL;
		}
		if (blocks_orphan && !fresh) {
			if (blocks_orphan->epoch != e)
				blocks_reset(blocks_orphan, e);
			return blocks_orphan;
		}
		lock_give(&blocks_orphan_lk);
		if (fresh) { /* another thread made it meanwhile */
			block_put(fresh);
			fresh = NULL;
		} else if (!(fresh = block_new())) {
			return NULL;
		}
	}
	if (fresh)
		block_put(fresh);
	return NULL;
}

void blocks_orphan_unlock(void)
{
	lock_give(&blocks_orphan_lk);
}

/* The orphan block holds nothing back from the view of the heap: threads
 * past their block are not counted in peak_nblocks (peak.h). */
void blocks_orphan_flush(struct blocks_thread *t)
{
	if (t->peak.delta)
		peak_publish(&t->peak, t->epoch);
}

/* ---- fork ---- */

int blocks_lock(void)
{
	if (lock_take(&blocks_pool_lk, "the thread blocks") < 0)
		return -1;
	if (lock_take(&blocks_orphan_lk, "the orphan block") < 0) {
		lock_give(&blocks_pool_lk);
		return -1;
	}
	return 0;
}

void blocks_unlock(void)
{
	lock_give(&blocks_orphan_lk);
	lock_give(&blocks_pool_lk);
}

void blocks_lock_reinit(void)
{
	lock_reinit(&blocks_orphan_lk);
	lock_reinit(&blocks_pool_lk);
}

/* The other threads are gone: their blocks (counts kept) are free, and
 * what they held back joins the view of the heap. */
void blocks_fork_child(void)
{
	struct blocks_thread *t;

	for (t = blocks_all; t; t = t->all) {
		if (t->owned && t != blocks_self && t != blocks_orphan) {
			t->owned = 0;
			t->pool = blocks_pool;
			blocks_pool = t;
			if (t->peak.delta)
				peak_publish(&t->peak, t->epoch);
		}
	}
	peak_fork_child(blocks_self != NULL);
}

/* ---- summing for the writer ---- */

/* Add t's bin i to b: allocs, frees, bytes, freed (as format.h's bins). */
static void add_bin(const struct blocks_thread *t, uint32_t i, uint64_t *b)
{
	uint64_t a = __atomic_load_n(&t->bins[i][0], __ATOMIC_RELAXED);
	uint64_t f = __atomic_load_n(&t->bins[i][1], __ATOMIC_RELAXED);

	b[0] += a;
	b[1] += f;
	if (i == FORMAT_NBINS - 1) {
		b[2] += __atomic_load_n(&t->big[0], __ATOMIC_RELAXED);
		b[3] += __atomic_load_n(&t->big[1], __ATOMIC_RELAXED);
	} else {
		b[2] += a * i;
		b[3] += f * i;
	}
}

void blocks_read_totals(uint64_t e, struct writer_totals *out)
{
	uint64_t s[BLOCKS_T_N] = { 0 }, b[4] = { 0 };
	struct blocks_thread *t;
	uint32_t i;
	int k;

	for (t = __atomic_load_n(&blocks_all, __ATOMIC_ACQUIRE); t; t = t->all) {
		if (__atomic_load_n(&t->epoch, __ATOMIC_ACQUIRE) != e)
			continue;
		for (k = 0; k < BLOCKS_T_N; k++)
			s[k] += __atomic_load_n(&t->t[k], __ATOMIC_RELAXED);
		for (i = 0; i < FORMAT_NBINS; i++)
			add_bin(t, i, b);
	}
	out->allocs = b[0];
	out->frees = b[1];
	out->bytes = b[2];
	out->freed = b[3];
	out->unknown_frees = s[BLOCKS_T_UNKNOWN];
}

void blocks_read_sampled(uint64_t e, uint64_t *allocs, uint64_t *bytes)
{
	struct blocks_thread *t;

	*allocs = *bytes = 0;
	for (t = __atomic_load_n(&blocks_all, __ATOMIC_ACQUIRE); t; t = t->all) {
		if (__atomic_load_n(&t->epoch, __ATOMIC_ACQUIRE) != e)
			continue;
		*allocs += __atomic_load_n(&t->s_allocs, __ATOMIC_RELAXED);
		*bytes += blocks_sampled_bytes(t);
	}
}

void blocks_read_bins(uint64_t e, uint64_t (*bins)[4])
{
	struct blocks_thread *t;
	uint32_t i;

	memset(bins, 0, FORMAT_NBINS * sizeof *bins);
	for (t = __atomic_load_n(&blocks_all, __ATOMIC_ACQUIRE); t; t = t->all) {
		if (__atomic_load_n(&t->epoch, __ATOMIC_ACQUIRE) != e)
			continue;
		for (i = 0; i < FORMAT_NBINS; i++)
			add_bin(t, i, bins[i]);
	}
}

/*
 * The peak this save reports (the save lock is held): peak.c's, or the
 * heap now if it is more (threads' deltas held back, peak.h), and then
 * each stack's share is what it holds now.
 */
static uint64_t blocks_save_peak;
static int blocks_save_peak_now;

void blocks_read_peak(uint64_t e)
{
	struct writer_totals t;
	uint64_t live;

	blocks_read_totals(e, &t);
	live = t.bytes > t.freed ? t.bytes - t.freed : 0;
	blocks_save_peak = peak_value(e);
	blocks_save_peak_now = live > blocks_save_peak;
	if (blocks_save_peak_now)
		blocks_save_peak = live;
}

/*
 * A save reads every stack in each block of the profile, a batch of
 * stacks at a time (issue 23: one stack a call, the loop over the blocks
 * and 16 loads of counters each added to an output counter in a loop,
 * then 16 more for the live values, cost 285 instructions a stack of
 * one block; now about 60).
 *
 * With SSE2 (every x86-64 CPU), two counters a register: eight loads,
 * their transposition from memory's order (blocks.h: by size class) to
 * the file's (by kind), the live values from the transposed pairs.  Each
 * half of a 16-byte load is an aligned 8-byte read, whole even while the
 * owner adds to it (the snapshot a few events wide the writer takes
 * anyway).  When one block alone has the chunk of a run of stacks (one
 * thread, or stacks only one thread met), its counters are the sums:
 * stored, not added to zeros.
 */
static inline int64_t add_halves(__m128i x)
{
	return (int64_t)_mm_cvtsi128_si64(_mm_add_epi64(x, _mm_unpackhi_epi64(x, x)));
}

_Static_assert(BLOCKS_CTR(MPROF_C_BYTES, 0) == 1 && BLOCKS_CTR(MPROF_C_FREES, 0) == 2 &&
		       BLOCKS_CTR(MPROF_C_FREED, 0) == 3 && BLOCKS_CTR(MPROF_C_ALLOCS, 1) == 4 &&
		       MPROF_NCOUNTERS == 16 && MPROF_C_PEAK_BYTES == 16 &&
		       MPROF_C_PEAK_OBJECTS == 17 && MPROF_C_TEMP_OBJECTS == 18 &&
		       MPROF_C_TEMP_BYTES == 19 && MPROF_NCOUNTERS_ALL == 20,
	       "read_stack's transposition: allocs, bytes, frees, freed of each class; the peak");

#define ACC(o, k, x) \
	_mm_storeu_si128((o) + (k), add ? _mm_add_epi64(_mm_loadu_si128((o) + (k)), (x)) : (x))

/*
 * Block t's counters c of a stack into out (the file's order), and its
 * share of the peak: added (add, a constant where inlined; the peak's
 * signed meanwhile), or stored.  A block whose chunk is there but which
 * never counted this stack (one of the other stacks of that chunk) holds
 * zeros and no share of the peak: adding it costs a test.
 */
static inline __attribute__((always_inline)) void read_stack(const struct blocks_thread *t,
							     const struct blocks_counters *c,
							     uint64_t *out, int add)
{
	__m128i *o = (__m128i *)out, m0, m1, m2, m3, m4, m5, m6, m7;
	__m128i a01, a23, b01, b23, f01, f23, d01, d23;
	int64_t lb, ln, sb = 0, sn = 0;

	/* (allocs, bytes), (frees, freed) of class s, then of m, l, x. */
	m0 = _mm_load_si128((const __m128i *)c->c);
	m1 = _mm_load_si128((const __m128i *)c->c + 1);
	m2 = _mm_load_si128((const __m128i *)c->c + 2);
	m3 = _mm_load_si128((const __m128i *)c->c + 3);
	m4 = _mm_load_si128((const __m128i *)c->c + 4);
	m5 = _mm_load_si128((const __m128i *)c->c + 5);
	m6 = _mm_load_si128((const __m128i *)c->c + 6);
	m7 = _mm_load_si128((const __m128i *)c->c + 7);
	a01 = _mm_unpacklo_epi64(m0, m2);
	a23 = _mm_unpacklo_epi64(m4, m6);
	f01 = _mm_unpacklo_epi64(m1, m3);
	f23 = _mm_unpacklo_epi64(m5, m7);
	/* Bytes come with allocations, bytes freed with frees. */
	if (add && _mm_movemask_epi8(_mm_cmpeq_epi32(_mm_or_si128(_mm_or_si128(a01, a23),
								  _mm_or_si128(f01, f23)),
						     _mm_setzero_si128())) == 0xffff)
		return;
	b01 = _mm_unpackhi_epi64(m0, m2);
	b23 = _mm_unpackhi_epi64(m4, m6);
	d01 = _mm_unpackhi_epi64(m1, m3);
	d23 = _mm_unpackhi_epi64(m5, m7);
	ACC(o, 0, a01);
	ACC(o, 1, a23);
	ACC(o, 2, b01);
	ACC(o, 3, b23);
	ACC(o, 4, f01);
	ACC(o, 5, f23);
	ACC(o, 6, d01);
	ACC(o, 7, d23);
	lb = add_halves(_mm_add_epi64(_mm_sub_epi64(b01, d01), _mm_sub_epi64(b23, d23)));
	ln = add_halves(_mm_add_epi64(_mm_sub_epi64(a01, f01), _mm_sub_epi64(a23, f23)));
	if (add) {
		sb = (int64_t)out[MPROF_C_PEAK_BYTES];
		sn = (int64_t)out[MPROF_C_PEAK_OBJECTS];
	}
	if (blocks_save_peak_now) {
		sb += lb;
		sn += ln;
	} else {
		peak_share(&t->peak, &c->peak, lb, ln, blocks_save_peak, &sb, &sn);
	}
	out[MPROF_C_PEAK_BYTES] = (uint64_t)sb;
	out[MPROF_C_PEAK_OBJECTS] = (uint64_t)sn;
	ACC(o, MPROF_C_TEMP_OBJECTS / 2, _mm_loadu_si128((const __m128i *)c->temp));
}

/* A row's counters, peak and temporaries to zero, before blocks are added
 * to it (one store at a time: memset is a rep stos of 20, slower). */
static inline void zero_row(uint64_t *out)
{
	__m128i *o = (__m128i *)out, z = _mm_setzero_si128();

	_mm_storeu_si128(o, z);
	_mm_storeu_si128(o + 1, z);
	_mm_storeu_si128(o + 2, z);
	_mm_storeu_si128(o + 3, z);
	_mm_storeu_si128(o + 4, z);
	_mm_storeu_si128(o + 5, z);
	_mm_storeu_si128(o + 6, z);
	_mm_storeu_si128(o + 7, z);
	_mm_storeu_si128(o + 8, z);
	_mm_storeu_si128(o + 9, z);
}

/* Negative only in a snapshot taken while threads run. */
static inline void peak_floor0(uint64_t *out)
{
	if ((int64_t)out[MPROF_C_PEAK_BYTES] < 0)
		out[MPROF_C_PEAK_BYTES] = 0;
	if ((int64_t)out[MPROF_C_PEAK_OBJECTS] < 0)
		out[MPROF_C_PEAK_OBJECTS] = 0;
}

void blocks_read_counters(uint64_t e, uint32_t idx, uint32_t n,
			  uint64_t (*out)[MPROF_NCOUNTERS_SCAN])
{
	const struct blocks_counters *chunk, *first = NULL;
	struct blocks_thread *t, *one;
	uint32_t j, k, span, at, nblocks;

	/* The stacks of one chunk at a time. */
	for (j = 0; j < n; j += span) {
		at = (idx + j) & (BLOCKS_CTR_CHUNK - 1);
		span = BLOCKS_CTR_CHUNK - at < n - j ? BLOCKS_CTR_CHUNK - at : n - j;
		one = NULL;
		nblocks = 0;
		for (t = __atomic_load_n(&blocks_all, __ATOMIC_ACQUIRE); t; t = t->all) {
			if (__atomic_load_n(&t->epoch, __ATOMIC_ACQUIRE) != e)
				continue;
			chunk = __atomic_load_n(&t->dir[(idx + j) >> BLOCKS_CTR_SHIFT], __ATOMIC_ACQUIRE);
			if (chunk) {
				one = t;
				first = chunk + at;
				nblocks++;
			}
		}
		if (nblocks == 1) {
			for (k = 0; k < span; k++) {
				read_stack(one, first + k, out[j + k], 0);
				peak_floor0(out[j + k]);
			}
			continue;
		}
		for (k = 0; k < span; k++)
			zero_row(out[j + k]);
		for (t = __atomic_load_n(&blocks_all, __ATOMIC_ACQUIRE); nblocks && t; t = t->all) {
			if (__atomic_load_n(&t->epoch, __ATOMIC_ACQUIRE) != e)
				continue;
			chunk = __atomic_load_n(&t->dir[(idx + j) >> BLOCKS_CTR_SHIFT], __ATOMIC_ACQUIRE);
			if (!chunk)
				continue;
			for (k = 0; k < span; k++)
				read_stack(t, chunk + at + k, out[j + k], 1);
		}
		for (k = 0; k < span; k++)
			peak_floor0(out[j + k]);
	}
}

void blocks_read_now(uint64_t e, int sampled, int64_t *delta, int64_t *objects,
		     uint64_t *allocated)
{
	const struct blocks_thread *t;
	int64_t d = 0, o = 0;
	uint64_t a = 0;

	for (t = __atomic_load_n(&blocks_all, __ATOMIC_ACQUIRE); t; t = t->all) {
		if (__atomic_load_n(&t->epoch, __ATOMIC_ACQUIRE) != e)
			continue;
		d += __atomic_load_n(&t->peak.delta, __ATOMIC_RELAXED);
		/* Objects: allocations less frees, bin by bin (two lanes, four
		 * bins a step). */
		__m128i a0 = _mm_setzero_si128(), a1 = a0, a2 = a0, a3 = a0;
		const __m128i *bp = (const __m128i *)t->bins;
		uint32_t i;

		for (i = 0; i + 4 <= FORMAT_NBINS; i += 4) {
			a0 = _mm_add_epi64(a0, _mm_loadu_si128(bp + i));
			a1 = _mm_add_epi64(a1, _mm_loadu_si128(bp + i + 1));
			a2 = _mm_add_epi64(a2, _mm_loadu_si128(bp + i + 2));
			a3 = _mm_add_epi64(a3, _mm_loadu_si128(bp + i + 3));
		}
		for (; i < FORMAT_NBINS; i++)
			a0 = _mm_add_epi64(a0, _mm_loadu_si128(bp + i));
		a0 = _mm_add_epi64(_mm_add_epi64(a0, a1), _mm_add_epi64(a2, a3));
		o += (int64_t)_mm_cvtsi128_si64(a0) -
		     (int64_t)_mm_cvtsi128_si64(_mm_unpackhi_epi64(a0, a0));
		if (sampled)
			a += blocks_sampled_bytes(t);
		else
			a += __atomic_load_n(&t->tl_alloc, __ATOMIC_RELAXED) +
			     __atomic_load_n(&t->tl_set, __ATOMIC_RELAXED) -
			     (uint64_t)__atomic_load_n(&t->s_left, __ATOMIC_RELAXED);
	}
	*delta = d;
	*objects = o;
	*allocated = a;
}

int64_t blocks_stack_live(uint64_t e, uint32_t idx)
{
	const struct blocks_thread *t;
	int64_t b = 0;

	for (t = __atomic_load_n(&blocks_all, __ATOMIC_ACQUIRE); t; t = t->all) {
		const struct blocks_counters *c;

		if (__atomic_load_n(&t->epoch, __ATOMIC_ACQUIRE) != e)
			continue;
		c = __atomic_load_n(&t->dir[idx >> BLOCKS_CTR_SHIFT], __ATOMIC_ACQUIRE);
		if (c)
			b += live(c[idx & (BLOCKS_CTR_CHUNK - 1)].c).bytes;
	}
	return b;
}

uint32_t blocks_count(uint64_t e)
{
	const struct blocks_thread *t;
	uint32_t n = 0;

	for (t = __atomic_load_n(&blocks_all, __ATOMIC_ACQUIRE); t; t = t->all)
		n += __atomic_load_n(&t->epoch, __ATOMIC_ACQUIRE) == e;
	return n;
}
