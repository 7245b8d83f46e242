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
 * quarter) of the heap.
 *
 * Objects 8 past a multiple of 16 (glibc never returns one; tcmalloc,
 * jemalloc and mimalloc do, for 1..8 bytes, 8 apart) have a second
 * shadow of their own, the odd one: the same layout with 16-byte
 * granules, whose leaves are mapped only where such objects start (where
 * they do, both shadows cost up to half the heap).  It is not in the
 * thread's last-leaf cache: a walk through its directory each time.  A
 * pointer that is not 8-aligned is not recorded: its free counts as
 * unknown.
 *
 * Nothing here allocates (leaves come from mmap).  The hot path is inline
 * (below); addrmap.c owns the directory and maps leaves.
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
 * Inline: the hot path is a few loads and stores.  The slot layout is
 * described in addrmap.c, which owns the directory and adds leaves.
 */
#define ADDRMAP_ADDR_BITS 48  /* user addresses lie below 2^48 */
#define ADDRMAP_LEAF_SHIFT 22 /* a leaf shadows 4 MiB */
#define ADDRMAP_MID_BITS 13
#define ADDRMAP_TOP_BITS (ADDRMAP_ADDR_BITS - ADDRMAP_LEAF_SHIFT - ADDRMAP_MID_BITS)
#define ADDRMAP_CONT 0x80000000u /* a size word: "not an object" */
#define ADDRMAP_HALF 0x40000000u /* starts in its 32-byte granule's 2nd half */
#define ADDRMAP_SMALL 255u       /* sizes below it live in the slot itself */
/* In an object's second size word (sizes are below 2^40: its bits from 9
 * up are free): the sampled monitor counted it one time more than its
 * weight's whole part (sample.h). */
#define ADDRMAP_UP 0x20000000u
#define ADDRMAP_SIZE_HI(w) ((w) & ~(ADDRMAP_CONT | ADDRMAP_UP))

extern uint32_t **addrmap_top[1u << ADDRMAP_TOP_BITS] __attribute__((visibility("hidden")));
/* The odd shadow's directory: objects 8 past a multiple of 16. */
extern uint32_t **addrmap_odd[1u << ADDRMAP_TOP_BITS] __attribute__((visibility("hidden")));
#define ADDRMAP_ODD_SHIFT 4 /* the odd shadow's granule: 16 bytes, whatever the allocator */
extern unsigned addrmap_shift __attribute__((visibility("hidden"))); /* log2 granule */
/* Slots per leaf - 1, and 16 with 32-byte granules (else 0): set once. */
extern uint64_t addrmap_mask __attribute__((visibility("hidden")));
extern uint32_t addrmap_halfbit __attribute__((visibility("hidden")));
/* Per thread: the number + 1 of the leaf of the last slot looked up (of
 * a recordable address: below 2^48), and that leaf's address less the
 * slot number of its first granule (times 4), so a slot in it is one
 * shift and one add away.  One thread variable: one look-up of its place. */
struct addrmap_last {
	uint64_t k;
	uintptr_t base;
	/* Not the map's: the sampled monitor's last sample (monitor.h's
	 * mon_sample_last), here so that its free path looks up one thread
	 * variable, not two. */
	uintptr_t sample_last;
};
extern __thread struct addrmap_last addrmap_last __attribute__((visibility("hidden")));

/* p's slot, if p is 16-aligned and in this thread's last leaf (then p is
 * recordable and not the odd shadow's: the leaf's k is below 2^26);
 * else NULL, and the whole look-up decides. */
static inline __attribute__((always_inline)) uint32_t *addrmap_last_slot(uintptr_t p)
{
	if (__builtin_expect(((uint64_t)p & 15) == 0 &&
			     addrmap_last.k == ((uint64_t)p >> ADDRMAP_LEAF_SHIFT) + 1, 1))
		return (uint32_t *)(addrmap_last.base + ((uint64_t)p >> addrmap_shift) * 4);
	return NULL;
}
/* Map leaf number k (p >> ADDRMAP_LEAF_SHIFT); NULL if out of memory or
 * the lock that adds leaves could not be had (lock.h). */
__attribute__((noinline)) uint32_t *addrmap_leaf_add(uint64_t k);
/* p's slot in the odd shadow (p 8 past a multiple of 16), as addrmap_slot. */
__attribute__((noinline)) uint32_t *addrmap_odd_slot(uintptr_t p, int create);

/*
 * The fine shadow (addrmap.c): with 32-byte granules, an object of 16
 * bytes or less that the monitor's language paths record (an interpreter's
 * process: pymalloc's 16-byte blocks are 16 apart, and two live ones
 * start in one granule) goes there when it starts in a granule's second
 * half; its take is tried when the main shadow has no such object.  The
 * C path never looks at it.
 */
extern uint32_t **addrmap_fine[1u << ADDRMAP_TOP_BITS] __attribute__((visibility("hidden")));
static inline int addrmap_fine_for(uintptr_t p, uint64_t size)
{
	return addrmap_halfbit && ((uint64_t)p & 24) == 16 && size <= 16 &&
	       !((uint64_t)p >> ADDRMAP_ADDR_BITS);
}
/* Record p (addrmap_fine_for(p, size)) in the fine shadow: 0, or -1 when
 * memory for it cannot be mapped. */
int addrmap_put_fine(uintptr_t p, uint32_t idx, uint64_t size);
/* Remove p from the fine shadow: 1 and its index and size if it was
 * there, else 0. */
int addrmap_take_fine(uintptr_t p, uint32_t *idx, uint64_t *size);

static inline uint64_t addrmap_leaf_slots(void)
{
	return 1ull << (ADDRMAP_LEAF_SHIFT - addrmap_shift);
}

/* p's slot (p recordable); NULL if its leaf is absent and not create, or
 * cannot be mapped. */
static inline __attribute__((always_inline)) uint32_t *addrmap_slot(uintptr_t p, int create)
{
	uint64_t k = (uint64_t)p >> ADDRMAP_LEAF_SHIFT;
	uint32_t **mid, *leaf = NULL;

	if (__builtin_expect((uint64_t)p & 8, 0))
		return addrmap_odd_slot(p, create);
	/* This thread's last leaf: no walk through the directory (leaves
	 * never move; the key is k + 1 so that 0 means none). */
	if (__builtin_expect(addrmap_last.k == k + 1, 1))
		return (uint32_t *)(addrmap_last.base + ((uint64_t)p >> addrmap_shift) * 4);
	mid = __atomic_load_n(&addrmap_top[k >> ADDRMAP_MID_BITS], __ATOMIC_ACQUIRE);
	if (__builtin_expect(mid != NULL, 1))
		leaf = __atomic_load_n(&mid[k & ((1u << ADDRMAP_MID_BITS) - 1)], __ATOMIC_ACQUIRE);
	if (__builtin_expect(!leaf, 0) && (!create || !(leaf = addrmap_leaf_add(k))))
		return NULL;
	addrmap_last.k = k + 1;
	addrmap_last.base = (uintptr_t)leaf - (k << (ADDRMAP_LEAF_SHIFT - addrmap_shift)) * 4;
	return leaf + (((uint64_t)p >> addrmap_shift) & addrmap_mask);
}

/* 8-aligned (16 but for the odd shadow's objects) and a user address. */
static inline int addrmap_recordable(uintptr_t p)
{
	return !(((uint64_t)p & 7) | ((uint64_t)p >> ADDRMAP_ADDR_BITS));
}

/* Which half of its 32-byte granule p starts in (0 with 16-byte granules). */
static inline uint32_t addrmap_half(uintptr_t p)
{
	return ((uint32_t)p & addrmap_halfbit) << 26; /* bit 4 -> ADDRMAP_HALF */
}

/*
 * Record p with its stack index (< 2^ADDRMAP_IDX_BITS - 1: the monitor
 * asserts that the stack table stays below that) and size,
 * replacing what was there.  0 (recorded, or p not recordable), or -1 when
 * memory for the shadow cannot be mapped.
 */
static inline __attribute__((always_inline)) int addrmap_put(uintptr_t p, uint32_t idx, uint64_t size)
{
	uint32_t *s = addrmap_last_slot(p);

	if (__builtin_expect(!s, 0)) {
		if (!addrmap_recordable(p))
			return 0;
		if (!(s = addrmap_slot(p, 1)))
			return -1;
	}
	if (size < ADDRMAP_SMALL) {
		s[0] = addrmap_half(p) | (idx + 1) << 8 | (uint32_t)size;
	} else {
		s[1] = ADDRMAP_CONT | (uint32_t)(size & 0x7fffffffu);
		s[2] = ADDRMAP_CONT | (uint32_t)(size >> 31);
		s[0] = addrmap_half(p) | (idx + 1) << 8 | ADDRMAP_SMALL;
	}
	return 0;
}

/* Remove p: 1 and its index and size if it was there, else 0. */
static inline __attribute__((always_inline)) int addrmap_take(uintptr_t p, uint32_t *idx, uint64_t *size)
{
	uint32_t *s = addrmap_last_slot(p), v;

	if (__builtin_expect(!s, 0) && (!addrmap_recordable(p) || !(s = addrmap_slot(p, 0))))
		return 0;
	v = s[0];
	/* Empty, or the size word of a live object: p is not one of ours (a
	 * pointer into an object, or from an allocator we did not see). */
	if (!v || (v & ADDRMAP_CONT) || (v & ADDRMAP_HALF) != addrmap_half(p))
		return 0;
	s[0] = 0;
	*idx = ((v & ~ADDRMAP_HALF) >> 8) - 1;
	if ((v & 0xff) < ADDRMAP_SMALL)
		*size = v & 0xff;
	else
		*size = (uint64_t)(s[1] & ~ADDRMAP_CONT) | (uint64_t)ADDRMAP_SIZE_HI(s[2]) << 31;
	return 1;
}

/*
 * addrmap_take for the sampled monitor's every free, most of them of
 * objects never in the map: its leaf is mapped if absent (a look-up of
 * an absent leaf walks the directory; a mapped one is the thread's last,
 * one compare away), and reading it maps no memory (the zero page).
 */
static inline __attribute__((always_inline)) int addrmap_take_sampled(uintptr_t p, uint32_t *idx,
								       uint64_t *size, int *up)
{
	uint32_t *s, v;

	if (!addrmap_recordable(p) || !(s = addrmap_slot(p, 1)))
		return 0;
	v = s[0];
	if (__builtin_expect(!v, 1) || (v & ADDRMAP_CONT) || (v & ADDRMAP_HALF) != addrmap_half(p))
		return 0;
	s[0] = 0;
	*idx = ((v & ~ADDRMAP_HALF) >> 8) - 1;
	*up = 0;
	if ((v & 0xff) < ADDRMAP_SMALL) {
		*size = v & 0xff;
	} else {
		*size = (uint64_t)(s[1] & ~ADDRMAP_CONT) | (uint64_t)ADDRMAP_SIZE_HI(s[2]) << 31;
		*up = (s[2] & ADDRMAP_UP) != 0;
	}
	return 1;
}

/*
 * The sampled monitor: p, just recorded (255 bytes or more: its size
 * words), counts one time more than its weight's whole part; given back
 * by addrmap_take_sampled's *up.
 */
static inline void addrmap_set_up(uintptr_t p)
{
	uint32_t *s;

	if (addrmap_recordable(p) && (s = addrmap_slot(p, 0)) && s[0] && !(s[0] & ADDRMAP_CONT) &&
	    (s[0] & 0xff) == ADDRMAP_SMALL && (s[0] & ADDRMAP_HALF) == addrmap_half(p))
		s[2] |= ADDRMAP_UP;
}

/*
 * Every object in the map, in address order: fn(ctx, p, index, size).
 * For the leak scan at exit (leakscan.c).  Reads the shadow as it is:
 * while other threads allocate and free, an object may be missed or seen
 * twice, and a size read half-way through a put is wrong (the caller
 * bounds each object by the next).  Every slot of every mapped leaf is
 * read (pages never touched read as the zero page: time, no memory).  0,
 * or -1 when fn asked to stop (returned non-zero).
 */
int addrmap_each(int (*fn)(void *ctx, uintptr_t p, uint32_t idx, uint64_t size), void *ctx);

/* The lock that adds leaves (fork: held across it, reset in the child);
 * 0, or -1: not taken (lock.h). */
int addrmap_lock_all(void);
void addrmap_unlock_all(void);
void addrmap_lock_reinit(void);

#endif
