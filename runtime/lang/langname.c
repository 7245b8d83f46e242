/*
 * langname.c - owns the names of language frames (langname_*,
 * langname.h): an open-addressing table of ids by the language's key,
 * the names by id, and their INFO entries.
 *
 * Storage comes from mmap (arena.h) when the first frame comes: the
 * names from the keep (keep.h), so that a launcher can write a dead
 * program's names too (struct langname_keep).  An entry
 * is filled, then its key stored with release; a reader loads the key
 * with acquire, so it never sees half an entry.  The table is never
 * rehashed: at most half full, further frames go unnamed.
 *
 * Writers take a lock of its own, a flag: the monitor names frames as an
 * allocation is recorded, cpprof's sampler in its signal handler (which
 * the monitor's futex locks are not for).  A writer holds it for a copy
 * and a few stores, never waiting on anything; a thread that finds it
 * held yields and tries again, and after many tries leaves the frame
 * unnamed rather than wait on.  The flag holds its holder's mark: a
 * handler that interrupted its own thread's writer (cpprof's, in a read
 * that names its Python frame) leaves its frame unnamed at once.  It
 * waited its many tries, in every signal: a sampled python3 never got
 * back to the writer (sphinx-build hung in one run of three).
 */
#include <pthread.h>
#include <string.h>

#include <sched.h>

#include "arena.h"
#include "format.h"
#include "keep.h"
#include "langname.h"
#include "outfile.h"

#define SLOTS (2 * LANGNAME_MAX)

struct slot {
	uintptr_t key; /* 0: empty (stored last) */
	uintptr_t check;
	uint32_t sub, id;
};

static uintptr_t lk; /* 0: free; else the holder's mark (&lk_mark) */
static __thread char lk_mark __attribute__((tls_model("initial-exec")));
static struct slot *slot;
static const char **names; /* names[id], id 1..nnames */
static const char **kinds; /* kinds[id]: the kind of object made there, or NULL */
static struct arena names_arena = { .map = keep_map, .unmap = keep_unmap };
/* The keep's mirror (langname.h), and where its address goes; NULL: none. */
static struct langname_keep *mirror;
static uint64_t *mirror_slot;
static uint32_t nnames; /* published with release */
static int full;        /* nnames reached LANGNAME_MAX (under the lock) */
static const char *lang;  /* NULL: not a language profile */
static const char *status = "none: no frame read yet";

static uint32_t snap;
static const char *snap_lang; /* NULL: langname_info_count gave 0 */
static char keybuf[32];

void langname_lock_reinit(void)
{
	__atomic_store_n(&lk, 0, __ATOMIC_RELEASE);
}

/* Copy s into the mirror's field d of n bytes, cut, NUL-ended. */
static void mirror_str(char *d, size_t n, const char *s)
{
	size_t k = strlen(s);

	if (k >= n)
		k = n - 1;
	memcpy(d, s, k);
	d[k] = 0;
}

/* The mirror, made in the keep when there is one and its place is known
 * (under the lock). */
static struct langname_keep *mirror_get(void)
{
	struct langname_keep *m;

	if (mirror || !mirror_slot || !(m = keep_map(sizeof *m)))
		return mirror;
	if (!keep_has(m)) { /* no keep, or a full one: nobody would read it */
		keep_unmap(m, sizeof *m);
		mirror_slot = NULL;
		return NULL;
	}
	m->names = (uint64_t)(uintptr_t)names;
	m->kinds = (uint64_t)(uintptr_t)kinds;
	__atomic_store_n(&m->n, nnames, __ATOMIC_RELEASE);
	__atomic_store_n(&mirror, m, __ATOMIC_RELEASE);
	/* After the store: what langname_profile and langname_status say
	 * from here on, they copy themselves. */
	if (__atomic_load_n(&lang, __ATOMIC_ACQUIRE))
		mirror_str(m->lang, sizeof m->lang, lang);
	mirror_str(m->status, sizeof m->status, __atomic_load_n(&status, __ATOMIC_ACQUIRE));
	__atomic_store_n(mirror_slot, (uint64_t)(uintptr_t)m, __ATOMIC_RELEASE);
	return m;
}

void langname_keep_at(uint64_t *where)
{
	struct langname_keep *m = __atomic_load_n(&mirror, __ATOMIC_ACQUIRE);

	/* A new root (a forked child's table, cpprof's tab_reset): the mirror
	 * made already, in the keep the child copied, leads from it too.
	 * Else the mirror is made with the first name. */
	mirror_slot = where;
	if (m)
		__atomic_store_n(where, (uint64_t)(uintptr_t)m, __ATOMIC_RELEASE);
}

static int take(void)
{
	uintptr_t mine = (uintptr_t)&lk_mark, was = 0;

	for (int tries = 0;
	     !__atomic_compare_exchange_n(&lk, &was, mine, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
	     tries++, was = 0) {
		/* This thread holds it: a signal came while it wrote. */
		if (was == mine || tries == 100000)
			return -1;
		sched_yield();
	}
	return 0;
}

void langname_profile(const char *l)
{
	struct langname_keep *m;

	if (!__atomic_exchange_n(&lang, l, __ATOMIC_ACQ_REL))
		pthread_atfork(NULL, NULL, langname_lock_reinit);
	/* A mirror made after the exchange copied l itself. */
	if ((m = __atomic_load_n(&mirror, __ATOMIC_ACQUIRE)))
		mirror_str(m->lang, sizeof m->lang, l);
}

int langname_any(void)
{
	return __atomic_load_n(&nnames, __ATOMIC_ACQUIRE) != 0;
}

void langname_status(const char *s)
{
	struct langname_keep *m;

	/* No lock: a signal handler may say it (pyframes.c).  Two racing
	 * copies mix their bytes at worst, never lose the NUL (the last
	 * byte is never written but as one). */
	__atomic_store_n(&status, s, __ATOMIC_RELEASE);
	if ((m = __atomic_load_n(&mirror, __ATOMIC_ACQUIRE)))
		mirror_str(m->status, sizeof m->status, s);
}

static inline size_t home(uintptr_t key, uint32_t sub)
{
	return (size_t)(((uint64_t)key * 0x9e3779b97f4a7c15ull ^ (uint64_t)sub * 0xc2b2ae3d27d4eb4full) >>
			40) &
	       (SLOTS - 1);
}

uint32_t langname_find(uintptr_t key, uint32_t sub, uintptr_t check)
{
	struct slot *s = __atomic_load_n(&slot, __ATOMIC_ACQUIRE);
	uintptr_t k;

	if (!s)
		return 0;
	for (size_t j = home(key, sub);; j = (j + 1) & (SLOTS - 1)) {
		if (!(k = __atomic_load_n(&s[j].key, __ATOMIC_ACQUIRE)))
			return 0;
		if (k == key && s[j].sub == sub && s[j].check == check)
			return s[j].id;
	}
}

/* Copy n bytes of s to d, control bytes as '?' (tables print names). */
static char *put(char *d, const char *s, size_t n)
{
	for (size_t k = 0; k < n; k++)
		*d++ = (unsigned char)s[k] < 0x20 || s[k] == 0x7f ? '?' : s[k];
	return d;
}

uint32_t langname_add(uintptr_t key, uint32_t sub, uintptr_t check, const char *fn, size_t fnlen,
		      const char *file, size_t filelen, int line)
{
	uint32_t id = 0;
	char num[24], *copy, *d;
	size_t j, nn;

	if (!key || take() < 0)
		return 0;
	if (!slot) {
		/* Each kept once mapped: a failure is retried, not leaked. */
		if (!names)
			names = keep_map((LANGNAME_MAX + 1) * sizeof(*names));
		if (!kinds)
			kinds = keep_map((LANGNAME_MAX + 1) * sizeof(*kinds));
		if (!names || !kinds)
			goto out;
		if (mirror_get()) {
			mirror->names = (uint64_t)(uintptr_t)names;
			mirror->kinds = (uint64_t)(uintptr_t)kinds;
		}
		__atomic_store_n(&slot, arena_map(SLOTS * sizeof(*slot)), __ATOMIC_RELEASE);
		if (!slot)
			goto out;
	}
	for (j = home(key, sub); slot[j].key; j = (j + 1) & (SLOTS - 1))
		if (slot[j].key == key && slot[j].sub == sub && slot[j].check == check) {
			id = slot[j].id; /* another thread added it meanwhile */
			goto out;
		}
	if (nnames >= LANGNAME_MAX) {
		/* Said once, in INFO lang.frames: the later frames print as
		 * "(frame 0)". */
		if (!full) {
			full = 1;
			langname_status("read; the names' table is full (65536 frames named): "
					"later frames are unnamed");
		}
		goto out;
	}
	fnlen = fnlen > LANGNAME_LEN ? LANGNAME_LEN : fnlen;
	filelen = filelen > LANGNAME_LEN ? LANGNAME_LEN : filelen;
	outfile_u64(num, line > 0 ? (uint64_t)line : 0);
	nn = strlen(num);
	if (!(copy = arena_alloc(&names_arena, fnlen + filelen + nn + 3)))
		goto out;
	/* "NAME<tab>FILE:LINE" */
	d = put(copy, fn, fnlen);
	*d++ = '\t';
	d = put(d, file, filelen);
	*d++ = ':';
	memcpy(d, num, nn + 1);
	id = nnames + 1;
	names[id] = copy;
	slot[j].check = check;
	slot[j].sub = sub;
	slot[j].id = id;
	__atomic_store_n(&slot[j].key, key, __ATOMIC_RELEASE);
	__atomic_store_n(&nnames, id, __ATOMIC_RELEASE);
	if (mirror)
		__atomic_store_n(&mirror->n, id, __ATOMIC_RELEASE);
out:
	__atomic_store_n(&lk, 0, __ATOMIC_RELEASE);
	return id;
}

int langname_has_kind(uint32_t id)
{
	return !id || id > __atomic_load_n(&nnames, __ATOMIC_ACQUIRE) ||
	       __atomic_load_n(&kinds[id], __ATOMIC_ACQUIRE) != NULL;
}

void langname_set_kind(uint32_t id, const char *kind, size_t n)
{
	char *copy;

	if (!n || n > 64 || langname_has_kind(id) || take() < 0)
		return;
	if (!kinds[id] && (copy = arena_alloc(&names_arena, n + 1))) {
		put(copy, kind, n);
		copy[n] = 0;
		__atomic_store_n(&kinds[id], copy, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&lk, 0, __ATOMIC_RELEASE);
}

#define NFIXED 2 /* lang, lang.frames */

size_t langname_info_count(void)
{
	if (!(snap_lang = __atomic_load_n(&lang, __ATOMIC_ACQUIRE)))
		return 0;
	snap = __atomic_load_n(&nnames, __ATOMIC_ACQUIRE);
	return NFIXED + snap;
}

void langname_info_put(struct format_writer *w)
{
	if (!snap_lang)
		return;
	format_put_str(w, "lang");
	format_put_str(w, snap_lang);
	format_put_str(w, "lang.frames");
	format_put_str(w, __atomic_load_n(&status, __ATOMIC_ACQUIRE));
	for (uint32_t id = 1; id <= snap; id++) {
		memcpy(keybuf, "lang.fn.", 8);
		outfile_u64(keybuf + 8, id);
		format_put_str(w, keybuf);
		if (kinds[id]) {
			/* "NAME<tab>FILE:LINE<tab>KIND" */
			char v[2 * LANGNAME_LEN + 100];
			size_t a = strlen(names[id]), b = strlen(kinds[id]);

			memcpy(v, names[id], a);
			v[a] = '\t';
			memcpy(v + a + 1, kinds[id], b + 1);
			format_put_str(w, v);
		} else {
			format_put_str(w, names[id]);
		}
	}
}
