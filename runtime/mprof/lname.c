/*
 * lname.c - owns the names of a Lisp profile (lname_*): the interned
 * Lisp function names, the entry table of compiled Lisp functions, the
 * counters of how naming went, and their INFO entries (lname.h).
 *
 * Storage comes from mmap (arena.h), mapped when the first name comes:
 * a directory of name pointers, an open-addressing table of ids by name,
 * and the entry table.  An id's name is written whole before the count
 * that makes it visible is stored (release), so the writer reads without
 * the lock; the hash table is only probed under the lock.
 */
#include <pthread.h>
#include <string.h>

#include "arena.h"
#include "format.h"
#include "lname.h"
#include "lock.h"
#include "outfile.h"

#define SLOTS (2 * LNAME_MAX) /* the id table: at most half full */
#define ENTRIES LNAME_MAX

struct entry {
	uint64_t addr;
	uint32_t id;
};

static struct lock lname_lk = LOCK_INIT;
static int profile;           /* a Lisp profile (release-stored once) */
static struct arena names_arena; /* the names' bytes (under the lock) */
static const char **names;    /* names[id], id 1..nnames */
static uint32_t *slot;        /* id by hash of the name, 0: empty */
static struct entry *entries; /* compiled functions, nentries of them */
static uint32_t nnames, nentries; /* published with release stores */
static const char *status = "none: no invocation history read yet";
static uint64_t unmatched;

/* Fixed when the writer counts, written by lname_info_put. */
static uint32_t snap_names, snap_entries;
static char snap_unmatched[24];
/* Keys of the names and entries: "lisp.fn.<id>", "lisp.entry.<hex>". */
static char keybuf[32];

void lname_lock_reinit(void)
{
	lock_reinit(&lname_lk);
}

void lname_profile(void)
{
	int expect = 0;

	if (__atomic_compare_exchange_n(&profile, &expect, 1, 0, __ATOMIC_ACQ_REL,
					__ATOMIC_ACQUIRE))
		pthread_atfork(NULL, NULL, lname_lock_reinit);
}

int lname_is_profile(void)
{
	return __atomic_load_n(&profile, __ATOMIC_ACQUIRE);
}

void lname_status(const char *s)
{
	__atomic_store_n(&status, s, __ATOMIC_RELEASE);
}

void lname_unmatched(void)
{
	__atomic_fetch_add(&unmatched, 1, __ATOMIC_RELAXED);
}

static uint32_t hash(const char *s, size_t n)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 16777619u;
	return h;
}

/* The tables, mapped once (under the lock): 0, or -1 without memory. */
static int tables(void)
{
	if (names)
		return 0;
	slot = arena_map(SLOTS * sizeof(*slot));
	entries = arena_map(ENTRIES * sizeof(*entries));
	names = arena_map((LNAME_MAX + 1) * sizeof(*names));
	return slot && entries && names ? 0 : -1;
}

uint32_t lname_intern(const char *name, size_t len)
{
	uint32_t id = 0, n, j;
	char *copy;

	if (len > LNAME_LEN)
		len = LNAME_LEN;
	if (lock_take(&lname_lk, "the Lisp names") < 0)
		return 0;
	if (tables() < 0)
		goto out;
	n = nnames;
	for (j = hash(name, len) & (SLOTS - 1); slot[j]; j = (j + 1) & (SLOTS - 1)) {
		const char *s = names[slot[j]];
		if (slot[j] <= n && !strncmp(s, name, len) && s[len] == 0) {
			id = slot[j];
			goto out;
		}
	}
	if (n >= LNAME_MAX || !(copy = arena_alloc(&names_arena, len + 1)))
		goto out;
	/* Tables print names and the file carries them: no control bytes. */
	for (size_t k = 0; k < len; k++)
		copy[k] = (unsigned char)name[k] < 0x20 || name[k] == 0x7f ? '?' : name[k];
	id = n + 1;
	names[id] = copy;
	slot[j] = id;
	__atomic_store_n(&nnames, id, __ATOMIC_RELEASE);
out:
	lock_give(&lname_lk);
	return id;
}

const char *lname_get(uint32_t id)
{
	if (!id || id > __atomic_load_n(&nnames, __ATOMIC_ACQUIRE))
		return NULL;
	return names[id];
}

void lname_entry(uint64_t addr, uint32_t id)
{
	uint32_t n;

	if (!id || lock_take(&lname_lk, "the Lisp names") < 0)
		return;
	n = nentries;
	/* The same function installed again (a file loaded twice) keeps its
	 * first entry: the tools take the first. */
	if (tables() == 0 && n < ENTRIES) {
		entries[n].addr = addr;
		entries[n].id = id;
		__atomic_store_n(&nentries, n + 1, __ATOMIC_RELEASE);
	}
	lock_give(&lname_lk);
}

#define NFIXED 4 /* lisp, classes, lisp.names, lisp.unmatched */

size_t lname_info_count(void)
{
	if (!lname_is_profile())
		return 0;
	snap_names = __atomic_load_n(&nnames, __ATOMIC_ACQUIRE);
	snap_entries = __atomic_load_n(&nentries, __ATOMIC_ACQUIRE);
	outfile_u64(snap_unmatched, __atomic_load_n(&unmatched, __ATOMIC_RELAXED));
	return NFIXED + snap_names + snap_entries;
}

/* "lisp.entry." and addr in hex into keybuf. */
static const char *entry_key(uint64_t addr)
{
	static const char hex[] = "0123456789abcdef";
	char *k = keybuf + 11;
	int d = 60;

	memcpy(keybuf, "lisp.entry.", 11);
	while (d > 0 && !(addr >> d & 15))
		d -= 4;
	for (; d >= 0; d -= 4)
		*k++ = hex[addr >> d & 15];
	*k = 0;
	return keybuf;
}

void lname_info_put(struct format_writer *w)
{
	/* The key, then the value, for each: the key's buffer is reused. */
	format_put_str(w, "lisp");
	format_put_str(w, "ecl");
	/* The four class columns of this profile: by type, not size (the
	 * mprof paper: cons, floating point, structure or vector, other). */
	format_put_str(w, "classes");
	format_put_str(w, "c f s o");
	format_put_str(w, "lisp.names");
	format_put_str(w, __atomic_load_n(&status, __ATOMIC_ACQUIRE));
	format_put_str(w, "lisp.unmatched");
	format_put_str(w, snap_unmatched);
	for (uint32_t id = 1; id <= snap_names; id++) {
		memcpy(keybuf, "lisp.fn.", 8);
		outfile_u64(keybuf + 8, id);
		format_put_str(w, keybuf);
		format_put_str(w, names[id]);
	}
	for (uint32_t i = 0; i < snap_entries; i++) {
		format_put_str(w, entry_key(entries[i].addr));
		format_put_str(w, names[entries[i].id]);
	}
}
