/*
 * stacks.c - owns the distinct-stack table (stacks_*): records in a bump
 * arena, an index -> record directory, and a lock-free open-addressing hash
 * table of (hash, index) slots.
 *
 * The directory is two-level (STACKS_DIR chunks of STACKS_CHUNK pointers)
 * so it never moves: a reader holding an index needs no lock to find the
 * record.  A slot is one 64-bit word, hash << 32 | (index + 1), 0 when
 * empty, written once with a release store after the record and its
 * directory entry, so a reader that sees the slot sees the record.  Slots
 * are never removed; the table is at most half full, so a probe for a
 * missing stack ends soon at an empty slot.  Growing builds the next
 * table under the lock and publishes it; an old table is not unmapped (a
 * reader may still be probing one) but its memory is given back: it reads
 * as zeros, an empty table, so a reader still in it misses and then finds
 * the stack under the lock (1e6 stacks: 16 MiB less).
 */
#include <string.h>

#include "arena.h"
#include "keep.h"
#include "lock.h"
#include "mkeep.h"
#include "lifetime.h"
#include "stacks.h"

#define STACKS_MIN_SLOTS 4096
_Static_assert(STACKS_DIR == MKEEP_DIR, "the keep mirrors the whole directory");

struct stacks_table {
	uint64_t mask; /* slots - 1 */
	uint64_t slots[];
};

static struct lock stacks_mutex = LOCK_INIT;
/* Records and the directory's chunks are in the keep (mkeep.h): the
 * launcher follows them; the hash table is only for lookups. */
static struct arena stacks_arena = { .map = keep_map, .unmap = keep_unmap };
static struct stacks_rec **stacks_dir[STACKS_DIR];
uint32_t stacks_n;
uint32_t stacks_first; /* the current profile's first index */
static struct stacks_table *stacks_tab; /* published with release stores */

int stacks_lock(void)
{
	return lock_take(&stacks_mutex, "the stack table");
}

void stacks_unlock(void)
{
	lock_give(&stacks_mutex);
}

void stacks_lock_reinit(void)
{
	lock_reinit(&stacks_mutex);
}

struct stacks_rec *stacks_get(uint32_t idx)
{
	struct stacks_rec **chunk =
		__atomic_load_n(&stacks_dir[idx >> STACKS_CHUNK_SHIFT], __ATOMIC_ACQUIRE);
	return __atomic_load_n(&chunk[idx & (STACKS_CHUNK - 1)], __ATOMIC_ACQUIRE);
}



/* Probe table t for the stack; its index, or -1.  *fill (NULL: frames
 * are filled) fills them before the first comparison, then is NULL. */
static int64_t find_fill(const struct stacks_table *t, const uint64_t *frames, uint32_t depth,
			 uint32_t flags, uint32_t h, void (**fill)(uint64_t *, int))
{
	uint64_t i, s;

	for (i = h & t->mask;; i = (i + 1) & t->mask) {
		s = __atomic_load_n(&t->slots[i], __ATOMIC_ACQUIRE);
		if (!s)
			return -1;
		if ((uint32_t)(s >> 32) != h)
			continue;
		if (*fill) {
			(*fill)((uint64_t *)frames, (int)depth);
			*fill = NULL;
		}
		if (stacks_same(stacks_get((uint32_t)s - 1), frames, depth, flags))
			return (int64_t)(uint32_t)s - 1;
	}
}


int64_t stacks_find_at(const uint64_t *frames, uint32_t depth, uint32_t flags, uint32_t h,
		       const struct stacks_pos *pos, int *seen)
{
	const struct stacks_table *t = __atomic_load_n(&stacks_tab, __ATOMIC_ACQUIRE);
	uint64_t i, s;

	if (!t)
		return -1;
	for (i = h & t->mask;; i = (i + 1) & t->mask) {
		s = __atomic_load_n(&t->slots[i], __ATOMIC_ACQUIRE);
		if (!s)
			return -1;
		if ((uint32_t)(s >> 32) != h)
			continue;
		if (seen)
			*seen = 1;
		if (stacks_same_at(stacks_get((uint32_t)s - 1), frames, depth, flags, pos))
			return (int64_t)(uint32_t)s - 1;
	}
}

static void put_slot(struct stacks_table *t, uint32_t h, uint32_t idx)
{
	uint64_t i;

	for (i = h & t->mask; t->slots[i]; i = (i + 1) & t->mask)
		;
	__atomic_store_n(&t->slots[i], (uint64_t)h << 32 | (idx + 1), __ATOMIC_RELEASE);
}

static size_t table_bytes(uint64_t nslots)
{
	return sizeof(struct stacks_table) + nslots * sizeof(uint64_t);
}

/* A table no longer published: its memory back, its pages left mapped. */
static void drop_table(struct stacks_table *t)
{
	if (t)
		arena_discard(t, table_bytes(t->mask + 1));
}

static struct stacks_table *new_table(uint64_t nslots)
{
	size_t bytes = table_bytes(nslots);
	struct stacks_table *t = arena_map(bytes);

	if (t) {
		/* A quarter filled at once, at random, by the rehash, and
		 * half before it grows: populated in one call (arena.h)
		 * rather than a read fault and a write fault a page. */
		arena_populate(t, bytes);
		t->mask = nslots - 1;
	}
	return t;
}

/* Under the lock: a table with room for one more stack. */
static struct stacks_table *room(void)
{
	struct stacks_table *t = stacks_tab, *nt;
	uint32_t i;

	if (t && (uint64_t)(stacks_n - stacks_first + 1) * 2 <= t->mask + 1)
		return t;
	nt = new_table(t ? (t->mask + 1) * 2 : STACKS_MIN_SLOTS);
	if (!nt)
		return NULL;
	for (i = stacks_first; i < stacks_n; i++)
		put_slot(nt, stacks_get(i)->hash, i);
	__atomic_store_n(&stacks_tab, nt, __ATOMIC_RELEASE);
	drop_table(t);
	return nt;
}

const uint64_t *stacks_frames(const struct stacks_rec *r, uint64_t *buf)
{
	uint32_t i = 0, j, depth = r->depth;

	for (j = 0;;) {
		for (; j < r->nown; j++)
			buf[i++] = r->frames[j];
		if (i == depth)
			return buf;
		j = r->pbase + (j - r->nown);
		r = r->parent;
	}
}

#define SHARE_MIN 4 /* outer frames worth a parent reference */

static uint64_t stacks_tmp[4096]; /* under the lock: hint's frames */

/*
 * Under the lock: how the new stack (frames, depth) shares hint's outer
 * frames.  Sets *k (frames shared, 0 for none), *parent and *pbase (the
 * record and offset where the first shared frame is kept as its own).
 */
static void share(const uint64_t *frames, uint32_t depth, const struct stacks_rec *hint,
		  uint32_t *k, const struct stacks_rec **parent, uint32_t *pbase)
{
	const uint64_t *hf;
	uint32_t n = 0, off;

	*k = 0;
	if (!hint || hint->depth > sizeof stacks_tmp / sizeof stacks_tmp[0])
		return;
	hf = stacks_frames(hint, stacks_tmp);
	while (n < depth && n < hint->depth && hf[hint->depth - 1 - n] == frames[depth - 1 - n])
		n++;
	if (n < SHARE_MIN)
		return;
	/* Walk to the record that keeps hint's frame hint->depth - n. */
	off = hint->depth - n;
	while (off >= hint->nown) {
		off = hint->pbase + (off - hint->nown);
		hint = hint->parent;
	}
	*k = n;
	*parent = hint;
	*pbase = off;
}

static int64_t intern(const uint64_t *frames, uint32_t depth, uint32_t flags, uint32_t h,
		      const struct stacks_rec *hint, const struct stacks_pos *pos,
		      void (*fill)(uint64_t *, int))
{
	struct stacks_table *t = __atomic_load_n(&stacks_tab, __ATOMIC_ACQUIRE);
	const struct stacks_rec *parent = NULL;
	struct stacks_rec **chunk;
	struct stacks_rec *r;
	uint32_t i, k, pbase = 0;
	int64_t found;

	if (t && (found = find_fill(t, frames, depth, flags, h, &fill)) >= 0)
		return found;
	if (stacks_lock() < 0)
		return -1;
	if ((t = room()) == NULL)
		goto fail;
	if ((found = find_fill(t, frames, depth, flags, h, &fill)) >= 0) {
		stacks_unlock();
		return found;
	}
	if (stacks_n >= LT_IDX0) /* above: lifetime samples' indices */
		goto fail;
	chunk = stacks_dir[stacks_n >> STACKS_CHUNK_SHIFT];
	if (!chunk) {
		chunk = keep_map(STACKS_CHUNK * sizeof(struct stacks_rec *));
		if (!chunk)
			goto fail;
		__atomic_store_n(&stacks_dir[stacks_n >> STACKS_CHUNK_SHIFT], chunk,
				 __ATOMIC_RELEASE);
		mon_keep->stacks_dir[stacks_n >> STACKS_CHUNK_SHIFT] = (uint64_t)(uintptr_t)chunk;
	}
	if (pos && pos->at < depth && depth - pos->at >= SHARE_MIN) {
		/* frames[pos->at..] are pos->rec's from pos->off on (the
		 * unwinder took them from the walk that made it): no need to
		 * lay hint's frames out and compare them. */
		k = depth - pos->at;
		parent = pos->rec;
		pbase = pos->off;
	} else {
		if (fill)
			fill((uint64_t *)frames, (int)depth);
		share(frames, depth, hint, &k, &parent, &pbase);
	}
	r = arena_alloc(&stacks_arena, sizeof *r + (depth - k) * sizeof *frames);
	if (!r)
		goto fail;
	r->hash = h;
	r->depth = depth;
	r->flags = flags;
	r->nown = depth - k;
	r->parent = k ? parent : NULL;
	r->pbase = pbase;
	memcpy(r->frames, frames, (depth - k) * sizeof *frames);
	i = stacks_n;
	r->idx = i;
	__atomic_store_n(&chunk[i & (STACKS_CHUNK - 1)], r, __ATOMIC_RELEASE);
	put_slot(t, h, i);
	__atomic_store_n(&stacks_n, i + 1, __ATOMIC_RELEASE);
	__atomic_store_n(&mon_keep->stacks_n, i + 1, __ATOMIC_RELEASE);
	stacks_unlock();
	return i;
fail:
	stacks_unlock();
	return -1;
}

int64_t stacks_intern(const uint64_t *frames, uint32_t depth, uint32_t flags, uint32_t h,
		      const struct stacks_rec *hint, const struct stacks_pos *pos)
{
	return intern(frames, depth, flags, h, hint, pos, NULL);
}

int64_t stacks_intern_lazy(uint64_t *frames, uint32_t depth, uint32_t flags, uint32_t h,
			   const struct stacks_rec *hint, const struct stacks_pos *pos,
			   void (*fill)(uint64_t *, int))
{
	return intern(frames, depth, flags, h, hint, pos, fill);
}

void stacks_reset(void)
{
	/*
	 * A reader may still hold a record or a table: leave them mapped and
	 * start over in fresh memory.  Indices go on from where they were, so
	 * an index from before (in the address map, or computed by a thread
	 * that raced with the restart) is below stacks_base(): never mistaken
	 * for a stack of the new profile.
	 */
	struct stacks_table *t = stacks_tab;

	stacks_arena.head = NULL;
	stacks_arena.cur = stacks_arena.end = NULL;
	__atomic_store_n(&stacks_tab, NULL, __ATOMIC_RELEASE);
	drop_table(t);
	__atomic_store_n(&stacks_first, stacks_n, __ATOMIC_RELEASE);
	mon_keep->stacks_first = stacks_n;
}
