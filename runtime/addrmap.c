/*
 * addrmap.c - owns the address map (addrmap_*): ADDRMAP_SHARDS
 * open-addressing hash tables from pointer to a 64-bit value, each behind
 * a spinlock (held for a probe: far shorter than a futex round trip), in
 * mmap'd memory.  Key 0 marks an empty slot.
 */
#include <sched.h>
#include <string.h>

#include "addrmap.h"
#include "arena.h"

#define ADDRMAP_MIN 256 /* slots in a shard's first table (one page) */

struct addrmap_shard addrmap_shards[ADDRMAP_SHARDS];

void addrmap_spin(struct addrmap_shard *s)
{
	int n = 0;

	do {
		while (__atomic_load_n(&s->lock, __ATOMIC_RELAXED)) {
			/* The holder may be preempted (more threads than CPUs). */
			if (++n > 64)
				sched_yield();
			else
				__builtin_ia32_pause();
		}
	} while (__atomic_exchange_n(&s->lock, 1, __ATOMIC_ACQUIRE));
}

/*
 * An object's home slot: its 256-byte block of address space picks a
 * window of 16 slots (by hash), its place in the block the slot in the
 * window.  Objects allocated one after another share a few cache lines of
 * the table instead of one line each, and no two objects of a block meet.
 */
#define BLOCK_SHIFT 8
static inline uint64_t home(uint64_t mask, uint64_t key)
{
	return ((addrmap_mix(key >> BLOCK_SHIFT) << (BLOCK_SHIFT - 4)) |
		(key >> 4 & ((1u << (BLOCK_SHIFT - 4)) - 1))) & mask;
}

void addrmap_prefetch(uintptr_t p)
{
	struct addrmap_shard *s = addrmap_shard(p);
	struct addrmap_slot *tab = __atomic_load_n(&s->tab, __ATOMIC_RELAXED);
	uint64_t mask = __atomic_load_n(&s->mask, __ATOMIC_RELAXED);

	__builtin_prefetch(s, 1);
	/* A racy peek: at worst the wrong line is warmed. */
	if (tab)
		__builtin_prefetch(&tab[home(mask, p)], 1);
}

static void insert_fresh(struct addrmap_shard *s, uint64_t key, uint64_t val)
{
	uint64_t i = home(s->mask, key);

	while (s->tab[i].key)
		i = (i + 1) & s->mask;
	s->tab[i].key = key;
	s->tab[i].val = val;
}

/* Double the table (geometric growth: only touched pages cost memory). */
static int grow(struct addrmap_shard *s)
{
	uint64_t n = s->tab ? (s->mask + 1) * 2 : ADDRMAP_MIN;
	struct addrmap_slot *old = s->tab;
	uint64_t oldn = s->tab ? s->mask + 1 : 0, i;
	struct addrmap_slot *tab = arena_map_big(n * sizeof *tab);

	if (!tab)
		return -1;
	__atomic_store_n(&s->tab, tab, __ATOMIC_RELAXED);
	__atomic_store_n(&s->mask, n - 1, __ATOMIC_RELAXED);
	for (i = 0; i < oldn; i++)
		if (old[i].key)
			insert_fresh(s, old[i].key, old[i].val);
	arena_unmap(old, oldn * sizeof *old);
	return 0;
}

int addrmap_put(struct addrmap_shard *s, uintptr_t p, uint64_t val)
{
	uint64_t i;

	if (!s->tab || (s->count + 1) * 5 > (s->mask + 1) * 4) {
		if (grow(s) < 0)
			return -1;
	}
	for (i = home(s->mask, p); s->tab[i].key; i = (i + 1) & s->mask) {
		if (s->tab[i].key == p) {
			s->tab[i].val = val;
			return 0;
		}
	}
	s->tab[i].key = p;
	s->tab[i].val = val;
	s->count++;
	return 0;
}

int addrmap_take(struct addrmap_shard *s, uintptr_t p, uint64_t *val)
{
	uint64_t i, j, h;

	if (!s->tab)
		return 0;
	for (i = home(s->mask, p); s->tab[i].key != p; i = (i + 1) & s->mask)
		if (!s->tab[i].key)
			return 0;
	*val = s->tab[i].val;
	/* Backward-shift deletion: pull later members of the run into the hole. */
	for (j = (i + 1) & s->mask; s->tab[j].key; j = (j + 1) & s->mask) {
		h = home(s->mask, s->tab[j].key);
		/* Move j to i unless its home lies cyclically in (i, j]. */
		if (((j - h) & s->mask) >= ((j - i) & s->mask)) {
			s->tab[i] = s->tab[j];
			i = j;
		}
	}
	s->tab[i].key = 0;
	s->tab[i].val = 0;
	s->count--;
	return 1;
}

void addrmap_lock_all(void)
{
	int i;
	for (i = 0; i < ADDRMAP_SHARDS; i++)
		addrmap_lock_shard(&addrmap_shards[i]);
}

void addrmap_unlock_all(void)
{
	int i;
	for (i = ADDRMAP_SHARDS - 1; i >= 0; i--)
		addrmap_unlock(&addrmap_shards[i]);
}

void addrmap_lock_reinit(void)
{
	int i;
	for (i = 0; i < ADDRMAP_SHARDS; i++)
		__atomic_store_n(&addrmap_shards[i].lock, 0, __ATOMIC_RELEASE);
}

void addrmap_clear(void)
{
	int i;
	for (i = 0; i < ADDRMAP_SHARDS; i++) {
		struct addrmap_shard *s = &addrmap_shards[i];
		if (s->tab)
			arena_unmap(s->tab, (s->mask + 1) * sizeof *s->tab);
		s->tab = NULL;
		s->mask = 0;
		s->count = 0;
	}
}
