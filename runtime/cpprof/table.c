/*
 * table.c - owns the sampler's distinct-stack table (tab_*).
 *
 * An open-addressing hash table of 32-bit slots, each 0 or the offset (in
 * 8-byte words) of an entry in a bump-allocated region.  Adding a sample:
 * hash the stack and thread, probe; an empty slot gets a new entry, filled
 * *before* it is published with a compare-and-swap (release), so a reader
 * that sees the offset (acquire) sees the whole entry; a lost race leaves
 * the entry unused (a few words) and goes on probing from the winner.  Hits
 * are atomic adds.  No locks, no allocation after tab_init: safe in signal
 * handlers, and reentrant (a handler that interrupted tab_add in the same
 * thread works on other words, or on the same ones atomically).
 */
#include <string.h>

#include "format.h"
#include "keep.h"
#include "langname.h"
#include "table.h"

#define TAB_WORDS (64ull << 20)         /* entry region: 512 MiB reserved */
#define TAB_PROBES 4096

static uint32_t *tab_slot;
static uint64_t *tab_mem;
static uint64_t tab_used = 1; /* word 0 is never an entry: offset 0 = empty */
static uint64_t tab_n, tab_lost;
static int tab_nres;
static struct tab_keep tab_keep_none, *tab_k = &tab_keep_none;

int tab_init(int nres)
{
	struct tab_keep *k;

	tab_nres = nres;
	tab_slot = keep_reserve(TAB_SLOTS * sizeof(uint32_t));
	tab_mem = keep_reserve(TAB_WORDS * sizeof(uint64_t));
	if (!tab_slot || !tab_mem)
		return -1;
	if (keep_has(tab_slot) && keep_has(tab_mem) && (k = keep_map(sizeof *k)) && keep_has(k)) {
		k->slot = (uint64_t)(uintptr_t)tab_slot;
		k->mem = (uint64_t)(uintptr_t)tab_mem;
		k->words = TAB_WORDS;
		k->nres = nres;
		tab_k = k;
		keep_set_root(k);
		langname_keep_at(&k->lang);
	}
	return 0;
}

int tab_reset(void)
{
	keep_unmap(tab_slot, TAB_SLOTS * sizeof(uint32_t));
	keep_unmap(tab_mem, TAB_WORDS * sizeof(uint64_t));
	tab_used = 1;
	tab_n = tab_lost = 0;
	tab_k = &tab_keep_none;
	return tab_init(tab_nres);
}

/* Samples lost to a full table: counted, and mirrored in the keep. */
static void lose(uint64_t hits)
{
	__atomic_store_n(&tab_k->lost, __atomic_add_fetch(&tab_lost, hits, __ATOMIC_RELAXED),
			 __ATOMIC_RELAXED);
}

static uint64_t hash(const uint64_t *f, int depth, uint32_t flags, uint32_t tid)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ ((uint64_t)tid << 32 | flags << 16 | (uint32_t)depth);

	for (int i = 0; i < depth; i++) {
		h ^= f[i];
		h *= 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	h ^= h >> 29;
	return h | 1; /* never 0 */
}

static int same(const struct tab_ent *e, uint64_t h, const uint64_t *f, int depth,
		uint32_t flags, uint32_t tid)
{
	return e->hash == h && e->tid == tid && e->depth == depth && e->flags == flags &&
	       memcmp(e->c + tab_nres, f, (size_t)depth * sizeof(*f)) == 0;
}

void tab_add(const uint64_t *frames, int depth, uint32_t flags, uint32_t tid, int col,
	     uint64_t hits)
{
	uint64_t h = hash(frames, depth, flags, tid), words, off = 0;
	uint32_t i = (uint32_t)h & (TAB_SLOTS - 1);

	if (!tab_slot || depth < 0 || depth > FORMAT_MAX_DEPTH)
		return;
	words = 2 + (uint64_t)tab_nres + (uint64_t)depth;
	for (int probe = 0; probe < TAB_PROBES; probe++, i = (i + 1) & (TAB_SLOTS - 1)) {
		uint32_t s = __atomic_load_n(&tab_slot[i], __ATOMIC_ACQUIRE);
		struct tab_ent *e;

		if (!s) {
			if (!off) {
				off = __atomic_fetch_add(&tab_used, words, __ATOMIC_RELAXED);
				if (off + words > TAB_WORDS || off + words > UINT32_MAX) {
					lose(hits);
					return;
				}
				e = (struct tab_ent *)(tab_mem + off);
				e->hash = h;
				e->tid = tid;
				e->depth = (uint16_t)depth;
				e->flags = (uint16_t)flags;
				memset(e->c, 0, (size_t)tab_nres * sizeof(uint64_t));
				memcpy(e->c + tab_nres, frames, (size_t)depth * sizeof(*frames));
			}
			if (__atomic_compare_exchange_n(&tab_slot[i], &s, (uint32_t)off, 0,
							__ATOMIC_RELEASE, __ATOMIC_ACQUIRE)) {
				e = (struct tab_ent *)(tab_mem + off);
				__atomic_fetch_add(&e->c[col], hits, __ATOMIC_RELAXED);
				__atomic_fetch_add(&tab_n, 1, __ATOMIC_RELAXED);
				return;
			}
			/* Lost the race: s is the winner's entry; compare it. */
		}
		e = (struct tab_ent *)(tab_mem + s);
		if (same(e, h, frames, depth, flags, tid)) {
			__atomic_fetch_add(&e->c[col], hits, __ATOMIC_RELAXED);
			return;
		}
	}
	lose(hits);
}

uint64_t tab_count(void)
{
	return __atomic_load_n(&tab_n, __ATOMIC_ACQUIRE);
}

uint64_t tab_slots(void)
{
	return tab_slot ? TAB_SLOTS : 0;
}

const struct tab_ent *tab_get(uint64_t i)
{
	uint32_t s = __atomic_load_n(&tab_slot[i], __ATOMIC_ACQUIRE);
	return s ? (const struct tab_ent *)(tab_mem + s) : NULL;
}

uint64_t tab_dropped(void)
{
	return __atomic_load_n(&tab_lost, __ATOMIC_RELAXED);
}
