/*
 * addrmap.h - the side map from a live object's address to what the monitor
 * knows of it (a 64-bit value: the monitor packs the allocating stack's
 * index and the requested size into it).
 *
 * No header is added to user blocks, so malloc_usable_size and memory from
 * memalign/valloc keep working.  The map is split into ADDRMAP_SHARDS
 * shards, each an open-addressing table (linear probing, backward-shift
 * deletion) behind its own spinlock.  The shard is chosen by the address's
 * 64 MiB region (glibc gives each thread's arena its own 64 MiB heaps) and
 * a few bits of its hash, so a thread mostly meets its own shards: their
 * lines stay in its cache and other threads rarely wait.  Per live object:
 * one 16-byte slot, at a load factor between 0.4 and 0.8.
 *
 * Usage: s = addrmap_lock(p); addrmap_put/take(s, p, ...); addrmap_unlock(s).
 * Nothing done under a shard lock may allocate.
 */
#ifndef ADDRMAP_H
#define ADDRMAP_H

#include <stdint.h>

#define ADDRMAP_SHARDS 256
#define ADDRMAP_REGION_SHIFT 26 /* 64 MiB: glibc's HEAP_MAX_SIZE */
#define ADDRMAP_SUBSHARDS 16    /* shards per region */

struct addrmap_slot {
	uint64_t key, val;
};

struct addrmap_shard {
	int lock; /* 0 free, 1 held */
	struct addrmap_slot *tab;
	uint64_t mask; /* slots - 1, when tab */
	uint64_t count;
} __attribute__((aligned(64)));

extern struct addrmap_shard addrmap_shards[ADDRMAP_SHARDS];

/* Addresses are 16-aligned and clustered: mix every bit into every bit. */
static inline uint64_t addrmap_mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

static inline struct addrmap_shard *addrmap_shard(uintptr_t p)
{
	uint64_t region = addrmap_mix((uint64_t)p >> ADDRMAP_REGION_SHIFT);
	uint64_t sub = ((uint64_t)p >> 16) & (ADDRMAP_SUBSHARDS - 1);

	return &addrmap_shards[(region * ADDRMAP_SUBSHARDS + sub) & (ADDRMAP_SHARDS - 1)];
}

void addrmap_spin(struct addrmap_shard *s);

static inline void addrmap_lock_shard(struct addrmap_shard *s)
{
	if (__builtin_expect(__atomic_exchange_n(&s->lock, 1, __ATOMIC_ACQUIRE), 0))
		addrmap_spin(s);
}

static inline struct addrmap_shard *addrmap_lock(uintptr_t p)
{
	struct addrmap_shard *s = addrmap_shard(p);

	addrmap_lock_shard(s);
	return s;
}

static inline void addrmap_unlock(struct addrmap_shard *s)
{
	__atomic_store_n(&s->lock, 0, __ATOMIC_RELEASE);
}

/* Warm the cache lines p's lookup will touch (before a slow step). */
void addrmap_prefetch(uintptr_t p);

/* Insert or overwrite p (non-zero).  0, or -1 when memory cannot be mapped. */
int addrmap_put(struct addrmap_shard *s, uintptr_t p, uint64_t val);
/* Remove p, storing its value in *val: 1 if found, else 0. */
int addrmap_take(struct addrmap_shard *s, uintptr_t p, uint64_t *val);

/* Every shard, in order (mprof_restart, fork). */
void addrmap_lock_all(void);
void addrmap_unlock_all(void);
void addrmap_lock_reinit(void);
/* Empty every shard; caller holds every shard lock. */
void addrmap_clear(void);

#endif
