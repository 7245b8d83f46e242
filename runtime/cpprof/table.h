/*
 * table.h - the distinct-stack table of the sampler: per (stack, thread),
 * one hit counter per sampled resource.  The data file is this table, so
 * it grows with distinct stacks, never with run time.
 *
 * Lock-free and async-signal-safe: tab_add may run in a signal handler that
 * interrupted another tab_add in the same thread, and in any number of
 * threads at once.  Memory is reserved up front (MAP_NORESERVE) and touched
 * as used; when it is full, samples are counted in tab_dropped instead.
 */
#ifndef CP_TABLE_H
#define CP_TABLE_H

#include <stdint.h>

struct tab_ent {
	uint64_t hash;
	uint32_t tid;
	uint16_t depth;
	uint16_t flags;   /* FORMAT_STACK_* */
	uint64_t c[];     /* nres counters, then depth frames */
};

/* The table's root in the keep (keep.h): what the launcher reads the table
 * of a program that died from (lib/run/salvage_cpprof.c).  The slots and the
 * entries are keep memory when there is a keep. */
#define TAB_BITS 20 /* 1M slots: 4 MiB reserved */
#define TAB_SLOTS (1u << TAB_BITS)
struct tab_keep {
	uint64_t slot;  /* the program's address of the slots */
	uint64_t mem;   /* of the entry region (a slot is a word offset in it) */
	uint64_t words; /* its size, in words */
	uint64_t lost;  /* tab_dropped(), mirrored */
	uint64_t lang;  /* the language frames' names (runtime/lang/langname.h), or 0 */
	int32_t nres;
};
#define TAB_KEEP_LAYOUT                                                                      \
	(0x6370000000000000ull ^ (uint64_t)sizeof(struct tab_ent) << 8 ^                          \
	 (uint64_t)sizeof(struct tab_keep) << 16 ^ (uint64_t)TAB_BITS << 32)

/* Map the table for nres counters.  0 or -1.  Not signal-safe. */
int tab_init(int nres);
/* Drop everything and start empty (a forked child).  Not signal-safe. */
int tab_reset(void);
/* Add hits to counter col of (frames, tid).  Async-signal-safe. */
void tab_add(const uint64_t *frames, int depth, uint32_t flags, uint32_t tid, int col,
	     uint64_t hits);

/* Iteration for the writer: entries in slot order; NULL past the end. */
uint64_t tab_count(void);
const struct tab_ent *tab_get(uint64_t i); /* i < tab_slots(); NULL if empty */
uint64_t tab_slots(void);
static inline const uint64_t *tab_frames(const struct tab_ent *e, int nres)
{
	return e->c + nres;
}
/* Samples not recorded because the table was full. */
uint64_t tab_dropped(void);

#endif
