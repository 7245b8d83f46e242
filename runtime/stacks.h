/*
 * stacks.h - the table of distinct call stacks and their counters.
 *
 * A stack is identified by its frames and flags; each gets a dense index
 * (0, 1, 2, ...) that the address map stores with every live object, so a
 * free can credit the stack that allocated the object.
 *
 * Locking: stacks_lock() serialises stacks_intern() and stacks_reset().
 * Records never move and are only released by stacks_reset(), which the
 * monitor calls with every lock held, so a pointer from stacks_get() stays
 * valid for as long as the caller holds the stacks lock or an address-map
 * shard lock.  Counters are updated with atomic adds (allocations under the
 * stacks lock, frees under a shard lock).  Readers (the writer) use
 * stacks_count() and read records below it without the lock.
 */
#ifndef STACKS_H
#define STACKS_H

#include <stdint.h>

#include "format.h"

/* 24 bits of stack index are stored per object (see addrmap.h). */
#define STACKS_MAX (1u << 24)

struct stacks_rec {
	uint32_t next; /* next index in the hash chain, or UINT32_MAX */
	uint32_t hash;
	uint32_t depth;
	uint32_t flags;
	uint64_t counters[MPROF_NCOUNTERS];
	uint64_t frames[];
};

void stacks_lock(void);
void stacks_unlock(void);
/* In a fork child, whatever the parent's threads held. */
void stacks_lock_reinit(void);

/*
 * The index of the stack (frames, depth, flags), added if new.  Caller holds
 * the lock.  -1 when the table is full or memory cannot be mapped.
 */
int64_t stacks_intern(const uint64_t *frames, uint32_t depth, uint32_t flags);
struct stacks_rec *stacks_get(uint32_t idx);
/* Number of stacks; records 0..count-1 are complete. */
uint32_t stacks_count(void);
/* Forget every stack.  Caller holds the lock (and excludes all readers). */
void stacks_reset(void);

#endif
