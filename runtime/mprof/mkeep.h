/*
 * mkeep.h - the monitor's root in the keep (keep.h, lib/format/keepfmt.h): what
 * the launcher starts from to write the profile of a program that died
 * before the monitor could (lib/run/salvage_mprof.c reads it).
 *
 * The tables a save reads are in the keep already (the stack records and
 * their directory's chunks, every thread's block and counter chunks); the
 * few static variables that lead to them, or that the file's INFO needs,
 * are mirrored here by their owners, one relaxed store each, on paths
 * that are rare (a new stack, a new block, a restart, a publish of the
 * heap's peak, a dropped allocation).  With no keep, mon_keep points at a
 * static copy nobody reads, so the stores need no test.
 */
#ifndef MKEEP_H
#define MKEEP_H

#include <stdint.h>

/* stacks.h's STACKS_DIR (stacks.c checks). */
#define MKEEP_DIR 64

struct mkeep {
	uint64_t epoch;      /* mon.epoch: the blocks that count */
	uint64_t start_ns;   /* mon.start_ns */
	uint64_t dropped;    /* mon.dropped */
	uint64_t peak_pe;    /* peak_g.pe after its last change */
	uint64_t blocks_all; /* blocks.c's newest block: the list's head */
	uint64_t sample;     /* mon.sample: the sampled monitor's mean, or 0 */
	uint64_t timeline;   /* timeline.c's table (timeline.h), or 0 */
	uint64_t lang;       /* langname.c's mirror (langname.h), or 0 */
	uint32_t stacks_n, stacks_first;
	uint64_t stacks_dir[MKEEP_DIR]; /* stacks.c's directory chunks */
};

extern struct mkeep *mon_keep __attribute__((visibility("hidden")));

#endif
