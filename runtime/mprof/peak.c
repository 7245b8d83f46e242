/*
 * peak.c - owns the heap's peak (peak_*): the shared word of published
 * live bytes and peak, publishing a block's delta into it, settling a
 * stack's share of the peak when it first changes after a publish, and
 * the saver's reading of the shares.  How and why: peak.h.
 */
#include <x86intrin.h>

#include "peak.h"

struct peak_global peak_g;
struct peak_count peak_nblocks;
int64_t peak_ceil = 4096, peak_floor = -4096;
static uint64_t peak_pe_none;
uint64_t *peak_pe_mirror = &peak_pe_none;
static uint64_t peak_tsc_none;
uint64_t *peak_tsc_mirror = &peak_tsc_none;

void peak_set_slack(int64_t slack)
{
	peak_ceil = slack;
	peak_floor = -slack;
}

struct pair {
	int64_t g;
	uint64_t pe;
};

/*
 * Atomically: if the word is *old, make it nw (1); else load it into *old
 * (0).  cmpxchg16b: GCC sends 16-byte __atomic calls to libatomic, which a
 * library preloaded into any program should not need.
 */
static int cas16(struct peak_global *w, struct pair *old, struct pair nw)
{
	uint64_t lo = (uint64_t)old->g, hi = old->pe;
	unsigned char ok;

	__asm__ __volatile__("lock cmpxchg16b %1\n\tsete %0"
			     : "=q"(ok), "+m"(*(volatile unsigned __int128 *)&w->g), "+a"(lo), "+d"(hi)
			     : "b"((uint64_t)nw.g), "c"(nw.pe)
			     : "memory", "cc");
	old->g = (int64_t)lo;
	old->pe = hi;
	return ok;
}

static uint64_t epoch_bits(uint64_t e)
{
	return (e & 0xffff) << PEAK_BITS;
}

void peak_restart(uint64_t e)
{
	struct pair old = { peak_g.g, peak_g.pe };

	while (!cas16(&peak_g, &old, (struct pair){ 0, epoch_bits(e) }))
		;
	__atomic_store_n(peak_pe_mirror, epoch_bits(e), __ATOMIC_RELAXED);
}

/*
 * The word's pe into the keep's mirror, unless a later one is there: two
 * threads that raised the peak one after the other may store in the other
 * order.  Within a profile pe only grows (the peak below, the epoch
 * above); peak_restart stores the new epoch's first, before any publish
 * of it.
 */
static void mirror(uint64_t pe)
{
	uint64_t old = __atomic_load_n(peak_pe_mirror, __ATOMIC_RELAXED);

	while (old < pe && !__atomic_compare_exchange_n(peak_pe_mirror, &old, pe, 1,
							__ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

void peak_publish(struct peak_block *b, uint64_t e)
{
	uint64_t ep = epoch_bits(e), p, np;
	struct pair old = { __atomic_load_n(&peak_g.g, __ATOMIC_RELAXED),
			    __atomic_load_n(&peak_g.pe, __ATOMIC_RELAXED) },
		    nw;

	for (;;) {
		if ((old.pe & ~PEAK_MASK) != ep) {
			/* Another profile's word (a restart since b's epoch
			 * began: b's counts are the old profile's), or a torn
			 * first read: swapping the word for itself tells. */
			if (cas16(&peak_g, &old, old)) {
				b->delta = 0;
				b->rise = 0;
				return;
			}
			continue;
		}
		p = old.pe & PEAK_MASK;
		nw.g = old.g + b->delta;
		np = nw.g > (int64_t)p ? (uint64_t)nw.g : p;
		if (np > PEAK_MASK)
			np = PEAK_MASK; /* 256 TiB live */
		nw.pe = ep | np;
		if (cas16(&peak_g, &old, nw))
			break;
	}
	if (np != p) {
		mirror(nw.pe);
		__atomic_store_n(peak_tsc_mirror, __rdtsc(), __ATOMIC_RELAXED);
	}
	b->delta = 0;
	b->rise = 0;
	b->s++;
	/* Keep fz_p the peak as of this publish (so a later change of P
	 * happened after it), and fz_k which of b's states that peak saw. */
	if (np != p) { /* ours: b's state now, publish s */
		b->fz_k = b->s;
		b->fz_p = np;
	} else if (p != b->fz_p) { /* another block's, since b's publish s - 1 */
		b->fz_k = b->s - 1;
		b->fz_p = p;
	}
}

void peak_threads(int d)
{
	__atomic_fetch_add(&peak_nblocks.n, d, __ATOMIC_RELAXED);
}

void peak_fork_child(int n)
{
	__atomic_store_n(&peak_nblocks.n, n, __ATOMIC_RELAXED);
}

uint64_t peak_value(uint64_t e)
{
	uint64_t pe = __atomic_load_n(&peak_g.pe, __ATOMIC_ACQUIRE);

	return (pe & ~PEAK_MASK) == epoch_bits(e) ? pe & PEAK_MASK : 0;
}
