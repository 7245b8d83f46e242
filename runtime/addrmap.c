/*
 * addrmap.c - owns the address map (addrmap_*): ADDRMAP_SHARDS
 * independently locked open-addressing hash tables from pointer to a
 * 64-bit value, in mmap'd memory.  Key 0 marks an empty slot.
 */
#include <pthread.h>
#include <string.h>

#include "addrmap.h"
#include "arena.h"

#define ADDRMAP_MIN 512 /* slots in a shard's first table */

struct addrmap_slot {
	uint64_t key, val;
};

struct addrmap_shard {
	pthread_mutex_t lock;
	struct addrmap_slot *tab;
	uint64_t mask; /* slots - 1, when tab */
	uint64_t count;
} __attribute__((aligned(64)));

static struct addrmap_shard addrmap_shards[ADDRMAP_SHARDS];

/* Addresses are 16-aligned and clustered: mix every bit into every bit. */
static inline uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

struct addrmap_shard *addrmap_lock(uintptr_t p)
{
	struct addrmap_shard *s = &addrmap_shards[mix(p) & (ADDRMAP_SHARDS - 1)];
	pthread_mutex_lock(&s->lock);
	return s;
}

void addrmap_unlock(struct addrmap_shard *s)
{
	pthread_mutex_unlock(&s->lock);
}

/* The shard index uses the low bits of the hash; slots use the rest. */
static inline uint64_t home(const struct addrmap_shard *s, uint64_t key)
{
	return (mix(key) >> 8) & s->mask;
}

static void insert_fresh(struct addrmap_shard *s, uint64_t key, uint64_t val)
{
	uint64_t i = home(s, key);

	while (s->tab[i].key)
		i = (i + 1) & s->mask;
	s->tab[i].key = key;
	s->tab[i].val = val;
}

static int grow(struct addrmap_shard *s)
{
	uint64_t n = s->tab ? (s->mask + 1) * 2 : ADDRMAP_MIN;
	struct addrmap_slot *old = s->tab;
	uint64_t oldn = s->tab ? s->mask + 1 : 0, i;
	struct addrmap_slot *tab = arena_map(n * sizeof *tab);

	if (!tab)
		return -1;
	s->tab = tab;
	s->mask = n - 1;
	for (i = 0; i < oldn; i++)
		if (old[i].key)
			insert_fresh(s, old[i].key, old[i].val);
	arena_unmap(old, oldn * sizeof *old);
	return 0;
}

int addrmap_put(struct addrmap_shard *s, uintptr_t p, uint64_t val)
{
	uint64_t i;

	if (!s->tab || (s->count + 1) * 10 > (s->mask + 1) * 7) {
		if (grow(s) < 0)
			return -1;
	}
	for (i = home(s, p); s->tab[i].key; i = (i + 1) & s->mask) {
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
	for (i = home(s, p); s->tab[i].key != p; i = (i + 1) & s->mask)
		if (!s->tab[i].key)
			return 0;
	*val = s->tab[i].val;
	/* Backward-shift deletion: pull later members of the run into the hole. */
	for (j = (i + 1) & s->mask; s->tab[j].key; j = (j + 1) & s->mask) {
		h = home(s, s->tab[j].key);
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
		pthread_mutex_lock(&addrmap_shards[i].lock);
}

void addrmap_unlock_all(void)
{
	int i;
	for (i = ADDRMAP_SHARDS - 1; i >= 0; i--)
		pthread_mutex_unlock(&addrmap_shards[i].lock);
}

void addrmap_lock_reinit(void)
{
	int i;
	for (i = 0; i < ADDRMAP_SHARDS; i++)
		pthread_mutex_init(&addrmap_shards[i].lock, NULL);
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
