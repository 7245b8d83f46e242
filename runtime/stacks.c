/*
 * stacks.c - owns the distinct-stack table (stacks_*): records in a bump
 * arena, a chained hash table of indices, and an index -> record directory.
 *
 * The directory is two-level (STACKS_DIR chunks of STACKS_CHUNK pointers)
 * so it never moves: a reader holding an index needs no lock to find the
 * record.  The hash buckets double when the table is as full as it is wide.
 */
#include <pthread.h>
#include <string.h>

#include "arena.h"
#include "stacks.h"

#define STACKS_CHUNK_SHIFT 16
#define STACKS_CHUNK (1u << STACKS_CHUNK_SHIFT)
#define STACKS_DIR (STACKS_MAX / STACKS_CHUNK)
#define NIL UINT32_MAX

static pthread_mutex_t stacks_mutex = PTHREAD_MUTEX_INITIALIZER;
static struct arena stacks_arena;
static struct stacks_rec **stacks_dir[STACKS_DIR];
static uint32_t stacks_n;
static uint32_t *stacks_buckets;
static uint32_t stacks_nbuckets; /* a power of two, or 0 */

void stacks_lock(void)
{
	pthread_mutex_lock(&stacks_mutex);
}

void stacks_unlock(void)
{
	pthread_mutex_unlock(&stacks_mutex);
}

void stacks_lock_reinit(void)
{
	pthread_mutex_init(&stacks_mutex, NULL);
}

static uint32_t hash_frames(const uint64_t *frames, uint32_t depth, uint32_t flags)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ depth ^ ((uint64_t)flags << 32);
	uint32_t i;

	for (i = 0; i < depth; i++) {
		h ^= frames[i];
		h *= 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	h ^= h >> 29;
	h *= 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 32;
	return (uint32_t)h;
}

struct stacks_rec *stacks_get(uint32_t idx)
{
	return stacks_dir[idx >> STACKS_CHUNK_SHIFT][idx & (STACKS_CHUNK - 1)];
}

uint32_t stacks_count(void)
{
	return __atomic_load_n(&stacks_n, __ATOMIC_ACQUIRE);
}

static int grow_buckets(void)
{
	uint32_t nb = stacks_nbuckets ? stacks_nbuckets * 2 : 4096;
	uint32_t *b = arena_map((size_t)nb * sizeof *b);
	uint32_t i;

	if (!b)
		return -1;
	memset(b, 0xff, (size_t)nb * sizeof *b);
	for (i = 0; i < stacks_n; i++) {
		struct stacks_rec *r = stacks_get(i);
		uint32_t k = r->hash & (nb - 1);
		r->next = b[k];
		b[k] = i;
	}
	arena_unmap(stacks_buckets, (size_t)stacks_nbuckets * sizeof *b);
	stacks_buckets = b;
	stacks_nbuckets = nb;
	return 0;
}

int64_t stacks_intern(const uint64_t *frames, uint32_t depth, uint32_t flags)
{
	uint32_t h = hash_frames(frames, depth, flags);
	uint32_t i, chunk;
	struct stacks_rec *r;

	if (stacks_nbuckets) {
		for (i = stacks_buckets[h & (stacks_nbuckets - 1)]; i != NIL; i = r->next) {
			r = stacks_get(i);
			if (r->hash == h && r->depth == depth && r->flags == flags &&
			    !memcmp(r->frames, frames, depth * sizeof *frames))
				return i;
		}
	}
	if (stacks_n >= STACKS_MAX - 1)
		return -1;
	if (stacks_n >= stacks_nbuckets && grow_buckets() < 0)
		return -1;
	chunk = stacks_n >> STACKS_CHUNK_SHIFT;
	if (!stacks_dir[chunk]) {
		stacks_dir[chunk] = arena_map(STACKS_CHUNK * sizeof(struct stacks_rec *));
		if (!stacks_dir[chunk])
			return -1;
	}
	r = arena_alloc(&stacks_arena, sizeof *r + depth * sizeof *frames);
	if (!r)
		return -1;
	r->hash = h;
	r->depth = depth;
	r->flags = flags;
	memcpy(r->frames, frames, depth * sizeof *frames);
	i = stacks_n;
	stacks_dir[chunk][i & (STACKS_CHUNK - 1)] = r;
	r->next = stacks_buckets[h & (stacks_nbuckets - 1)];
	stacks_buckets[h & (stacks_nbuckets - 1)] = i;
	__atomic_store_n(&stacks_n, i + 1, __ATOMIC_RELEASE);
	return i;
}

void stacks_reset(void)
{
	/* The directory chunks stay mapped (they are reused); records go. */
	arena_release(&stacks_arena);
	if (stacks_nbuckets)
		memset(stacks_buckets, 0xff, (size_t)stacks_nbuckets * sizeof *stacks_buckets);
	__atomic_store_n(&stacks_n, 0, __ATOMIC_RELEASE);
}
