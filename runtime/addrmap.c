/*
 * addrmap.c - owns the address map (addrmap_*): a radix directory of 64 MiB
 * regions, each with ADDRMAP_SUBSHARDS open-addressing tables of 8-byte
 * slots behind spinlocks (held for one probe: far shorter than a futex
 * round trip), all in mmap'd memory.
 *
 * A slot is offset << 42 | (stack index + 1) << 18 | size, where offset is
 * the object's address within its region in 16-byte units (22 bits) and
 * size saturates at SIZE_BIG (then the size is in the shard's side table,
 * keyed by the whole address).  A slot of 0 is empty: the stored index is
 * never 0.
 */
#include <sched.h>
#include <string.h>

#include "addrmap.h"
#include "arena.h"

#define OFF_BITS (ADDRMAP_REGION_SHIFT - 4)          /* 22 */
#define SIZE_BITS (64 - OFF_BITS - ADDRMAP_IDX_BITS) /* 18 */
#define SIZE_BIG ((1ull << SIZE_BITS) - 1)
#define IDX_MASK ((1ull << ADDRMAP_IDX_BITS) - 1)
#define ADDR_BITS 48 /* regions cover the user address space below 2^48 */
#define MID_BITS 11
#define TOP_BITS (ADDR_BITS - ADDRMAP_REGION_SHIFT - MID_BITS)
#define MIN_SLOTS 512 /* a shard's first table: one page */
#define WINDOW 16     /* slots of a 256-byte block of address space */
#define HUGE_SLOTS ((2u << 20) / sizeof(uint64_t))
#define PREFETCH_SLOTS ((256u << 10) / sizeof(uint64_t)) /* beyond L2 */
#define MIN_BIG 16

struct big {
	uint64_t key, size;
};

struct shard {
	int lock; /* 0 free, 1 held */
	uint64_t *tab;
	uint64_t n; /* slots (a multiple of WINDOW), when tab */
	uint64_t count;
	struct big *big; /* objects of SIZE_BIG bytes or more */
	uint64_t bigmask, bigcount;
} __attribute__((aligned(64)));

struct region {
	struct region *next; /* every region, newest first */
	struct shard sh[ADDRMAP_SUBSHARDS];
};

static struct region **addrmap_top[1u << TOP_BITS];
static struct region *addrmap_regions;
static int addrmap_regions_lock; /* adding a region; lock_all */
static struct arena addrmap_arena;

static inline uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

static void spin(int *lock)
{
	int n = 0;

	do {
		while (__atomic_load_n(lock, __ATOMIC_RELAXED)) {
			/* The holder may be preempted (more threads than CPUs). */
			if (++n > 64)
				sched_yield();
			else
				__builtin_ia32_pause();
		}
	} while (__atomic_exchange_n(lock, 1, __ATOMIC_ACQUIRE));
}

static inline void lock(int *l)
{
	if (__builtin_expect(__atomic_exchange_n(l, 1, __ATOMIC_ACQUIRE), 0))
		spin(l);
}

static inline void unlock(int *l)
{
	__atomic_store_n(l, 0, __ATOMIC_RELEASE);
}

/* Add p's region; NULL if out of memory. */
static __attribute__((noinline)) struct region *region_add(uintptr_t p)
{
	uint64_t r = (uint64_t)p >> ADDRMAP_REGION_SHIFT;
	uint64_t hi = r >> MID_BITS, lo = r & ((1u << MID_BITS) - 1);
	struct region **mid;
	struct region *g = NULL;

	lock(&addrmap_regions_lock);
	mid = addrmap_top[hi];
	if (!mid && (mid = arena_map(sizeof(*mid) << MID_BITS)))
		__atomic_store_n(&addrmap_top[hi], mid, __ATOMIC_RELEASE);
	if (mid && !(g = mid[lo]) &&
	    (g = arena_alloc(&addrmap_arena, sizeof *g + 64))) {
		g = (struct region *)(((uintptr_t)g + 63) & ~(uintptr_t)63);
		g->next = addrmap_regions;
		addrmap_regions = g;
		__atomic_store_n(&mid[lo], g, __ATOMIC_RELEASE);
	}
	unlock(&addrmap_regions_lock);
	return g;
}

/* p's region, added if create; NULL if absent or out of memory. */
static inline struct region *region(uintptr_t p, int create)
{
	uint64_t r = (uint64_t)p >> ADDRMAP_REGION_SHIFT;
	struct region **mid;
	struct region *g;

	if (__builtin_expect((uint64_t)p >> ADDR_BITS, 0))
		return NULL;
	mid = __atomic_load_n(&addrmap_top[r >> MID_BITS], __ATOMIC_ACQUIRE);
	if (__builtin_expect(mid != NULL, 1) &&
	    (g = __atomic_load_n(&mid[r & ((1u << MID_BITS) - 1)], __ATOMIC_ACQUIRE)))
		return g;
	return create ? region_add(p) : NULL;
}

static inline struct shard *shard_of(struct region *g, uintptr_t p)
{
	return &g->sh[((uint64_t)p >> 16) & (ADDRMAP_SUBSHARDS - 1)];
}

static inline uint64_t off_of(uintptr_t p)
{
	return ((uint64_t)p >> 4) & ((1ull << OFF_BITS) - 1);
}

static inline uint64_t slot_off(uint64_t v)
{
	return v >> (64 - OFF_BITS);
}

/*
 * An object's home slot: its 256-byte block of address space picks a
 * window of 16 slots (by hash, scaled to the table's n / 16 windows), its
 * place in the block the slot in the window.  Objects allocated one after
 * another share a cache line or two of the table instead of one line
 * each, and no two objects of a block compete for a slot.
 */
static inline uint64_t home(uint64_t n, uint64_t off)
{
	uint64_t w = (uint64_t)(((unsigned __int128)mix(off >> 4) * (n / WINDOW)) >> 64);

	return w * WINDOW + (off & (WINDOW - 1));
}

static inline uint64_t next(uint64_t n, uint64_t i)
{
	return i + 1 == n ? 0 : i + 1;
}

/* Cyclic distance from slot a forward to slot b. */
static inline uint64_t dist(uint64_t n, uint64_t a, uint64_t b)
{
	return b >= a ? b - a : b + n - a;
}

int addrmap_prefetching;

void addrmap_prefetch_slow(uintptr_t p)
{
	struct region *g = region(p, 0);
	struct shard *s;
	uint64_t *tab, n;

	if (!g)
		return;
	s = shard_of(g, p);
	__builtin_prefetch(s, 1);
	tab = __atomic_load_n(&s->tab, __ATOMIC_RELAXED);
	n = __atomic_load_n(&s->n, __ATOMIC_RELAXED);
	/* A racy peek (n may be another table's): a prefetch never faults,
	 * at worst it warms the wrong line. */
	if (tab && n)
		__builtin_prefetch(&tab[home(n, off_of(p))], 1);
}

/* ---- the side table of big objects (whole address -> size) ---- */

static struct big *big_find(struct shard *s, uint64_t key)
{
	uint64_t i;

	if (!s->big)
		return NULL;
	for (i = mix(key) & s->bigmask; s->big[i].key; i = (i + 1) & s->bigmask)
		if (s->big[i].key == key)
			return &s->big[i];
	return NULL;
}

static void big_fresh(struct big *t, uint64_t mask, uint64_t key, uint64_t size)
{
	uint64_t i;

	for (i = mix(key) & mask; t[i].key; i = (i + 1) & mask)
		;
	t[i].key = key;
	t[i].size = size;
}

static int big_put(struct shard *s, uint64_t key, uint64_t size)
{
	struct big *e = big_find(s, key), *t;
	uint64_t n, i;

	if (e) {
		e->size = size;
		return 0;
	}
	if (!s->big || (s->bigcount + 1) * 2 > s->bigmask + 1) {
		n = s->big ? (s->bigmask + 1) * 2 : MIN_BIG;
		t = arena_map(n * sizeof *t);
		if (!t)
			return -1;
		for (i = 0; s->big && i <= s->bigmask; i++)
			if (s->big[i].key)
				big_fresh(t, n - 1, s->big[i].key, s->big[i].size);
		if (s->big)
			arena_unmap(s->big, (s->bigmask + 1) * sizeof *t);
		s->big = t;
		s->bigmask = n - 1;
	}
	big_fresh(s->big, s->bigmask, key, size);
	s->bigcount++;
	return 0;
}

static uint64_t big_take(struct shard *s, uint64_t key)
{
	struct big *e = big_find(s, key);
	uint64_t i, j, h, size;

	if (!e)
		return SIZE_BIG; /* cannot happen: the slot said it is here */
	size = e->size;
	i = (uint64_t)(e - s->big);
	for (j = (i + 1) & s->bigmask; s->big[j].key; j = (j + 1) & s->bigmask) {
		h = mix(s->big[j].key) & s->bigmask;
		if (((j - h) & s->bigmask) >= ((j - i) & s->bigmask)) {
			s->big[i] = s->big[j];
			i = j;
		}
	}
	s->big[i].key = 0;
	s->bigcount--;
	return size;
}

/* ---- the slots ---- */

static void insert_fresh(uint64_t *tab, uint64_t n, uint64_t v)
{
	uint64_t i = home(n, slot_off(v));

	while (tab[i])
		i = next(n, i);
	tab[i] = v;
}

/*
 * Grow the table by half (geometric growth, so a table is 0.53-0.8 full;
 * only touched pages cost memory).  From 2 MiB on, sizes are whole huge
 * pages.
 */
static int grow(struct shard *s)
{
	uint64_t n = s->tab ? s->n + s->n / 2 : MIN_SLOTS, i;
	uint64_t *tab;

	n = (n + WINDOW - 1) / WINDOW * WINDOW;
	if (n >= HUGE_SLOTS)
		n = (n + HUGE_SLOTS - 1) / HUGE_SLOTS * HUGE_SLOTS;
	tab = arena_map_big(n * sizeof *tab);
	if (!tab)
		return -1;
	if (n >= PREFETCH_SLOTS)
		__atomic_store_n(&addrmap_prefetching, 1, __ATOMIC_RELAXED);
	for (i = 0; s->tab && i < s->n; i++)
		if (s->tab[i])
			insert_fresh(tab, n, s->tab[i]);
	if (s->tab)
		arena_unmap(s->tab, s->n * sizeof *tab);
	__atomic_store_n(&s->tab, tab, __ATOMIC_RELAXED);
	__atomic_store_n(&s->n, n, __ATOMIC_RELAXED);
	return 0;
}

/* Remove the slot at i (backward-shift deletion). */
static void remove_at(struct shard *s, uint64_t i)
{
	uint64_t j, h;

	for (j = next(s->n, i); s->tab[j]; j = next(s->n, j)) {
		h = home(s->n, slot_off(s->tab[j]));
		/* Move j to i unless its home lies cyclically in (i, j]. */
		if (dist(s->n, h, j) >= dist(s->n, i, j)) {
			s->tab[i] = s->tab[j];
			i = j;
		}
	}
	s->tab[i] = 0;
	s->count--;
}

int addrmap_put(uintptr_t p, uint32_t idx, uint64_t size, const uint64_t *gate,
		uint64_t want)
{
	struct region *g = region(p, 1);
	uint64_t off = off_of(p), v, i;
	struct shard *s;
	int rc = 0;

	if (!g)
		return (uint64_t)p >> ADDR_BITS ? 0 : -1;
	s = shard_of(g, p);
	v = off << (64 - OFF_BITS) | ((uint64_t)idx + 1) << SIZE_BITS |
	    (size < SIZE_BIG ? size : SIZE_BIG);
	lock(&s->lock);
	/* A restart in between emptied the map: the object belongs to the
	 * profile that was thrown away. */
	if (gate && __atomic_load_n(gate, __ATOMIC_RELAXED) != want)
		goto out;
	if ((!s->tab || (s->count + 1) * 5 > s->n * 4) && grow(s) < 0)
		goto fail;
	if (size >= SIZE_BIG && big_put(s, p, size) < 0)
		goto fail;
	for (i = home(s->n, off); s->tab[i]; i = next(s->n, i)) {
		if (slot_off(s->tab[i]) == off) {
			if ((s->tab[i] & SIZE_BIG) == SIZE_BIG && size < SIZE_BIG)
				big_take(s, p);
			s->tab[i] = v;
			goto out;
		}
	}
	s->tab[i] = v;
	s->count++;
out:
	unlock(&s->lock);
	return rc;
fail:
	rc = -1;
	goto out;
}

int addrmap_take(uintptr_t p, uint32_t *idx, uint64_t *size, const uint64_t *gate,
		 uint64_t *seen)
{
	struct region *g = region(p, 0);
	uint64_t off = off_of(p), v, i;
	struct shard *s;
	int found = 0;

	if (!g) {
		if (gate)
			*seen = __atomic_load_n(gate, __ATOMIC_RELAXED);
		return 0;
	}
	s = shard_of(g, p);
	lock(&s->lock);
	if (gate)
		*seen = __atomic_load_n(gate, __ATOMIC_RELAXED);
	if (!s->tab)
		goto out;
	for (i = home(s->n, off); (v = s->tab[i]) != 0; i = next(s->n, i)) {
		if (slot_off(v) == off) {
			*idx = (uint32_t)(((v >> SIZE_BITS) & IDX_MASK) - 1);
			*size = v & SIZE_BIG;
			if (*size == SIZE_BIG)
				*size = big_take(s, p);
			remove_at(s, i);
			found = 1;
			break;
		}
	}
out:
	unlock(&s->lock);
	return found;
}

void addrmap_lock_all(void)
{
	struct region *g;
	int i;

	lock(&addrmap_regions_lock);
	for (g = addrmap_regions; g; g = g->next)
		for (i = 0; i < ADDRMAP_SUBSHARDS; i++)
			lock(&g->sh[i].lock);
}

void addrmap_unlock_all(void)
{
	struct region *g;
	int i;

	for (g = addrmap_regions; g; g = g->next)
		for (i = 0; i < ADDRMAP_SUBSHARDS; i++)
			unlock(&g->sh[i].lock);
	unlock(&addrmap_regions_lock);
}

void addrmap_lock_reinit(void)
{
	struct region *g;
	int i;

	for (g = addrmap_regions; g; g = g->next)
		for (i = 0; i < ADDRMAP_SUBSHARDS; i++)
			g->sh[i].lock = 0;
	addrmap_regions_lock = 0;
}

void addrmap_clear(void)
{
	struct region *g;
	struct shard *s;
	int i;

	for (g = addrmap_regions; g; g = g->next) {
		for (i = 0; i < ADDRMAP_SUBSHARDS; i++) {
			s = &g->sh[i];
			if (s->tab)
				arena_unmap(s->tab, s->n * sizeof *s->tab);
			if (s->big)
				arena_unmap(s->big, (s->bigmask + 1) * sizeof *s->big);
			s->tab = NULL;
			s->big = NULL;
			s->n = s->count = s->bigmask = s->bigcount = 0;
		}
	}
}
