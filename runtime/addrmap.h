/*
 * addrmap.h - the side map from a live object's address to what the monitor
 * knows of it: the index of the stack that allocated it and its requested
 * size.
 *
 * No header is added to user blocks, so malloc_usable_size and memory from
 * memalign/valloc keep working.  The address space is cut into 64 MiB
 * regions (glibc gives each thread arena its own 64 MiB heaps), found
 * through a radix directory; a region has ADDRMAP_SUBSHARDS shards (by
 * 64 KiB piece), each an open-addressing table (linear probing,
 * backward-shift deletion) behind its own spinlock.  A thread therefore
 * mostly meets its own shards: their lines stay in its cache and other
 * threads rarely wait.  Since a shard holds one region, a slot needs only
 * the object's offset in it: a slot is 8 bytes (offset, stack index,
 * size; sizes of 256 KiB and more go to a small per-shard side table), at
 * a load factor between 0.4 and 0.8: 10-20 bytes per live object.
 *
 * Nothing done under a shard lock allocates (tables come from mmap).
 */
#ifndef ADDRMAP_H
#define ADDRMAP_H

#include <stdint.h>

#define ADDRMAP_REGION_SHIFT 26 /* 64 MiB: glibc's HEAP_MAX_SIZE */
#define ADDRMAP_SUBSHARDS 16    /* shards per region */
#define ADDRMAP_IDX_BITS 24     /* stack index bits (stacks.h STACKS_MAX) */

/*
 * Insert p (non-zero, 16-aligned) with its stack index and size, replacing
 * any entry for p, but only if *gate still equals want once p's shard is
 * locked (the monitor's epoch: a restart empties the map with every shard
 * locked).  0 (inserted or gated out), or -1 when memory cannot be mapped.
 */
int addrmap_put(uintptr_t p, uint32_t idx, uint64_t size, const uint64_t *gate,
		uint64_t want);
/*
 * Remove p: 1 and its index and size if it was there, else 0.  *seen gets
 * *gate as read under p's shard lock (when gate is not NULL).
 */
int addrmap_take(uintptr_t p, uint32_t *idx, uint64_t *size, const uint64_t *gate,
		 uint64_t *seen);
/*
 * Warm the cache lines p's insertion will touch (before a slow step).  Only
 * once some table has outgrown the caches: until then it costs more than
 * it saves.
 */
extern int addrmap_prefetching __attribute__((visibility("hidden")));
void addrmap_prefetch_slow(uintptr_t p);
static inline void addrmap_prefetch(uintptr_t p)
{
	if (__atomic_load_n(&addrmap_prefetching, __ATOMIC_RELAXED))
		addrmap_prefetch_slow(p);
}

/* Every shard, in order (mprof_restart, fork). */
void addrmap_lock_all(void);
void addrmap_unlock_all(void);
void addrmap_lock_reinit(void);
/* Empty every shard; caller holds every shard lock. */
void addrmap_clear(void);

#endif
