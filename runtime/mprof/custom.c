/*
 * custom.c - owns the map of objects a program reports itself and the
 * category names (custom.h).  Open addressing on the address, linear
 * probing, tombstones; doubled (rehashed into a new mapping) when live
 * entries and tombstones fill half of it, so a probe stays short.  An entry
 * is the address and one word holding the stack index (22 bits) above the
 * size (40 bits: the monitor drops larger ones, MON_SIZE_BITS).
 */
#include "custom.h"
#include "keep.h"

#include <string.h>

#include "arena.h"
#include "lock.h"

#define EMPTY 0u
#define GONE 1u /* a tombstone: addresses 0 and 1 are never objects */
#define SIZE_BITS 40

struct slot {
	uintptr_t key;
	uint64_t val; /* idx << SIZE_BITS | size */
};

static struct lock custom_lk = LOCK_INIT;
static struct slot *tab;
static size_t cap, used; /* used: live entries and tombstones */

static char names[CUSTOM_MAX_CATEGORIES + 1][64];
static char keys[CUSTOM_MAX_CATEGORIES + 1][16];
static int ncat; /* published with a release store after the name */

static size_t home(uintptr_t p, size_t mask)
{
	return (size_t)(((uint64_t)p * 0x9e3779b97f4a7c15ull) >> 24) & mask;
}

/* Rehash into a table twice as big as the live entries need. */
static int grow(void)
{
	size_t ncap = cap ? cap : 1024, live = 0;
	struct slot *n;

	for (size_t i = 0; i < cap; i++)
		live += tab[i].key > GONE;
	while (4 * (live + 1) > ncap)
		ncap *= 2;
	n = arena_map(ncap * sizeof(*n));
	if (!n)
		return -1;
	for (size_t i = 0; i < cap; i++) {
		size_t j;
		if (tab[i].key <= GONE)
			continue;
		for (j = home(tab[i].key, ncap - 1); n[j].key != EMPTY; j = (j + 1) & (ncap - 1))
			;
		n[j] = tab[i];
	}
	if (tab)
		arena_unmap(tab, cap * sizeof(*tab));
	tab = n;
	cap = ncap;
	used = live;
	return 0;
}

/* The slot holding p, or (if absent) -1 with *free_at the first reusable
 * slot of its probe. */
static long find(uintptr_t p, size_t *free_at)
{
	size_t j = home(p, cap - 1), reuse = SIZE_MAX;

	for (;; j = (j + 1) & (cap - 1)) {
		if (tab[j].key == p)
			return (long)j;
		if (tab[j].key == GONE && reuse == SIZE_MAX)
			reuse = j;
		if (tab[j].key == EMPTY) {
			*free_at = reuse != SIZE_MAX ? reuse : j;
			return -1;
		}
	}
}

int custom_put(uintptr_t p, uint32_t idx, uint64_t size)
{
	size_t at = 0;
	long j;

	if (p <= GONE || lock_take(&custom_lk, "the custom allocation map") < 0)
		return -1;
	if ((2 * (used + 1) > cap) && grow() < 0) {
		lock_give(&custom_lk);
		return -1;
	}
	j = find(p, &at);
	if (j < 0) {
		if (tab[at].key == EMPTY)
			used++;
		tab[at].key = p;
		j = (long)at;
	}
	tab[j].val = (uint64_t)idx << SIZE_BITS | (size & ((1ull << SIZE_BITS) - 1));
	lock_give(&custom_lk);
	return 0;
}

int custom_take(uintptr_t p, uint32_t *idx, uint64_t *size)
{
	size_t at;
	long j;

	if (p <= GONE || lock_take(&custom_lk, "the custom allocation map") < 0)
		return 0;
	if (!cap || (j = find(p, &at)) < 0) {
		lock_give(&custom_lk);
		return 0;
	}
	*idx = (uint32_t)(tab[j].val >> SIZE_BITS);
	*size = tab[j].val & ((1ull << SIZE_BITS) - 1);
	tab[j].key = GONE;
	lock_give(&custom_lk);
	return 1;
}

int custom_each(int (*fn)(void *ctx, uintptr_t p, uint32_t idx, uint64_t size), void *ctx)
{
	int rc = 0;

	if (lock_take(&custom_lk, "the custom allocation map") < 0)
		return -1;
	for (size_t i = 0; i < cap && rc == 0; i++)
		if (tab[i].key > GONE)
			rc = fn(ctx, tab[i].key, (uint32_t)(tab[i].val >> SIZE_BITS),
				tab[i].val & ((1ull << SIZE_BITS) - 1)) ? -1 : 0;
	lock_give(&custom_lk);
	return rc;
}

int custom_lock(void)
{
	return lock_take(&custom_lk, "the custom allocation map");
}

void custom_unlock(void)
{
	lock_give(&custom_lk);
}

void custom_lock_reinit(void)
{
	lock_reinit(&custom_lk);
}

int custom_category(const char *name)
{
	int n, id = 0;

	if (!name || !*name || lock_take(&custom_lk, "the custom allocation map") < 0)
		return 0;
	n = ncat;
	for (int i = 1; i <= n && !id; i++)
		if (!strncmp(names[i], name, sizeof names[i] - 1) &&
		    strlen(name) <= sizeof names[i] - 1)
			id = i;
	if (!id && n < CUSTOM_MAX_CATEGORIES) {
		id = n + 1;
		/* A name is printed in tables and written in the file:
		 * control characters become '?'. */
		for (size_t k = 0; k < sizeof names[id] - 1 && name[k]; k++)
			names[id][k] = (unsigned char)name[k] < 0x20 || name[k] == 0x7f ? '?' : name[k];
		char *k = keys[id] + 9;
		memcpy(keys[id], "category.", 9);
		if (id >= 100)
			*k++ = (char)('0' + id / 100);
		if (id >= 10)
			*k++ = (char)('0' + id / 10 % 10);
		*k = (char)('0' + id % 10);
		__atomic_store_n(&ncat, id, __ATOMIC_RELEASE);
		keep_info(keys[id], names[id]); /* a file the launcher writes names it too */
	}
	lock_give(&custom_lk);
	return id;
}

int custom_category_ok(int c)
{
	return c >= 0 && c <= __atomic_load_n(&ncat, __ATOMIC_ACQUIRE);
}

size_t custom_info(const char *kv[][2], size_t max)
{
	size_t n = (size_t)__atomic_load_n(&ncat, __ATOMIC_ACQUIRE);

	if (n > max)
		n = max;
	for (size_t i = 0; i < n; i++) {
		kv[i][0] = keys[i + 1];
		kv[i][1] = names[i + 1];
	}
	return n;
}
