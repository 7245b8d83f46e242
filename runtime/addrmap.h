/*
 * addrmap.h - the side map from a live object's address to what the monitor
 * knows of it: the index of the stack that allocated it and its requested
 * size.
 *
 * No header is added to user blocks, so malloc_usable_size and memory from
 * memalign/valloc keep working.  The map is a shadow of the address space:
 * one 32-bit slot per granule of 32 bytes (over glibc, whose chunks are
 * that far apart at least) or 16 bytes, at a fixed place computed from the
 * address (a two-level directory of leaves, each the shadow of 4 MiB),
 * mapped on first use and touched only where objects start.  So a put is
 * one store, a take one load and one store, with no hashing, no probing
 * and no lock: between malloc returning p and free(p) only the owner of p
 * touches p's slots.  Objects allocated one after another sit side by side
 * in the shadow as they do in the heap, so the map's lines are the ones
 * the last allocations warmed.
 *
 * An object of 255 bytes or more also owns the slots of its next two
 * granules (no other object can start inside it): they hold its size.
 * Cost: 4 bytes per object (12 from 255 bytes), in pages that each shadow
 * 32 KiB of heap (16 KiB over other allocators): at most an eighth (a
 * quarter) of the heap.  Pointers that are not 16-aligned (glibc never
 * returns one) are not recorded: their frees count as unknown.
 *
 * Nothing here allocates (leaves come from mmap).
 */
#ifndef ADDRMAP_H
#define ADDRMAP_H

#include <stdint.h>

#define ADDRMAP_IDX_BITS 22 /* stack index bits stored per object */

/*
 * Once, before the first put: spacing is the least distance between two
 * live objects' addresses that the real allocator guarantees (32 for
 * glibc; 16 for anything else).
 */
void addrmap_init(unsigned spacing);

/*
 * Record p with its stack index (< 2^ADDRMAP_IDX_BITS - 1) and size,
 * replacing what was there.  0 (recorded, or p not recordable), or -1 when
 * memory for the shadow cannot be mapped.
 */
int addrmap_put(uintptr_t p, uint32_t idx, uint64_t size);
/* Remove p: 1 and its index and size if it was there, else 0. */
int addrmap_take(uintptr_t p, uint32_t *idx, uint64_t *size);

/* The lock that adds leaves (fork: held across it, reset in the child). */
void addrmap_lock_all(void);
void addrmap_unlock_all(void);
void addrmap_lock_reinit(void);

#endif
