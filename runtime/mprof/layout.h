/*
 * layout.h - the layout signature of what the monitor keeps (mkeep.h):
 * the runtime writes it into the keep's header, the launcher
 * (lib/run/salvage_mprof.c) compares it with its own before it reads a
 * keep, so that an mprof never reads the tables of a libmprof.so of
 * another version laid out differently.
 */
#ifndef LAYOUT_H
#define LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#include "blocks.h"
#include "langname.h"
#include "mkeep.h"
#include "stacks.h"

#define MKEEP_LAYOUT                                                                           \
	(0x6d6b00000000000full ^ (uint64_t)sizeof(struct blocks_thread) << 32 ^                     \
	 (uint64_t)offsetof(struct blocks_thread, dir) << 16 ^                                     \
	 (uint64_t)sizeof(struct blocks_counters) << 8 ^ (uint64_t)sizeof(struct stacks_rec) ^       \
	 (uint64_t)sizeof(struct mkeep) << 44 ^ (uint64_t)STACKS_CHUNK_SHIFT << 56 ^               \
	 (uint64_t)BLOCKS_CTR_SHIFT << 60 ^ (uint64_t)MPROF_NCOUNTERS << 24 ^                      \
	 (uint64_t)sizeof(struct langname_keep) << 36)

#endif
