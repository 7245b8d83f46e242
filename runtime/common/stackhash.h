/*
 * stackhash.h - the hash that identifies a stack in the stack table,
 * shared by stacks.c (from the frames) and unwind.c (incrementally: the
 * unwinder keeps the hash of every outer part of its last walk, so a walk
 * that reuses that part hashes only its new inner frames).
 *
 * Frames are folded in from the outermost to the innermost; depth and
 * flags are mixed in at the end.
 */
#ifndef STACKHASH_H
#define STACKHASH_H

#include <stdint.h>

#define STACKHASH_SEED 0x9e3779b97f4a7c15ull

static inline uint64_t stackhash_step(uint64_t h, uint64_t frame)
{
	h = (h ^ frame) * 0xff51afd7ed558ccdull;
	return h ^ h >> 32;
}

static inline uint32_t stackhash_fin(uint64_t h, uint32_t depth, uint32_t flags)
{
	h ^= depth ^ (uint64_t)flags << 32;
	h *= 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 29;
	h *= 0x9e3779b97f4a7c15ull;
	return (uint32_t)(h >> 32);
}

/* The hash of frames[0..depth-1] (innermost first). */
static inline uint32_t stackhash(const uint64_t *frames, uint32_t depth, uint32_t flags)
{
	uint64_t h = STACKHASH_SEED;

	for (uint32_t i = depth; i > 0; i--)
		h = stackhash_step(h, frames[i - 1]);
	return stackhash_fin(h, depth, flags);
}

#endif
