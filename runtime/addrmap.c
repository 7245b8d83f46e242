/*
 * addrmap.c - owns the address map (addrmap_*): a shadow of the address
 * space, 32 bits per granule, in leaves found through a two-level
 * directory.  Leaves and directory pages come from mmap, are published with
 * release stores and are never unmapped (a reader needs no lock), and only
 * pages where objects start are touched.
 *
 * The granule is 32 bytes over glibc's malloc, whose chunks are at least
 * 32 bytes apart (MINSIZE), so no two live objects start in one granule
 * and the shadow costs an eighth of the heap at most; 16 bytes over any
 * other allocator (a quarter).
 *
 * A slot:
 *   0                            no object starts here
 *   H | (index + 1) << 8 | size  an object of size < 255 (C clear, the
 *                                index field never 0)
 *   H | (index + 1) << 8 | 255   an object of 255 bytes or more; the next
 *                                two slots, which it owns, hold
 *                                C | size & 2^31-1 and C | size >> 31
 * C = bit 31: a size word, "not an object".  H = bit 30: with 32-byte
 * granules, the object starts in the granule's second half.  A leaf has
 * two slots more than it shadows, so an object in its last granule keeps
 * its size in the same leaf.
 */
#include <string.h>
#include <sys/mman.h>

#include "addrmap.h"
#include "arena.h"

#define ADDR_BITS 48  /* user addresses lie below 2^48 */
#define LEAF_SHIFT 22 /* a leaf shadows 4 MiB */
#define MID_BITS 13
#define TOP_BITS (ADDR_BITS - LEAF_SHIFT - MID_BITS) /* 13 */
#define CONT 0x80000000u
#define HALF 0x40000000u
#define SMALL_MAX 255u /* sizes below it live in the slot itself */

static uint32_t **addrmap_top[1u << TOP_BITS];
static int addrmap_leaf_lock; /* adding a directory page or a leaf */
static unsigned addrmap_shift = 4; /* log2 of the granule */

void addrmap_init(unsigned spacing)
{
	addrmap_shift = spacing >= 32 ? 5 : 4;
}

static inline uint64_t leaf_slots(void)
{
	return 1ull << (LEAF_SHIFT - addrmap_shift);
}

static void spin_lock(int *l)
{
	while (__atomic_exchange_n(l, 1, __ATOMIC_ACQUIRE))
		while (__atomic_load_n(l, __ATOMIC_RELAXED))
			__builtin_ia32_pause();
}

static void spin_unlock(int *l)
{
	__atomic_store_n(l, 0, __ATOMIC_RELEASE);
}

/* Add the leaf of leaf number k; NULL if out of memory. */
static __attribute__((noinline)) uint32_t *leaf_add(uint64_t k)
{
	uint32_t ***top = &addrmap_top[k >> MID_BITS], **mid, *leaf = NULL;

	spin_lock(&addrmap_leaf_lock);
	mid = *top;
	if (!mid && (mid = arena_map(sizeof(*mid) << MID_BITS)))
		__atomic_store_n(top, mid, __ATOMIC_RELEASE);
	if (mid && !(leaf = mid[k & ((1u << MID_BITS) - 1)]) &&
	    (leaf = arena_map((leaf_slots() + 2) * sizeof *leaf))) {
		/* Touched sparsely: small pages, whatever the THP policy. */
		madvise(leaf, (leaf_slots() + 2) * sizeof *leaf, MADV_NOHUGEPAGE);
		__atomic_store_n(&mid[k & ((1u << MID_BITS) - 1)], leaf, __ATOMIC_RELEASE);
	}
	spin_unlock(&addrmap_leaf_lock);
	return leaf;
}

/* p's slot (p recordable); NULL if its leaf is absent and not create, or
 * cannot be mapped. */
static inline uint32_t *slot(uintptr_t p, int create)
{
	uint64_t k = (uint64_t)p >> LEAF_SHIFT;
	uint32_t **mid = __atomic_load_n(&addrmap_top[k >> MID_BITS], __ATOMIC_ACQUIRE);
	uint32_t *leaf = NULL;

	if (__builtin_expect(mid != NULL, 1))
		leaf = __atomic_load_n(&mid[k & ((1u << MID_BITS) - 1)], __ATOMIC_ACQUIRE);
	if (__builtin_expect(!leaf, 0) && (!create || !(leaf = leaf_add(k))))
		return NULL;
	return leaf + (((uint64_t)p >> addrmap_shift) & (leaf_slots() - 1));
}

/* 16-aligned (glibc never returns less) and a user address. */
static inline int recordable(uintptr_t p)
{
	return !((uint64_t)p & 15) && !((uint64_t)p >> ADDR_BITS);
}

/* H for p: which half of its 32-byte granule (0 with 16-byte granules). */
static inline uint32_t half(uintptr_t p)
{
	return addrmap_shift == 5 && (p & 16) ? HALF : 0;
}

int addrmap_put(uintptr_t p, uint32_t idx, uint64_t size)
{
	uint32_t *s;

	if (!recordable(p) || idx + 1 >= 1u << ADDRMAP_IDX_BITS)
		return 0;
	if (!(s = slot(p, 1)))
		return -1;
	if (size < SMALL_MAX) {
		s[0] = half(p) | (idx + 1) << 8 | (uint32_t)size;
	} else {
		s[1] = CONT | (uint32_t)(size & 0x7fffffffu);
		s[2] = CONT | (uint32_t)(size >> 31);
		s[0] = half(p) | (idx + 1) << 8 | SMALL_MAX;
	}
	return 0;
}

int addrmap_take(uintptr_t p, uint32_t *idx, uint64_t *size)
{
	uint32_t *s, v;

	if (!recordable(p) || !(s = slot(p, 0)))
		return 0;
	v = s[0];
	/* Empty, or the size word of a live object: p is not one of ours (a
	 * pointer into an object, or from an allocator we did not see). */
	if (!v || (v & CONT) || (v & HALF) != half(p))
		return 0;
	s[0] = 0;
	*idx = ((v & ~HALF) >> 8) - 1;
	if ((v & 0xff) < SMALL_MAX)
		*size = v & 0xff;
	else
		*size = (uint64_t)(s[1] & ~CONT) | (uint64_t)(s[2] & ~CONT) << 31;
	return 1;
}

void addrmap_lock_all(void)
{
	spin_lock(&addrmap_leaf_lock);
}

void addrmap_unlock_all(void)
{
	spin_unlock(&addrmap_leaf_lock);
}

void addrmap_lock_reinit(void)
{
	addrmap_leaf_lock = 0;
}
