/*
 * lifetime.h - how long objects live, by stack (lifetime_*; issue 24):
 * from a sample of the allocations, in a few log-spaced buckets of time
 * and of bytes allocated meanwhile, so that short-lived churn and
 * long-lived growth are told apart.
 *
 * The sample costs the hot path nothing.  At each of the exact monitor's
 * timeline ticks (timeline.h: every 256 KiB a thread allocates, then more
 * as the run grows), the allocation that made the tick becomes a sample:
 * its birth (time, bytes allocated so far) goes into one of LT_SLOTS
 * slots, and its entry in the address map takes the index LT_IDX0 + slot
 * in place of its stack's.  No stack has such an index (the stack table
 * stops below LT_IDX0): a free finds it where it tells a stack of an old
 * profile apart, off the hot path, and lifetime_freed buckets the
 * object's life into its stack's histogram and gives back the real index.
 * Each sample is an allocated byte's object: the shares of a stack's
 * buckets are those of its bytes.  Samples still live at the save are
 * counted as such.
 */
#ifndef LIFETIME_H
#define LIFETIME_H

#include <stdint.h>

#include "format.h"
#include "stacks.h"

#define LT_SLOTS 4096 /* samples live at once */
#define LT_IDX0 (STACKS_MAX - 1 - LT_SLOTS)
_Static_assert(LT_IDX0 + LT_SLOTS <= STACKS_MAX - 1, "sample indices fit the address map");

struct format_writer;

/* Whether idx (from the address map) is a sample's. */
static inline int lifetime_is(uint32_t idx)
{
	return idx >= LT_IDX0 && idx < LT_IDX0 + LT_SLOTS;
}

/* A new profile (epoch e): the histograms start empty. */
void lifetime_restart(uint64_t e);
/* Make object p (n bytes, of stack idx) a sample, born at ns and after
 * allocated bytes: its new index for the address map, or idx. */
uint32_t lifetime_sample(uint32_t idx, uint64_t ns, uint64_t allocated);
/* Sample idx (lifetime_is) freed at ns, after allocated bytes: its stack's
 * index (LT_IDX0 if the sample was not one). */
uint32_t lifetime_freed(uint32_t idx, uint64_t ns, uint64_t allocated);
/* The stack a sample index stands for (the leak scan's), or idx. */
uint32_t lifetime_real(uint32_t idx);
/* The save's LIFETIMES section (stacks numbered from base); under the
 * save lock. */
void lifetime_put(struct format_writer *w, uint32_t base, uint32_t count);
/* In a forked child: the lock free. */
void lifetime_lock_reinit(void);

#endif
