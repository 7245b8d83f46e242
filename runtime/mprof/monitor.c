/*
 * monitor.c - owns the monitor's state (mon_*): initialisation and
 * configuration, the recursion guard, recording allocations and frees into
 * the stack table, the size bins and the address map, the per-thread
 * blocks (frame buffer and counts), autosave, mprof_stop/mprof_restart,
 * fork and exit.  The heap's peak is peak.c's; its per-stack part lives
 * beside each stack's counters in the blocks.
 *
 * mprof paper, "The Monitor": every allocation is charged to its call chain
 * (here the whole stack, not the last five callers), and the object is
 * associated with its requested size and its chain so a free can be
 * charged back.  The paper kept both in a header on the object; we keep
 * them in a side map (addrmap.c) so that blocks from memalign/valloc and
 * malloc_usable_size work (mprof.1, BUGS).
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "addrmap.h"
#include "arena.h"
#include "custom.h"
#include "freeres.h"
#include "leakscan.h"
#include "lisp_names.h"
#include "lock.h"
#include "monitor.h"
#include "mprof.h"
#include "outfile.h"
#include "peak.h"
#include "real.h"
#include "stackhash.h"
#include "stacks.h"
#include "unwind.h"
#include "writer.h"

/* An object's slot in the address map holds its stack index + 1 in
 * ADDRMAP_IDX_BITS bits; the table never grows past that. */
_Static_assert(STACKS_MAX <= 1u << ADDRMAP_IDX_BITS, "stack indices fit the address map");

/* Frames kept per stack (the innermost); deeper stacks are truncated. */
#define MON_MAX_DEPTH STACKS_MAX_DEPTH

struct mon mon;
__thread int mon_guard;

/*
 * Linked from libmprof.a, the monitor, the entry points (malloc.c) and the
 * API (api.c) come as one: a program that only calls the API gets the
 * monitor, and one that calls the API through weak references (which do
 * not pull archive members, mprof.h) still finds it.
 */
extern const char mon_hooks_anchor;
__attribute__((used)) static const void *const mon_link_refs[] = {
	&mon_hooks_anchor, (void *)set_mprof_autosave, (void *)mprof_stop, (void *)mprof_restart,
};

#define ADD(x, v) __atomic_fetch_add(&(x), (v), __ATOMIC_RELAXED)

/* ---- per-thread blocks ----
 *
 * Every thread records into its own block: its frame buffer, its totals,
 * its size bins and its counters for each stack it touched, updated with
 * plain (relaxed) stores, so threads share no cache line on the hot path.
 * The saver sums every block (mon_read_*).  Blocks are never unmapped: at
 * thread exit a block goes to a pool and the next new thread carries on
 * adding to it, so nothing is merged and nothing is lost.  A block belongs
 * to one profile (its epoch): its owner zeroes it when it sees that a
 * restart began another, and until then the saver ignores it.  A thread
 * that allocates after its block went back (a later key destructor, libc's
 * thread cleanup) records into the shared orphan block, under a lock.
 */
#define CTR_SHIFT 10
#define CTR_CHUNK (1u << CTR_SHIFT) /* stacks per counter chunk */
#define CTR_DIR (STACKS_MAX / CTR_CHUNK)
#define CACHE_N 8 /* recent stacks per thread */

/*
 * In memory a stack's counters go by size class, the four of a class side
 * by side (allocs, bytes, frees, freed): an allocation and its free touch
 * one cache line, not two.  The file's order (format.h) is by kind.  Its
 * part of the peak follows (peak.h), on a line of its own.
 */
#define CTR(kind, sc) ((sc) * 4 + (kind) / SIZE_NCLASSES)
typedef struct {
	uint64_t c[MPROF_NCOUNTERS];
	struct peak_stack peak;
} mon_ctr;
_Static_assert(sizeof(mon_ctr) == MPROF_NCOUNTERS * 8 + 64, "a stack's counters, then its peak");

/* The peak part of the counters c (block_ctr's). */
static inline struct peak_stack *ctr_peak(uint64_t *c)
{
	return (struct peak_stack *)(c + MPROF_NCOUNTERS);
}

/*
 * This block's live bytes and objects of the stack whose counters are c
 * (negative when other threads freed more of its objects than this one
 * allocated: the sum over blocks is right).  Summed when needed, not kept:
 * the hot path pays nothing for them.  The four classes one by one (a
 * loop costs twice the instructions, at every first change after a peak).
 */
struct live {
	int64_t bytes, objects;
};
#define LIVE_CLASS(c, sc) \
	(__atomic_load_n(&(c)[CTR(MPROF_C_BYTES, sc)], __ATOMIC_RELAXED) - \
	 __atomic_load_n(&(c)[CTR(MPROF_C_FREED, sc)], __ATOMIC_RELAXED))
#define LIVE_OBJECTS(c, sc) \
	(__atomic_load_n(&(c)[CTR(MPROF_C_ALLOCS, sc)], __ATOMIC_RELAXED) - \
	 __atomic_load_n(&(c)[CTR(MPROF_C_FREES, sc)], __ATOMIC_RELAXED))
_Static_assert(SIZE_NCLASSES == 4, "live() sums four classes");
static inline __attribute__((always_inline)) struct live live(const uint64_t *c)
{
	return (struct live){
		(int64_t)(LIVE_CLASS(c, 0) + LIVE_CLASS(c, 1) + LIVE_CLASS(c, 2) + LIVE_CLASS(c, 3)),
		(int64_t)(LIVE_OBJECTS(c, 0) + LIVE_OBJECTS(c, 1) + LIVE_OBJECTS(c, 2) +
			  LIVE_OBJECTS(c, 3)),
	};
}

/* Allocation and free totals are the sums of the bins: not kept twice. */
enum { T_UNKNOWN, T_N };

struct mon_thread {
	struct mon_thread *all;  /* every block, newest first; never unlinked */
	struct mon_thread *pool; /* next free block */
	uint64_t epoch;          /* the profile these counts belong to */
	int owned;
	uint32_t nchunks; /* dir[0..nchunks-1] may be mapped */
	uint64_t t[T_N];
	struct peak_block peak;
	struct {
		const struct stacks_rec *r;
		uint64_t *ctr;
		uint64_t idx;
	} cache[CACHE_N];
	const struct stacks_rec *last; /* the stack of the last allocation */
	mon_ctr *dir[CTR_DIR]; /* stack index -> this thread's counters */
	/* Per size bin, allocations and frees; bytes are those times the
	 * size, but for the last bin (larger sizes), whose bytes are big[]. */
	uint64_t bins[FORMAT_NBINS][2];
	uint64_t big[2]; /* bytes allocated, freed */
	uint64_t frames[MON_MAX_DEPTH];
};

#define BLOCK_BYTES ((sizeof(struct mon_thread) + 4095) & ~(size_t)4095)
#define CHUNK_BYTES (CTR_CHUNK * sizeof(mon_ctr))

static __thread struct mon_thread *mon_self;
static __thread int mon_dead; /* this thread's block went back to the pool */
static pthread_key_t mon_key;
static int mon_key_ok;
static struct lock mon_pool_lock = LOCK_INIT;
static struct mon_thread *mon_pool; /* free blocks */
static struct mon_thread *mon_all;  /* every block (release-published) */
static struct lock mon_orphan_lock = LOCK_INIT;
static struct mon_thread *mon_orphan;

static inline void bump(uint64_t *x, uint64_t v)
{
	__atomic_store_n(x, __atomic_load_n(x, __ATOMIC_RELAXED) + v, __ATOMIC_RELAXED);
}

static struct mon_thread *block_new(void)
{
	struct mon_thread *t;

	if (lock_take(&mon_pool_lock, "the thread blocks") < 0)
		return NULL;
	t = mon_pool;
	if (t) {
		mon_pool = t->pool;
	} else if ((t = arena_map(BLOCK_BYTES)) != NULL) {
		t->all = mon_all;
		__atomic_store_n(&mon_all, t, __ATOMIC_RELEASE);
	}
	if (t)
		t->owned = 1;
	lock_give(&mon_pool_lock);
	return t;
}

/* Back to the pool.  If the lock cannot be had, the block stays owned: its
 * counts are still summed, it is only not reused. */
static void block_put(struct mon_thread *t)
{
	if (lock_take(&mon_pool_lock, "the thread blocks") < 0)
		return;
	t->owned = 0;
	t->pool = mon_pool;
	mon_pool = t;
	lock_give(&mon_pool_lock);
}

static void block_release(void *p)
{
	struct mon_thread *t = p;

	mon_self = NULL;
	mon_dead = 1;
	/* What the thread held back from the others' view of the heap (of
	 * an old profile: peak_publish drops it). */
	if (t->peak.delta)
		peak_publish(&t->peak, t->epoch);
	peak_threads(-1);
	block_put(p);
}

/* This thread's block, or NULL: dead thread (use the orphan) or no memory. */
static struct mon_thread *block_attach(void)
{
	struct mon_thread *t;

	if (mon_dead)
		return NULL;
	t = block_new();
	if (!t)
		return NULL;
	mon_self = t;
	peak_threads(1);
	/* Returned to the pool at thread exit.  May calloc: we hold the guard. */
	if (mon_key_ok)
		pthread_setspecific(mon_key, t);
	return t;
}

/* Make t count for profile epoch e (its owner, or the orphan lock, only). */
static void block_reset(struct mon_thread *t, uint64_t e)
{
	uint32_t i;

	if (t->epoch) {
		for (i = 0; i < t->nchunks; i++) {
			arena_unmap(t->dir[i], CHUNK_BYTES);
			t->dir[i] = NULL;
		}
		t->nchunks = 0;
		memset(t->t, 0, sizeof t->t);
		memset(&t->peak, 0, sizeof t->peak);
		memset(t->cache, 0, sizeof t->cache);
		t->last = NULL;
		memset(t->bins, 0, sizeof t->bins);
		memset(t->big, 0, sizeof t->big);
	}
	__atomic_store_n(&t->epoch, e, __ATOMIC_RELEASE);
}

/* Map t's chunk of counters for stack idx; NULL if memory cannot be mapped. */
static __attribute__((noinline)) mon_ctr *block_chunk(struct mon_thread *t, uint32_t idx)
{
	mon_ctr *c = arena_map(CHUNK_BYTES);

	if (!c)
		return NULL;
	__atomic_store_n(&t->dir[idx >> CTR_SHIFT], c, __ATOMIC_RELEASE);
	if (t->nchunks <= idx >> CTR_SHIFT)
		t->nchunks = (idx >> CTR_SHIFT) + 1;
	return c;
}

/* t's counters for stack idx, or NULL when memory cannot be mapped. */
static inline uint64_t *block_ctr(struct mon_thread *t, uint32_t idx)
{
	mon_ctr *c = t->dir[idx >> CTR_SHIFT];

	if (__builtin_expect(!c, 0) && !(c = block_chunk(t, idx)))
		return NULL;
	return c[idx & (CTR_CHUNK - 1)].c;
}

/*
 * The orphan block, made to count for epoch e, with its lock held; NULL if
 * there is none and none can be made, or the lock cannot be had.  The
 * block is made without the orphan lock: the pool lock comes first in the
 * order (fork_prepare's), so block_new must not run under the orphan's.
 */
static struct mon_thread *orphan_lock(uint64_t e)
{
	struct mon_thread *fresh = NULL;

	for (;;) {
		if (lock_take(&mon_orphan_lock, "the orphan block") < 0)
			break;
		if (!mon_orphan && fresh) {
			mon_orphan = fresh;
			fresh = NULL;
		}
		if (mon_orphan && !fresh) {
			if (mon_orphan->epoch != e)
				block_reset(mon_orphan, e);
			return mon_orphan;
		}
		lock_give(&mon_orphan_lock);
		if (fresh) { /* another thread made it meanwhile */
			block_put(fresh);
			fresh = NULL;
		} else if (!(fresh = block_new())) {
			return NULL;
		}
	}
	if (fresh)
		block_put(fresh);
	return NULL;
}

static void orphan_unlock(void)
{
	lock_give(&mon_orphan_lock);
}

/* The orphan block holds nothing back from the view of the heap: threads
 * past their block are not counted in peak_g.nblocks (peak.h). */
static void orphan_flush(struct mon_thread *t)
{
	if (t->peak.delta)
		peak_publish(&t->peak, t->epoch);
}

/* Add t's bin i to b: allocs, frees, bytes, freed (as format.h's bins). */
static void add_bin(const struct mon_thread *t, uint32_t i, uint64_t *b)
{
	uint64_t a = __atomic_load_n(&t->bins[i][0], __ATOMIC_RELAXED);
	uint64_t f = __atomic_load_n(&t->bins[i][1], __ATOMIC_RELAXED);

	b[0] += a;
	b[1] += f;
	if (i == FORMAT_NBINS - 1) {
		b[2] += __atomic_load_n(&t->big[0], __ATOMIC_RELAXED);
		b[3] += __atomic_load_n(&t->big[1], __ATOMIC_RELAXED);
	} else {
		b[2] += a * i;
		b[3] += f * i;
	}
}

/* Summing for the writer (the save lock is held: the epoch is stable). */
static void mon_read_totals(struct writer_totals *out)
{
	uint64_t e = mon.epoch, s[T_N] = { 0 }, b[4] = { 0 };
	struct mon_thread *t;
	uint32_t i;
	int k;

	for (t = __atomic_load_n(&mon_all, __ATOMIC_ACQUIRE); t; t = t->all) {
		if (__atomic_load_n(&t->epoch, __ATOMIC_ACQUIRE) != e)
			continue;
		for (k = 0; k < T_N; k++)
			s[k] += __atomic_load_n(&t->t[k], __ATOMIC_RELAXED);
		for (i = 0; i < FORMAT_NBINS; i++)
			add_bin(t, i, b);
	}
	out->allocs = b[0];
	out->frees = b[1];
	out->bytes = b[2];
	out->freed = b[3];
	out->unknown_frees = s[T_UNKNOWN];
	out->dropped = __atomic_load_n(&mon.dropped, __ATOMIC_RELAXED);
}

static void mon_read_bins(uint64_t (*bins)[4])
{
	uint64_t e = mon.epoch;
	struct mon_thread *t;
	uint32_t i;

	memset(bins, 0, FORMAT_NBINS * sizeof *bins);
	for (t = __atomic_load_n(&mon_all, __ATOMIC_ACQUIRE); t; t = t->all) {
		if (__atomic_load_n(&t->epoch, __ATOMIC_ACQUIRE) != e)
			continue;
		for (i = 0; i < FORMAT_NBINS; i++)
			add_bin(t, i, bins[i]);
	}
}

/*
 * The peak this save reports (the save lock is held): peak.c's, or the
 * heap now if it is more (threads' deltas held back, peak.h), and then
 * each stack's share is what it holds now.
 */
static uint64_t mon_save_peak;
static int mon_save_peak_now;

static void mon_read_peak(void)
{
	struct writer_totals t;
	uint64_t live;

	mon_read_totals(&t);
	live = t.bytes > t.freed ? t.bytes - t.freed : 0;
	mon_save_peak = peak_value(mon.epoch);
	mon_save_peak_now = live > mon_save_peak;
	if (mon_save_peak_now)
		mon_save_peak = live;
}

static void mon_read_counters(uint32_t idx, uint64_t *out)
{
	uint64_t e = mon.epoch, *c;
	struct mon_thread *t;
	mon_ctr *chunk;
	int64_t sb = 0, sn = 0;
	struct live l;
	int k;

	memset(out, 0, MPROF_NCOUNTERS_SCAN * sizeof *out);
	for (t = __atomic_load_n(&mon_all, __ATOMIC_ACQUIRE); t; t = t->all) {
		if (__atomic_load_n(&t->epoch, __ATOMIC_ACQUIRE) != e)
			continue;
		chunk = __atomic_load_n(&t->dir[idx >> CTR_SHIFT], __ATOMIC_ACQUIRE);
		if (!chunk)
			continue;
		c = chunk[idx & (CTR_CHUNK - 1)].c;
		for (k = 0; k < MPROF_NCOUNTERS; k++)
			out[k] += __atomic_load_n(&c[CTR(k / SIZE_NCLASSES * SIZE_NCLASSES,
							 k % SIZE_NCLASSES)],
						  __ATOMIC_RELAXED);
		l = live(c);
		if (mon_save_peak_now) {
			sb += l.bytes;
			sn += l.objects;
		} else {
			peak_share(&t->peak, ctr_peak(c), l.bytes, l.objects, mon_save_peak, &sb, &sn);
		}
	}
	/* Negative only in a snapshot taken while threads run. */
	out[MPROF_C_PEAK_BYTES] = sb > 0 ? (uint64_t)sb : 0;
	out[MPROF_C_PEAK_OBJECTS] = sn > 0 ? (uint64_t)sn : 0;
	if (leakscan_done())
		leakscan_counters(idx, out + MPROF_NCOUNTERS_ALL);
}

/* INFO's extra entries: how the leak scan went, the category names. */
static size_t mon_extra_info(const char *kv[][2], size_t max)
{
	static char ns[24]; /* under the save lock */
	const char *st = leakscan_status();
	size_t n = 0;

	if (st && max >= 2) {
		kv[0][0] = "leak_scan";
		kv[0][1] = st;
		kv[1][0] = "leak_scan_ns";
		kv[1][1] = outfile_u64(ns, leakscan_ns());
		n = 2;
	}
	return n + custom_info(kv + n, max - n);
}

/* ---- trouble ---- */

static void say(const char *s)
{
	size_t n = strlen(s);
	while (n) {
		ssize_t k = write(2, s, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return;
		s += k;
		n -= (size_t)k;
	}
}

void mon_trouble(const char *what, const char *detail)
{
	int st = __atomic_load_n(&mon.state, __ATOMIC_ACQUIRE);

	for (;;) {
		if (st == MON_TROUBLE)
			return;
		if (__atomic_compare_exchange_n(&mon.state, &st, MON_TROUBLE, 0, __ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE))
			break;
	}
	say("mprof: ");
	say(what);
	if (detail) {
		say(": ");
		say(detail);
	}
	say("; profiling stopped\n");
}

/*
 * lock.c's watchdog: a wait for a monitor lock outlasted the bound, so a
 * thread of the program holds a lock of its own that the lock's holder
 * waits for (or worse).  Stop, and let every thread through.
 */
static void lock_timeout(const char *name, uint64_t ms)
{
	char what[160] = "waited ", num[24];
	size_t n = strlen(what), k = 0;

	do
		num[k++] = (char)('0' + ms % 10);
	while ((ms /= 10) && k < sizeof num);
	while (k)
		what[n++] = num[--k];
	what[n] = 0;
	strcat(what, " ms for ");
	strncat(what, name, 48);
	strcat(what, " (a deadlock with the program)");
	mon_trouble(what, NULL);
}

/* ---- initialisation ---- */

uint64_t mon_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int parse_u64(const char *s, uint64_t *v)
{
	uint64_t x = 0;

	if (!s || !*s)
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || x > (UINT64_MAX - 9) / 10)
			return -1;
		x = x * 10 + (uint64_t)(*s - '0');
	}
	*v = x;
	return 0;
}

/*
 * Make name absolute against the current directory, into out[PATH_MAX].
 * A name that does not fit is left as it is (then open(2) will judge).
 */
static void resolve(char *out, const char *name)
{
	size_t n, k = strlen(name);

	if (name[0] != '/' && getcwd(out, PATH_MAX)) {
		n = strlen(out);
		if (n + 1 + k < PATH_MAX) {
			if (n > 1)
				out[n++] = '/';
			memcpy(out + n, name, k + 1);
			return;
		}
	}
	if (k < PATH_MAX)
		memcpy(out, name, k + 1);
}

static void autosave_set(int count);
static void fork_prepare(void);
static void fork_parent(void);
static void fork_child(void);

extern char **environ;

void mon_config(void)
{
	int expect = 0;
	const char *s;
	uint64_t v;

	if (!__atomic_compare_exchange_n(&mon.configured, &expect, 1, 0, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE)) {
		/* Another thread is at it (it takes no lock of ours, but
		 * pthread_atfork takes libc's): wait, bounded. */
		if (lock_await(&mon.configured, 2, "the monitor's configuration") < 0)
			mon.nosave = 1; /* no output name yet: write nothing */
		return;
	}
	s = getenv("MPROF_OUT");
	resolve(mon.out, s && *s ? s : "mprof.data");
	if (parse_u64(getenv("MPROF_AUTOSAVE"), &v) == 0 && v <= INT_MAX && !mon.autosave)
		autosave_set((int)v);
	if (parse_u64(getenv("MPROF_ROOT_PID"), &v) == 0)
		mon.root_pid = (pid_t)v;
	else
		mon.root_pid = getpid();
	s = getenv("MPROF_FREERES");
	mon.no_freeres = s && !strcmp(s, "0");
	s = getenv("MPROF_LEAKS");
	mon.leak_scan = s && !strcmp(s, "scan");
	/* Bytes a thread may hold back from the others' view of the heap
	 * (peak.h): 0 makes the peak exact with threads too, at a cost. */
	if (parse_u64(getenv("MPROF_PEAK_SLACK"), &v) == 0 && v <= (uint64_t)INT64_MAX)
		peak_set_slack((int64_t)v);
	/* For tests of the watchdog: the bound of a wait for a monitor lock. */
	if (parse_u64(getenv("MPROF_LOCK_WAIT_MS"), &v) == 0 && v > 0)
		lock_set_bound(v);
	if (pthread_key_create(&mon_key, block_release) == 0)
		mon_key_ok = 1;
	pthread_atfork(fork_prepare, fork_parent, fork_child);
	__atomic_store_n(&mon.configured, 2, __ATOMIC_RELEASE);
}

void mon_init(void)
{
	int expect = MON_UNINIT, g = mon_guard, e = errno;

	if (!__atomic_compare_exchange_n(&mon.state, &expect, MON_INITING, 0, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE))
		return;
	mon_guard = 1;
	if (!real_init()) {
		__atomic_store_n(&mon.state, MON_OFF, __ATOMIC_RELEASE);
		mon_guard = g;
		errno = e;
		return;
	}
	/* glibc's chunks are 32 bytes apart at least (MINSIZE). */
	addrmap_init(real_is_glibc() ? 32 : 16);
	lock_on_timeout(lock_timeout);
	mon.epoch = 1;
	peak_restart(1);
	mon.start_ns = mon_now_ns();
	/* Before libc has set up environ (allocations by the dynamic loader),
	 * the configuration waits for the constructor or the first save. */
	if (environ)
		mon_config();
	__atomic_store_n(&mon.state, MON_ON, __ATOMIC_RELEASE);
	mon_guard = g;
	errno = e;
}

int mon_enter_slow(int is_alloc)
{
	int st = __atomic_load_n(&mon.state, __ATOMIC_ACQUIRE);

	if (st == MON_UNINIT) {
		mon_init();
		st = __atomic_load_n(&mon.state, __ATOMIC_ACQUIRE);
	}
	if (st != MON_ON) {
		/* Another thread is initialising (never wait: it may need a
		 * loader lock we hold), or trouble stopped us. */
		if (is_alloc && st != MON_STOPPED && st != MON_OFF)
			ADD(mon.dropped, 1);
		return 0;
	}
	mon_guard = 1;
	return 1;
}

/* ---- recording ---- */

/*
 * This thread's block, made to count for the current profile; NULL when
 * the thread must use the orphan block.  *e gets the profile's epoch.
 */
static inline struct mon_thread *self(uint64_t *e)
{
	struct mon_thread *t = mon_self;

	*e = __atomic_load_n(&mon.epoch, __ATOMIC_ACQUIRE);
	if (__builtin_expect(!t, 0) && !(t = block_attach()))
		return NULL;
	if (__builtin_expect(t->epoch != *e, 0))
		block_reset(t, *e);
	return t;
}

/* Before the first change to the stack whose counters are c, in block t,
 * since t's last publish (peak.h). */
static __attribute__((noinline)) void turn(struct mon_thread *t, uint64_t *c)
{
	struct live l = live(c);

	peak_turn(&t->peak, ctr_peak(c), l.bytes, l.objects);
}

/* t's delta into the view of the heap: out of line, as it is rare. */
static __attribute__((noinline)) void publish(struct mon_thread *t)
{
	peak_publish(&t->peak, t->epoch);
}

/* Charge a free to the stack that allocated it. */
static inline __attribute__((always_inline)) void credit_free(struct mon_thread *t, uint32_t idx, uint64_t size)
{
	uint64_t *c = block_ctr(t, idx);
	int sc = format_size_class(size);
	uint32_t bin = format_bin_index(size);

	if (!c) {
		mon_trouble("cannot map memory for counters", NULL);
		return;
	}
	if (__builtin_expect(peak_stale(&t->peak, ctr_peak(c)), 0))
		turn(t, c);
	bump(&c[CTR(MPROF_C_FREES, sc)], 1);
	bump(&c[CTR(MPROF_C_FREED, sc)], size);
	bump(&t->bins[bin][1], 1);
	if (bin == FORMAT_NBINS - 1)
		bump(&t->big[1], size);
	if (peak_free_due(&t->peak, size))
		publish(t);
}

/* A free: credit the stack (found) or count an unknown free, into t,
 * which counts for the current profile (self() and orphan_lock() made it
 * so). */
static inline __attribute__((always_inline)) void settle_into(struct mon_thread *t, int found,
							     uint32_t idx, uint64_t size)
{
	/* An index from before a restart belongs to the old profile. */
	if (found && idx >= stacks_base() && idx < stacks_count())
		credit_free(t, idx, size);
	else
		bump(&t->t[T_UNKNOWN], 1);
}

/* The same into the orphan block (t is NULL: the thread's block is gone). */
static __attribute__((noinline)) void settle_orphan(uint64_t e, int found, uint32_t idx,
						    uint64_t size)
{
	struct mon_thread *t = orphan_lock(e);

	if (!t)
		return;
	settle_into(t, found, idx, size);
	orphan_flush(t);
	orphan_unlock();
}

static inline __attribute__((always_inline)) void settle_free(struct mon_thread *t, uint64_t e,
							     int found, uint32_t idx,
							     uint64_t size)
{
	if (__builtin_expect(!t, 0))
		settle_orphan(e, found, idx, size);
	else
		settle_into(t, found, idx, size);
}

static void save_failed(const char *what, const char *detail)
{
	mon.nosave = 1;
	mon_trouble(what, detail);
}

/* Write the profile (writer.h): the caller holds the save lock and the
 * guard.  Like the save, the configuration leaves errno as it was. */
static int save(const char *reason)
{
	struct writer_source src;
	int e = errno;

	mon_config();
	errno = e;
	mon_read_peak();
	src = (struct writer_source){
		.out = mon.out,
		.root_pid = mon.root_pid,
		.start_ns = mon.start_ns,
		.now_ns = mon_now_ns,
		.read_totals = mon_read_totals,
		.ncounters = leakscan_done() ? MPROF_NCOUNTERS_SCAN : MPROF_NCOUNTERS_ALL,
		.read_counters = mon_read_counters,
		.read_bins = mon_read_bins,
		.extra_info = mon_extra_info,
		.more_info_count = lname_info_count,
		.more_info_put = lname_info_put,
		.fail = save_failed,
	};
	return writer_save(reason, &src);
}

static void autosave(void)
{
	if (writer_trylock() != 0)
		return; /* a save is under way: it will do */
	if (!mon.nosave && __atomic_load_n(&mon.state, __ATOMIC_ACQUIRE) == MON_ON)
		save("autosave");
	writer_unlock();
}

static inline unsigned cache_slot(uint32_t hash)
{
	return hash >> 29; /* the table probes by the low bits */
}

/* Count an allocation of n bytes into t, whose counters for its stack are
 * c, in class sc (its size class; a Lisp object's type class). */
static inline __attribute__((always_inline)) void count(struct mon_thread *t, uint64_t *c, size_t n,
							 int sc)
{
	uint32_t bin = format_bin_index(n);

	if (__builtin_expect(peak_stale(&t->peak, ctr_peak(c)), 0))
		turn(t, c);
	bump(&c[CTR(MPROF_C_ALLOCS, sc)], 1);
	bump(&c[CTR(MPROF_C_BYTES, sc)], n);
	bump(&t->bins[bin][0], 1);
	if (bin == FORMAT_NBINS - 1)
		bump(&t->big[0], n);
	if (peak_alloc_due(&t->peak, n))
		publish(t);
}

/*
 * Count an allocation of n bytes on the stack frames[0..depth-1] into t
 * (this thread's block, or the orphan under its lock); the stack's index
 * (-1: failed).  A stack met recently is found in t's small cache, with no
 * probe (mprof paper: most of the chain repeats).  pos (or NULL): where the
 * table keeps the stack's frames from pos->at on, which the unwinder may
 * not have filled yet (unwind_fill).
 */
static int64_t count_alloc(struct mon_thread *t, uint64_t *frames, int depth, uint32_t flags,
			   uint32_t hash, size_t n, int sc, const struct stacks_pos *pos)
{
	unsigned k = cache_slot(hash);
	const struct stacks_rec *r = t->cache[k].r;
	int64_t idx = -1;
	uint64_t *c;

	if (pos) {
		/* The outer frames are the previous stack's: compare the new ones. */
		if (r && stacks_same_at(r, frames, (uint32_t)depth, flags, pos))
			goto cached;
		idx = stacks_find_at(frames, (uint32_t)depth, flags, hash, pos);
	}
	if (idx < 0) {
		pos = NULL;
		unwind_fill(frames, depth);
		if (r && stacks_same(r, frames, (uint32_t)depth, flags))
			goto cached;
		idx = stacks_intern(frames, (uint32_t)depth, flags, hash, t->last);
		if (idx < 0) {
			mon_trouble("the stack table is full or out of memory", NULL);
			return -1;
		}
	}
	c = block_ctr(t, (uint32_t)idx);
	if (!c) {
		mon_trouble("cannot map memory for counters", NULL);
		return -1;
	}
	t->cache[k].r = stacks_get((uint32_t)idx);
	t->cache[k].ctr = c;
	t->cache[k].idx = (uint64_t)idx;
	goto counted;
cached:
	c = t->cache[k].ctr;
	idx = (int64_t)t->cache[k].idx;
counted:
	t->last = t->cache[k].r;
	/* Check mode fills every frame: a lookup by shared frames is verified. */
	if (__builtin_expect(pos != NULL, 1) && unwind_checking())
		unwind_check_shared(stacks_same(t->last, frames, (uint32_t)depth, flags));
	count(t, c, n, sc);
	return idx;
}

#define ORPHAN_DEPTH 128 /* frames kept by a thread past its block */

/*
 * Where the table keeps the outer frames of the stack just captured (depth
 * frames) when the unwinder reused them from the previous capture, whose
 * stack is known (its index came back from stacks_intern for this
 * profile): into *pos, which is returned; else NULL.
 */
static const struct stacks_pos *shared_place(int depth, struct stacks_pos *pos)
{
	const struct stacks_rec *r;
	uint64_t v;
	int nnew;

	if (!unwind_shared(depth, &nnew, &v) || v - 1 < stacks_base() || v - 1 >= stacks_count())
		return NULL;
	r = stacks_get((uint32_t)(v - 1));
	if ((uint32_t)(depth - nnew) > r->depth || nnew >= depth)
		return NULL;
	stacks_place(r, r->depth - (uint32_t)(depth - nnew), (uint32_t)nnew, pos);
	return pos;
}

/* The rest of an allocation counted on stack idx in profile epoch e. */
static inline __attribute__((always_inline)) void alloc_settle(void *p, size_t n, uint64_t e,
							       int64_t idx)
{
	int as;

	if (idx < 0) {
		ADD(mon.dropped, 1);
		return;
	}
	/*
	 * A restart since self() read epoch e: the allocation was counted in a
	 * block of the old profile, so the object must not carry an index of
	 * the new one (it may: a stack found in, or added to, the new table);
	 * its free will count as unknown.  A restart after this test leaves
	 * idx from the old table, below the new profile's first stack, which
	 * the free recognises.
	 */
	if (__builtin_expect(__atomic_load_n(&mon.epoch, __ATOMIC_ACQUIRE) != e, 0))
		return;
	if (addrmap_put((uintptr_t)p, (uint32_t)idx, n) < 0) {
		mon_trouble("cannot map memory for the address map", NULL);
		return;
	}
	as = __atomic_load_n(&mon.autosave, __ATOMIC_RELAXED);
	if (__builtin_expect(as > 0, 0) && (ADD(mon.nallocs, 1) + 1) % (uint64_t)as == 0)
		autosave();
}

/* A stack counted by its index (known - 1) in t. */
static inline __attribute__((always_inline)) int64_t count_known(struct mon_thread *t,
								  uint64_t known, size_t n)
{
	uint64_t *c = block_ctr(t, (uint32_t)(known - 1));

	if (!c) {
		mon_trouble("cannot map memory for counters", NULL);
		return -1;
	}
	count(t, c, n, format_size_class(n));
	return (int64_t)(known - 1);
}

/* An allocation whose stack must be walked (t: NULL for a thread past its
 * block). */
static __attribute__((noinline)) void alloc_walk(void *p, size_t n,
						 const struct unwind_frame0 *f0,
						 struct mon_thread *t, uint64_t e)
{
	uint64_t orphan_frames[ORPHAN_DEPTH], *frames, known = 0;
	struct stacks_pos pos;
	uint32_t flags, hash;
	int64_t idx;
	int depth;

	frames = t ? t->frames : orphan_frames;
	depth = unwind_capture(frames, t ? MON_MAX_DEPTH : ORPHAN_DEPTH, f0, &flags, e,
			       t ? &known : NULL, &hash);
	if (__atomic_load_n(&mon.state, __ATOMIC_RELAXED) != MON_ON)
		return; /* stopped meanwhile */
	if (t && known) {
		idx = count_known(t, known, n);
		if (idx < 0)
			return;
	} else if (t) {
		idx = count_alloc(t, frames, depth, flags, hash, n, format_size_class(n),
				  shared_place(depth, &pos));
		if (idx >= 0)
			unwind_memo_set(e, (uint64_t)idx + 1, frames, depth);
	} else {
		if (!(t = orphan_lock(e)))
			return;
		idx = count_alloc(t, frames, depth, flags, hash, n, format_size_class(n), NULL);
		orphan_flush(t);
		orphan_unlock();
	}
	alloc_settle(p, n, e, idx);
}

void mon_alloc(void *p, size_t n, const struct unwind_frame0 *f0)
{
	uint64_t e, known = 0;
	struct mon_thread *t = self(&e);
	int64_t idx;

	if ((uint64_t)n >> MON_SIZE_BITS) {
		ADD(mon.dropped, 1);
		return;
	}
	/* A stack the unwinder remembers comes back as its index + 1, for
	 * this profile (epoch e): no walk, no frames, no lookup, straight from
	 * the caller's return address and stack pointer. */
	if (__builtin_expect(t == NULL, 0) || unwind_recall(f0, e, MON_MAX_DEPTH, &known) < 0) {
		alloc_walk(p, n, f0, t, e);
		return;
	}
	if (__atomic_load_n(&mon.state, __ATOMIC_RELAXED) != MON_ON)
		return; /* stopped meanwhile */
	if ((idx = count_known(t, known, n)) >= 0)
		alloc_settle(p, n, e, idx);
}

void mon_free(void *p)
{
	uint64_t e, size = 0;
	struct mon_thread *t = self(&e);
	uint32_t idx = 0;
	int found = addrmap_take((uintptr_t)p, &idx, &size);

	settle_free(t, e, found, idx, size);
}

/*
 * The custom path: always a full walk with nothing remembered (one call
 * site may report objects of several categories, and a remembered walk
 * knows its site, not the category), and the custom map for the object.
 */
void mon_alloc_custom(const void *p, size_t n, int category, const struct unwind_frame0 *f0)
{
	uint64_t orphan_frames[ORPHAN_DEPTH], *frames, e;
	struct mon_thread *t = self(&e);
	uint32_t flags, hash;
	int64_t idx;
	int depth, as;

	if ((uint64_t)n >> MON_SIZE_BITS || !custom_category_ok(category)) {
		ADD(mon.dropped, 1);
		return;
	}
	frames = t ? t->frames : orphan_frames;
	depth = unwind_capture(frames, t ? MON_MAX_DEPTH : ORPHAN_DEPTH, f0, &flags, e, NULL, &hash);
	if (__atomic_load_n(&mon.state, __ATOMIC_RELAXED) != MON_ON)
		return;
	flags |= (uint32_t)category << FORMAT_STACK_CATEGORY_SHIFT;
	if (t) {
		idx = count_alloc(t, frames, depth, flags, hash, n, format_size_class(n), NULL);
	} else {
		if (!(t = orphan_lock(e)))
			return;
		idx = count_alloc(t, frames, depth, flags, hash, n, format_size_class(n), NULL);
		orphan_flush(t);
		orphan_unlock();
	}
	if (idx < 0) {
		ADD(mon.dropped, 1);
		return;
	}
	/* As alloc_settle: an object counted in the old profile of a restart
	 * carries no index. */
	if (__atomic_load_n(&mon.epoch, __ATOMIC_ACQUIRE) != e)
		return;
	if (custom_put((uintptr_t)p, (uint32_t)idx, n) < 0) {
		mon_trouble("cannot map memory for the custom allocation map", NULL);
		return;
	}
	as = __atomic_load_n(&mon.autosave, __ATOMIC_RELAXED);
	if (__builtin_expect(as > 0, 0) && (ADD(mon.nallocs, 1) + 1) % (uint64_t)as == 0)
		autosave();
}

void mon_free_custom(const void *p)
{
	uint64_t e, size = 0;
	struct mon_thread *t = self(&e);
	uint32_t idx = 0;
	int found = custom_take((uintptr_t)p, &idx, &size);

	settle_free(t, e, found, idx, size);
}

/*
 * A Lisp object (lisp.c): like the custom path, a full walk, but counted
 * in class cls (its type's: c f s o) and kept in no map, since the
 * collector frees it, never the program.  rewrite names the interpreter's
 * frames in the captured stack (lisp_ihs.c).
 */
void mon_alloc_lisp(size_t n, int cls, const struct unwind_frame0 *f0,
		    int (*rewrite)(uint64_t *frames, int depth))
{
	uint64_t orphan_frames[ORPHAN_DEPTH], *frames, e;
	struct mon_thread *t = self(&e);
	uint32_t flags, hash;
	int64_t idx;
	int depth, as;

	if ((uint64_t)n >> MON_SIZE_BITS) {
		ADD(mon.dropped, 1);
		return;
	}
	frames = t ? t->frames : orphan_frames;
	depth = unwind_capture(frames, t ? MON_MAX_DEPTH : ORPHAN_DEPTH, f0, &flags, e, NULL, &hash);
	if (__atomic_load_n(&mon.state, __ATOMIC_RELAXED) != MON_ON)
		return;
	if (rewrite(frames, depth))
		hash = stackhash(frames, (uint32_t)depth, flags);
	if (t) {
		idx = count_alloc(t, frames, depth, flags, hash, n, cls, NULL);
	} else {
		if (!(t = orphan_lock(e)))
			return;
		idx = count_alloc(t, frames, depth, flags, hash, n, cls, NULL);
		orphan_unlock();
	}
	if (idx < 0) {
		ADD(mon.dropped, 1);
		return;
	}
	as = __atomic_load_n(&mon.autosave, __ATOMIC_RELAXED);
	if (__builtin_expect(as > 0, 0) && (ADD(mon.nallocs, 1) + 1) % (uint64_t)as == 0)
		autosave();
}

void mon_realloc_take(void *p, struct mon_old *o)
{
	o->size = 0;
	o->idx = 0;
	o->found = addrmap_take((uintptr_t)p, &o->idx, &o->size);
}

void mon_realloc_failed(void *p, const struct mon_old *o)
{
	if (o->found && addrmap_put((uintptr_t)p, o->idx, o->size) < 0)
		mon_trouble("cannot map memory for the address map", NULL);
}

void mon_realloc_freed(void *p, const struct mon_old *o)
{
	/* Only counters change; another thread may own address p by now. */
	uint64_t e;
	struct mon_thread *t = self(&e);

	settle_free(t, e, o->found, o->idx, o->size);
}

/* ---- the API ---- */

/* Autosave counts allocations in one shared counter, only while it is on;
 * it starts from the allocations so far. */
static void autosave_set(int count)
{
	struct writer_totals t;

	if (count > 0 && !__atomic_load_n(&mon.autosave, __ATOMIC_RELAXED)) {
		mon_read_totals(&t);
		__atomic_store_n(&mon.nallocs, t.allocs, __ATOMIC_RELAXED);
	}
	__atomic_store_n(&mon.autosave, count > 0 ? count : 0, __ATOMIC_RELAXED);
}

void mon_set_autosave(int count)
{
	int g = mon_guard;

	mon_guard = 1;
	if (writer_lock() == 0) {
		autosave_set(count);
		writer_unlock();
	}
	mon_guard = g;
}

/* Enter for an API call or the destructor: initialised, configured, guard. */
static int api_enter(void)
{
	int g = mon_guard;

	if (__atomic_load_n(&mon.state, __ATOMIC_ACQUIRE) == MON_UNINIT)
		mon_init();
	mon_guard = 1;
	mon_config();
	return g;
}

void mon_stop(void)
{
	int g = api_enter(), st;

	if (writer_lock() < 0) { /* the watchdog stopped profiling */
		mon_guard = g;
		return;
	}
	st = __atomic_load_n(&mon.state, __ATOMIC_ACQUIRE);
	if (st == MON_ON || st == MON_TROUBLE) {
		if (st == MON_ON)
			__atomic_store_n(&mon.state, MON_STOPPED, __ATOMIC_RELEASE);
		if (!mon.nosave)
			save("stop");
		/* Once written, a stopped profile is not written again at exit. */
		__atomic_store_n(&mon.state, MON_STOPPED, __ATOMIC_RELEASE);
	}
	writer_unlock();
	mon_guard = g;
}

void mon_restart(const char *filename)
{
	int g = api_enter(), e = errno;

	if (__atomic_load_n(&mon.state, __ATOMIC_ACQUIRE) == MON_OFF || mon.tainted) {
		mon_guard = g;
		return;
	}
	if (writer_lock() < 0) {
		errno = e;
		mon_guard = g;
		return;
	}
	if (stacks_lock() < 0) {
		writer_unlock();
		errno = e;
		mon_guard = g;
		return;
	}
	/* The address map keeps the old objects: their stack indices are below
	 * the new profile's, so their frees count as unknown. */
	stacks_reset();
	/* Per-thread counts go with the old epoch (their owners zero them). */
	__atomic_store_n(&mon.dropped, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&mon.nallocs, 0, __ATOMIC_RELAXED);
	/* Before the epoch: a thread that sees the new one finds the new
	 * profile's peak word (an old one's publish, the old word). */
	peak_restart(mon.epoch + 1);
	__atomic_store_n(&mon.epoch, mon.epoch + 1, __ATOMIC_RELEASE);
	mon.start_ns = mon_now_ns();
	mon.nosave = 0;
	if (filename && *filename)
		resolve(mon.out, filename);
	__atomic_store_n(&mon.state, MON_ON, __ATOMIC_RELEASE);
	stacks_unlock();
	writer_unlock();
	errno = e;
	mon_guard = g;
}

/* ---- fork: a consistent snapshot of every table goes to the child ---- */

static int mon_fork_guard;
static int mon_fork_held; /* fork_prepare holds every lock */

static void fork_prepare(void)
{
	mon_fork_guard = mon_guard;
	mon_guard = 1; /* whatever allocates until the handlers: not us */
	mon_fork_held = 0;
	/* A lock the watchdog gave up on (it stopped profiling): no snapshot. */
	if (writer_lock() < 0)
		return;
	if (lock_take(&mon_pool_lock, "the thread blocks") < 0)
		goto writer;
	if (lock_take(&mon_orphan_lock, "the orphan block") < 0)
		goto pool;
	if (stacks_lock() < 0)
		goto orphan;
	if (addrmap_lock_all() < 0)
		goto stacks;
	if (custom_lock() < 0)
		goto addrmap;
	mon_fork_held = 1;
	return;
addrmap:
	addrmap_unlock_all();
stacks:
	stacks_unlock();
orphan:
	lock_give(&mon_orphan_lock);
pool:
	lock_give(&mon_pool_lock);
writer:
	writer_unlock();
}

static void fork_parent(void)
{
	if (mon_fork_held) {
		custom_unlock();
		addrmap_unlock_all();
		stacks_unlock();
		lock_give(&mon_orphan_lock);
		lock_give(&mon_pool_lock);
		writer_unlock();
	}
	mon_guard = mon_fork_guard;
}

/*
 * The child keeps the parent's profile so far: its heap is a copy of the
 * parent's, so the objects in the map are its objects too, and their frees
 * must find them.  It writes FILE.PID (writer.c), never the parent's FILE.
 */
static void fork_child(void)
{
	struct mon_thread *t;

	addrmap_lock_reinit();
	custom_lock_reinit();
	stacks_lock_reinit();
	lock_reinit(&mon_orphan_lock);
	lock_reinit(&mon_pool_lock);
	writer_lock_reinit();
	if (!mon_fork_held) {
		/* Another thread may have been half way through a table: the
		 * child (profiling stopped) writes nothing, and never restarts. */
		mon.nosave = 1;
		mon.tainted = 1;
		mon_guard = mon_fork_guard;
		return;
	}
	/* The other threads are gone: their blocks (counts kept) are free,
	 * and what they held back joins the view of the heap. */
	for (t = mon_all; t; t = t->all) {
		if (t->owned && t != mon_self && t != mon_orphan) {
			t->owned = 0;
			t->pool = mon_pool;
			mon_pool = t;
			if (t->peak.delta)
				peak_publish(&t->peak, t->epoch);
		}
	}
	peak_fork_child(mon_self != NULL);
	mon_guard = mon_fork_guard;
}

/* ---- constructor and destructor ---- */

__attribute__((constructor(101))) static void mon_ctor(void)
{
	int g = api_enter();
	mon_guard = g;
}

/*
 * Priority 101: the last destructor of its object, so it runs after the
 * program's atexit handlers and (linked statically) after the program's
 * own destructors; allocations made there are counted.
 */
__attribute__((destructor(101))) static void mon_fini(void)
{
	int g = api_enter(), st;

	/* libc's own buffers, released as valgrind does (freeres.c), their
	 * frees recorded: they are not the program's leaks. */
	if (__atomic_load_n(&mon.state, __ATOMIC_ACQUIRE) == MON_ON && !mon.no_freeres &&
	    !mon.tainted && freeres_safe((const void *)mon_fini)) {
		mon_guard = 0;
		freeres_run();
		mon_guard = 1;
	}
	if (writer_lock() < 0) { /* the watchdog stopped profiling */
		mon_guard = g;
		return;
	}
	st = __atomic_load_n(&mon.state, __ATOMIC_ACQUIRE);
	/* What is kept, classified (leakscan.h): this frame and those above
	 * it are roots; a profile in trouble may miss objects. */
	if (st == MON_ON && !mon.nosave && mon.leak_scan && !mon.tainted)
		leakscan_run(stacks_base(), stacks_count());
	if ((st == MON_ON || st == MON_TROUBLE) && !mon.nosave)
		save("exit");
	/* What later destructors (of other objects) do is not in the file:
	 * stop recording it. */
	if (st == MON_ON || st == MON_TROUBLE)
		__atomic_store_n(&mon.state, MON_STOPPED, __ATOMIC_RELEASE);
	writer_unlock();
	mon_guard = g;
}
