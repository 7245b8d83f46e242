/*
 * monitor.c - owns the monitor's state (mon_*): initialisation and
 * configuration, the recursion guard, recording allocations and frees into
 * the stack table, the size bins and the address map, the per-thread frame
 * buffers, autosave, mprof_stop/mprof_restart, fork and exit.
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
#include "monitor.h"
#include "mprof.h"
#include "real.h"
#include "stacks.h"
#include "unwind.h"
#include "writer.h"

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
#define FRAMES_BYTES (((MON_MAX_DEPTH * 8) + 4095) & ~4095)

/* ---- per-thread frame buffers (too big for a small thread stack) ---- */

static __thread uint64_t *mon_frames;
static pthread_key_t mon_frames_key;
static int mon_frames_key_ok;
static pthread_mutex_t mon_pool_lock = PTHREAD_MUTEX_INITIALIZER;
static void *mon_pool; /* free buffers, linked through their first word */

static void frames_release(void *b)
{
	pthread_mutex_lock(&mon_pool_lock);
	*(void **)b = mon_pool;
	mon_pool = b;
	pthread_mutex_unlock(&mon_pool_lock);
	mon_frames = NULL;
}

static uint64_t *frames_get(void)
{
	void *b;

	if (mon_frames)
		return mon_frames;
	pthread_mutex_lock(&mon_pool_lock);
	b = mon_pool;
	if (b)
		mon_pool = *(void **)b;
	pthread_mutex_unlock(&mon_pool_lock);
	if (!b)
		b = arena_map(FRAMES_BYTES);
	if (!b)
		return NULL;
	mon_frames = b;
	/* Returned to the pool at thread exit.  May calloc: we hold the guard. */
	if (mon_frames_key_ok)
		pthread_setspecific(mon_frames_key, b);
	return b;
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
		/* Another thread is at it (it takes no lock of ours): wait. */
		while (__atomic_load_n(&mon.configured, __ATOMIC_ACQUIRE) != 2)
			sched_yield();
		return;
	}
	s = getenv("MPROF_OUT");
	resolve(mon.out, s && *s ? s : "mprof.data");
	if (parse_u64(getenv("MPROF_AUTOSAVE"), &v) == 0 && v <= INT_MAX && !mon.autosave)
		mon.autosave = (int)v;
	if (parse_u64(getenv("MPROF_ROOT_PID"), &v) == 0)
		mon.root_pid = (pid_t)v;
	else
		mon.root_pid = getpid();
	if (pthread_key_create(&mon_frames_key, frames_release) == 0)
		mon_frames_key_ok = 1;
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
	mon.epoch = 1;
	mon.start_ns = mon_now_ns();
	/* Before libc has set up environ (allocations by the dynamic loader),
	 * the configuration waits for the constructor or the first save. */
	if (environ)
		mon_config();
	__atomic_store_n(&mon.state, MON_ON, __ATOMIC_RELEASE);
	mon_guard = g;
	errno = e;
}

int mon_enter(int is_alloc)
{
	int st;

	if (mon_guard)
		return 0;
	st = __atomic_load_n(&mon.state, __ATOMIC_ACQUIRE);
	if (st != MON_ON) {
		if (st == MON_UNINIT) {
			mon_init();
			st = __atomic_load_n(&mon.state, __ATOMIC_ACQUIRE);
		}
		if (st != MON_ON) {
			/* Another thread is initialising (never wait: it may need a
			 * loader lock we hold), or trouble stopped us. */
			if (is_alloc && st != MON_STOPPED && st != MON_OFF)
				ADD(mon.totals.dropped, 1);
			return 0;
		}
	}
	mon_guard = 1;
	return 1;
}

/* ---- recording ---- */

static inline uint64_t pack(uint32_t idx, uint64_t size)
{
	return size << 24 | idx;
}

/* Charge a free to the stack that allocated it.  Caller holds p's shard. */
static void credit_free(uint64_t val)
{
	uint64_t size = val >> 24;
	struct stacks_rec *r = stacks_get((uint32_t)(val & 0xffffff));
	int sc = format_size_class(size);
	uint32_t bin = format_bin_index(size);

	ADD(r->counters[MPROF_C_FREES + sc], 1);
	ADD(r->counters[MPROF_C_FREED + sc], size);
	ADD(mon.bins[bin][1], 1);
	ADD(mon.bins[bin][3], size);
	ADD(mon.totals.frees, 1);
	ADD(mon.totals.freed, size);
}

static void autosave(void)
{
	if (writer_trylock() != 0)
		return; /* a save is under way: it will do */
	if (!mon.nosave && __atomic_load_n(&mon.state, __ATOMIC_ACQUIRE) == MON_ON)
		writer_save("autosave");
	writer_unlock();
}

void mon_alloc(void *p, size_t n, void *ret)
{
	uint64_t *frames = frames_get();
	uint32_t flags, bin = format_bin_index(n);
	int depth, sc = format_size_class(n), as, rc = 0;
	uint64_t epoch, nth;
	struct addrmap_shard *s;
	struct stacks_rec *r;
	int64_t idx;

	if (!frames || (uint64_t)n >> MON_SIZE_BITS) {
		ADD(mon.totals.dropped, 1);
		if (!frames)
			mon_trouble("cannot map memory for stack capture", NULL);
		return;
	}
	depth = unwind_capture(frames, MON_MAX_DEPTH, (uint64_t)(uintptr_t)ret, &flags);

	stacks_lock();
	if (__atomic_load_n(&mon.state, __ATOMIC_ACQUIRE) != MON_ON) {
		stacks_unlock();
		return; /* stopped meanwhile */
	}
	idx = stacks_intern(frames, (uint32_t)depth, flags);
	if (idx < 0) {
		stacks_unlock();
		ADD(mon.totals.dropped, 1);
		mon_trouble("the stack table is full or out of memory", NULL);
		return;
	}
	r = stacks_get((uint32_t)idx);
	ADD(r->counters[MPROF_C_ALLOCS + sc], 1);
	ADD(r->counters[MPROF_C_BYTES + sc], n);
	ADD(mon.bins[bin][0], 1);
	ADD(mon.bins[bin][2], n);
	ADD(mon.totals.bytes, n);
	nth = ADD(mon.totals.allocs, 1) + 1;
	epoch = mon.epoch;
	stacks_unlock();

	s = addrmap_lock((uintptr_t)p);
	/* A restart in between emptied the map: the object belongs to the
	 * profile that was thrown away, and its free will be "unknown". */
	if (epoch == mon.epoch)
		rc = addrmap_put(s, (uintptr_t)p, pack((uint32_t)idx, n));
	addrmap_unlock(s);
	if (rc < 0) {
		mon_trouble("cannot map memory for the address map", NULL);
		return;
	}
	as = mon.autosave;
	if (as > 0 && nth % (uint64_t)as == 0)
		autosave();
}

void mon_free(void *p)
{
	struct addrmap_shard *s = addrmap_lock((uintptr_t)p);
	uint64_t val;

	if (addrmap_take(s, (uintptr_t)p, &val))
		credit_free(val);
	else
		ADD(mon.totals.unknown_frees, 1);
	addrmap_unlock(s);
}

void mon_realloc_take(void *p, struct mon_old *o)
{
	struct addrmap_shard *s = addrmap_lock((uintptr_t)p);

	o->found = addrmap_take(s, (uintptr_t)p, &o->val);
	o->epoch = mon.epoch;
	addrmap_unlock(s);
}

void mon_realloc_failed(void *p, const struct mon_old *o)
{
	struct addrmap_shard *s;

	if (!o->found)
		return;
	s = addrmap_lock((uintptr_t)p);
	if (o->epoch == mon.epoch && addrmap_put(s, (uintptr_t)p, o->val) < 0)
		o = NULL;
	addrmap_unlock(s);
	if (!o)
		mon_trouble("cannot map memory for the address map", NULL);
}

void mon_realloc_freed(void *p, const struct mon_old *o)
{
	/* Only counters change; another thread may own address p by now, but
	 * its map entry is not touched. */
	struct addrmap_shard *s = addrmap_lock((uintptr_t)p);

	if (o->epoch == mon.epoch) {
		if (o->found)
			credit_free(o->val);
		else
			ADD(mon.totals.unknown_frees, 1);
	}
	addrmap_unlock(s);
}

/* ---- the API ---- */

void mon_set_autosave(int count)
{
	__atomic_store_n(&mon.autosave, count > 0 ? count : 0, __ATOMIC_RELAXED);
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

	writer_lock();
	st = __atomic_load_n(&mon.state, __ATOMIC_ACQUIRE);
	if (st == MON_ON || st == MON_TROUBLE) {
		if (st == MON_ON)
			__atomic_store_n(&mon.state, MON_STOPPED, __ATOMIC_RELEASE);
		if (!mon.nosave)
			writer_save("stop");
		/* Once written, a stopped profile is not written again at exit. */
		__atomic_store_n(&mon.state, MON_STOPPED, __ATOMIC_RELEASE);
	}
	writer_unlock();
	mon_guard = g;
}

void mon_restart(const char *filename)
{
	int g = api_enter(), e = errno;

	if (__atomic_load_n(&mon.state, __ATOMIC_ACQUIRE) == MON_OFF) {
		mon_guard = g;
		return;
	}
	writer_lock();
	stacks_lock();
	addrmap_lock_all();
	stacks_reset();
	addrmap_clear();
	memset(&mon.totals, 0, sizeof mon.totals);
	memset(mon.bins, 0, sizeof mon.bins);
	mon.epoch++;
	mon.start_ns = mon_now_ns();
	mon.nosave = 0;
	if (filename && *filename)
		resolve(mon.out, filename);
	__atomic_store_n(&mon.state, MON_ON, __ATOMIC_RELEASE);
	addrmap_unlock_all();
	stacks_unlock();
	writer_unlock();
	errno = e;
	mon_guard = g;
}

/* ---- fork: a consistent snapshot of every table goes to the child ---- */

static int mon_fork_guard;

static void fork_prepare(void)
{
	mon_fork_guard = mon_guard;
	mon_guard = 1; /* whatever allocates until the handlers: not us */
	writer_lock();
	pthread_mutex_lock(&mon_pool_lock);
	stacks_lock();
	addrmap_lock_all();
}

static void fork_parent(void)
{
	addrmap_unlock_all();
	stacks_unlock();
	pthread_mutex_unlock(&mon_pool_lock);
	writer_unlock();
	mon_guard = mon_fork_guard;
}

/*
 * The child keeps the parent's profile so far: its heap is a copy of the
 * parent's, so the objects in the map are its objects too, and their frees
 * must find them.  It writes FILE.PID (writer.c), never the parent's FILE.
 */
static void fork_child(void)
{
	addrmap_lock_reinit();
	stacks_lock_reinit();
	pthread_mutex_init(&mon_pool_lock, NULL);
	writer_lock_reinit();
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

	writer_lock();
	st = __atomic_load_n(&mon.state, __ATOMIC_ACQUIRE);
	if ((st == MON_ON || st == MON_TROUBLE) && !mon.nosave)
		writer_save("exit");
	/* What later destructors (of other objects) do is not in the file:
	 * stop recording it. */
	if (st == MON_ON || st == MON_TROUBLE)
		__atomic_store_n(&mon.state, MON_STOPPED, __ATOMIC_RELEASE);
	writer_unlock();
	mon_guard = g;
}
