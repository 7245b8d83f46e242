/*
 * addrmap.c - owns the address map (addrmap_*): a shadow of the address
 * space, 32 bits per granule, in leaves found through a two-level
 * directory.  Leaves and directory pages come from mmap, are published with
 * release stores and are never unmapped (a reader needs no lock), and only
 * pages where objects start are touched.  addrmap_each walks every leaf in
 * address order, for the leak scan at exit.
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
 *
 * The odd shadow (objects 8 past a multiple of 16: other allocators'
 * smallest) has the same slots, leaves and directory, with 16-byte
 * granules: two such objects never start in one.  It is looked up only for
 * such an address, and its leaves are mapped only where one starts.
 *
 * The fine shadow (addrmap.h) is the same again for the language paths'
 * small objects in a 32-byte granule's second half (pymalloc's 16-byte
 * blocks, 16 apart); one slot an object, H unused.
 */
#include <string.h>
#include <sys/mman.h>

#include "addrmap.h"
#include "arena.h"
#include "lock.h"
#include "monitor.h"

static struct lock addrmap_leaf_lock = LOCK_INIT; /* adding a directory page or a leaf */
uint32_t **addrmap_top[1u << ADDRMAP_TOP_BITS];
uint32_t **addrmap_odd[1u << ADDRMAP_TOP_BITS];
uint32_t **addrmap_fine[1u << ADDRMAP_TOP_BITS];
unsigned addrmap_shift = 4;
uint64_t addrmap_mask = (1ull << (ADDRMAP_LEAF_SHIFT - 4)) - 1;
uint32_t addrmap_halfbit;
__thread struct addrmap_last addrmap_last;

void addrmap_init(unsigned spacing)
{
	addrmap_shift = spacing >= 32 ? 5 : 4;
	addrmap_mask = addrmap_leaf_slots() - 1;
	addrmap_halfbit = spacing >= 32 ? 16 : 0;
}

/* Leaf k of the shadow whose directory is dir, of nslots slots (and two). */
static uint32_t *leaf_add(uint32_t **dir[], uint64_t k, uint64_t nslots)
{
	uint32_t ***top = &dir[k >> ADDRMAP_MID_BITS], **mid, *leaf = NULL;
	size_t bytes = (nslots + 2) * sizeof *leaf;

	if (lock_take(&addrmap_leaf_lock, "the address map") < 0)
		return NULL;
	mid = *top;
	if (!mid && (mid = arena_map(sizeof(*mid) << ADDRMAP_MID_BITS)))
		__atomic_store_n(top, mid, __ATOMIC_RELEASE);
	if (mid && !(leaf = mid[k & ((1u << ADDRMAP_MID_BITS) - 1)]) && (leaf = arena_map(bytes))) {
		/* Touched sparsely: small pages, whatever the THP policy. */
		madvise(leaf, bytes, MADV_NOHUGEPAGE);
		__atomic_store_n(&mid[k & ((1u << ADDRMAP_MID_BITS) - 1)], leaf, __ATOMIC_RELEASE);
	}
	lock_give(&addrmap_leaf_lock);
	return leaf;
}

uint32_t *addrmap_leaf_add(uint64_t k)
{
	MON_KEEP_ERRNO;
	return leaf_add(addrmap_top, k, addrmap_leaf_slots());
}

#define ODD_SLOTS (1ull << (ADDRMAP_LEAF_SHIFT - ADDRMAP_ODD_SHIFT))

uint32_t *addrmap_odd_slot(uintptr_t p, int create)
{
	MON_KEEP_ERRNO;
	uint64_t k = (uint64_t)p >> ADDRMAP_LEAF_SHIFT;
	uint32_t **mid = __atomic_load_n(&addrmap_odd[k >> ADDRMAP_MID_BITS], __ATOMIC_ACQUIRE);
	uint32_t *leaf = NULL;

	if (mid)
		leaf = __atomic_load_n(&mid[k & ((1u << ADDRMAP_MID_BITS) - 1)], __ATOMIC_ACQUIRE);
	if (!leaf && (!create || !(leaf = leaf_add(addrmap_odd, k, ODD_SLOTS))))
		return NULL;
	return leaf + (((uint64_t)p >> ADDRMAP_ODD_SHIFT) & (ODD_SLOTS - 1));
}

/* p's slot in the fine shadow (16-byte granules, one slot an object). */
static uint32_t *fine_slot(uintptr_t p, int create)
{
	uint64_t k = (uint64_t)p >> ADDRMAP_LEAF_SHIFT;
	uint32_t **mid = __atomic_load_n(&addrmap_fine[k >> ADDRMAP_MID_BITS], __ATOMIC_ACQUIRE);
	uint32_t *leaf = NULL;

	if (mid)
		leaf = __atomic_load_n(&mid[k & ((1u << ADDRMAP_MID_BITS) - 1)], __ATOMIC_ACQUIRE);
	if (!leaf && (!create || !(leaf = leaf_add(addrmap_fine, k, ODD_SLOTS))))
		return NULL;
	return leaf + (((uint64_t)p >> ADDRMAP_ODD_SHIFT) & (ODD_SLOTS - 1));
}

int addrmap_put_fine(uintptr_t p, uint32_t idx, uint64_t size)
{
	MON_KEEP_ERRNO;
	uint32_t *s = fine_slot(p, 1);

	if (!s)
		return -1;
	s[0] = (idx + 1) << 8 | (uint32_t)size;
	return 0;
}

int addrmap_take_fine(uintptr_t p, uint32_t *idx, uint64_t *size)
{
	MON_KEEP_ERRNO;
	uint32_t *s, v;

	if (!addrmap_fine_for(p, 0) || !(s = fine_slot(p, 0)) || !(v = s[0]))
		return 0;
	s[0] = 0;
	*idx = (v >> 8) - 1;
	*size = v & 0xff;
	return 1;
}

int addrmap_lock_all(void)
{
	return lock_take(&addrmap_leaf_lock, "the address map");
}

void addrmap_unlock_all(void)
{
	lock_give(&addrmap_leaf_lock);
}

void addrmap_lock_reinit(void)
{
	lock_reinit(&addrmap_leaf_lock);
}

/* A walk through the objects of one leaf, in address order. */
struct cursor {
	const uint32_t *s; /* the leaf's slots, or NULL: none */
	uint64_t i, n;     /* the next slot; the slots */
	unsigned shift;    /* log2 of its granule */
	uintptr_t base;    /* the address of its first granule (+ 8: odd) */
	int odd;           /* the odd shadow's: a slot is one granule, H unused */
	uintptr_t p;       /* the object found, its stack index and size */
	uint32_t idx;
	uint64_t size;
};

/* The cursor's next object into c->p, idx, size: 1, or 0 at its end. */
static int next_obj(struct cursor *c)
{
	const uint32_t *s = c->s;

	if (!s)
		return 0;
	for (; c->i < c->n; c->i++) {
		uint64_t i = c->i;
		uint32_t v = __atomic_load_n(&s[i], __ATOMIC_RELAXED);

		/* Most slots are empty: skip them two at a time. */
		if (!v) {
			if (!(i & 1) && i + 1 < c->n && !__atomic_load_n(&s[i + 1], __ATOMIC_RELAXED))
				c->i++;
			continue;
		}
		if (v & ADDRMAP_CONT)
			continue;
		if ((v & 0xff) < ADDRMAP_SMALL)
			c->size = v & 0xff;
		else
			c->size = (uint64_t)(__atomic_load_n(&s[i + 1], __ATOMIC_RELAXED) & ~ADDRMAP_CONT) |
				  (uint64_t)ADDRMAP_SIZE_HI(__atomic_load_n(&s[i + 2], __ATOMIC_RELAXED))
					  << 31;
		c->p = c->base + (uintptr_t)(i << c->shift) + (!c->odd && (v & ADDRMAP_HALF) ? 16 : 0);
		c->idx = ((v & ~ADDRMAP_HALF) >> 8) - 1;
		c->i++;
		return 1;
	}
	return 0;
}

/* The objects of leaf k (its slots s, o of the odd shadow, f of the fine
 * one; any may be NULL) in address order, as addrmap.h says. */
static int leaf_each(uint64_t k, const uint32_t *s, const uint32_t *o, const uint32_t *f,
		     int (*fn)(void *ctx, uintptr_t p, uint32_t idx, uint64_t size), void *ctx)
{
	uintptr_t base = (uintptr_t)(k << ADDRMAP_LEAF_SHIFT);
	struct cursor c[3] = { { s, 0, addrmap_leaf_slots(), addrmap_shift, base, 0, 0, 0, 0 },
			       { o, 0, ODD_SLOTS, ADDRMAP_ODD_SHIFT, base + 8, 1, 0, 0, 0 },
			       { f, 0, ODD_SLOTS, ADDRMAP_ODD_SHIFT, base, 1, 0, 0, 0 } };
	int has[3];

	for (int i = 0; i < 3; i++)
		has[i] = next_obj(&c[i]);
	for (;;) {
		int m = -1;

		for (int i = 0; i < 3; i++)
			if (has[i] && (m < 0 || c[i].p < c[m].p))
				m = i;
		if (m < 0)
			return 0;
		if (fn(ctx, c[m].p, c[m].idx, c[m].size))
			return -1;
		has[m] = next_obj(&c[m]);
	}
}

int addrmap_each(int (*fn)(void *ctx, uintptr_t p, uint32_t idx, uint64_t size), void *ctx)
{
	for (uint64_t t = 0; t < (1u << ADDRMAP_TOP_BITS); t++) {
		uint32_t **mid = __atomic_load_n(&addrmap_top[t], __ATOMIC_ACQUIRE);
		uint32_t **omid = __atomic_load_n(&addrmap_odd[t], __ATOMIC_ACQUIRE);
		uint32_t **fmid = __atomic_load_n(&addrmap_fine[t], __ATOMIC_ACQUIRE);

		if (!mid && !omid && !fmid)
			continue;
		for (uint64_t m = 0; m < (1u << ADDRMAP_MID_BITS); m++) {
			uint32_t *leaf = mid ? __atomic_load_n(&mid[m], __ATOMIC_ACQUIRE) : NULL;
			uint32_t *oleaf = omid ? __atomic_load_n(&omid[m], __ATOMIC_ACQUIRE) : NULL;
			uint32_t *fleaf = fmid ? __atomic_load_n(&fmid[m], __ATOMIC_ACQUIRE) : NULL;

			if ((leaf || oleaf || fleaf) &&
			    leaf_each(t << ADDRMAP_MID_BITS | m, leaf, oleaf, fleaf, fn, ctx) < 0)
				return -1;
		}
	}
	return 0;
}
