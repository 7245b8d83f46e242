/*
 * addrmap.h - the side map from a live object's address to what the monitor
 * knows of it (a 64-bit value: the monitor packs the allocating stack's
 * index and the requested size into it).
 *
 * No header is added to user blocks, so malloc_usable_size and memory from
 * memalign/valloc keep working.  The map is split into ADDRMAP_SHARDS
 * shards by a hash of the address, each an open-addressing table (linear
 * probing, backward-shift deletion) with its own mutex, so frees on
 * different threads rarely meet.  Per live object: one 16-byte slot, at a
 * load factor between 0.35 and 0.7.
 *
 * Usage: s = addrmap_lock(p); addrmap_put/take(s, p, ...); addrmap_unlock(s).
 * Nothing done under a shard lock may allocate.
 */
#ifndef ADDRMAP_H
#define ADDRMAP_H

#include <stdint.h>

#define ADDRMAP_SHARDS 256

struct addrmap_shard;

struct addrmap_shard *addrmap_lock(uintptr_t p);
void addrmap_unlock(struct addrmap_shard *s);
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
