/*
 * lock.c - owns the monitor's locks (lock_*): small futex mutexes (three
 * states, as in Drepper's "Futexes Are Tricky") whose waits are bounded.
 *
 * The monitor runs inside the program's malloc, so a wait of ours can
 * close a cycle with the program: a thread holding a lock of the
 * program's (the loader's, in a dl_iterate_phdr callback) may call into
 * the monitor while another thread holds a monitor lock and waits for
 * that same lock of the program's.  The monitor's locks are held for
 * microseconds (a save: milliseconds), so a wait past the bound is such a
 * cycle: the waiter gives up, the hook stops profiling (one line on
 * stderr), and the program goes on, as it would without us.
 *
 * Only raw futex calls and clock_gettime (the vDSO): no libc lock, no
 * allocation.
 */
#include <errno.h>
#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "lock.h"

static uint64_t lock_bound_ns = (uint64_t)LOCK_BOUND_MS * 1000000;
static void (*lock_hook)(const char *, uint64_t);

void lock_set_bound(uint64_t ms)
{
	if (ms > 1000000000u) /* 11 days: no overflow in ns */
		ms = 1000000000u;
	__atomic_store_n(&lock_bound_ns, ms * 1000000, __ATOMIC_RELAXED);
}

void lock_on_timeout(void (*hook)(const char *name, uint64_t ms))
{
	__atomic_store_n(&lock_hook, hook, __ATOMIC_RELEASE);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int lock_try(struct lock *l)
{
	int c = 0;

	if (__atomic_compare_exchange_n(&l->v, &c, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return 0;
	return -1;
}

/* A wait is over its bound: say so (the hook), -1. */
static int give_up(const char *name, uint64_t bound)
{
	void (*hook)(const char *, uint64_t) = __atomic_load_n(&lock_hook, __ATOMIC_ACQUIRE);

	if (hook)
		hook(name, bound / 1000000);
	return -1;
}

/*
 * The time a wait has lasted, counted in rounds: a round counts for what
 * it took, but never more than the most it could have taken had the
 * process run (cap).  A process stopped meanwhile (SIGSTOP, ^Z, a
 * debugger) stopped the lock's holder too: that time is nobody's deadlock.
 */
struct waited {
	uint64_t total, bound, round0;
};

static void wait_start(struct waited *w)
{
	w->total = 0;
	w->bound = __atomic_load_n(&lock_bound_ns, __ATOMIC_RELAXED);
	w->round0 = now_ns();
}

/* Count the round that just ended (at most cap); 1 when over the bound. */
static int wait_round(struct waited *w, uint64_t cap)
{
	uint64_t t = now_ns(), d = t - w->round0;

	w->total += d < cap ? d : cap;
	w->round0 = t;
	return w->total >= w->bound;
}

#define ROUND_NS 100000000u /* a futex wait's longest round: 100 ms */
#define SLACK_NS 50000000u  /* the scheduler's lateness allowed a round */

int lock_await(const int *word, int value, const char *name)
{
	struct waited w;
	int e = errno;

	wait_start(&w);
	while (__atomic_load_n(word, __ATOMIC_ACQUIRE) != value) {
		sched_yield();
		if (wait_round(&w, SLACK_NS)) {
			errno = e;
			return give_up(name, w.bound);
		}
	}
	errno = e;
	return 0;
}

static __attribute__((noinline)) int lock_wait(struct lock *l, const char *name)
{
	struct timespec round = { 0, ROUND_NS };
	struct waited w;
	int e = errno;

	/* Held for microseconds as a rule: spin a little first. */
	for (int i = 0; i < 200; i++) {
		__builtin_ia32_pause();
		if (__atomic_load_n(&l->v, __ATOMIC_RELAXED) == 0 && lock_try(l) == 0)
			return 0;
	}
	wait_start(&w);
	while (__atomic_exchange_n(&l->v, 2, __ATOMIC_ACQUIRE) != 0) {
		syscall(SYS_futex, &l->v, FUTEX_WAIT_PRIVATE, 2, &round, NULL, 0);
		if (wait_round(&w, ROUND_NS + SLACK_NS)) {
			/* A last try: the holder may have let go just now. */
			if (__atomic_exchange_n(&l->v, 2, __ATOMIC_ACQUIRE) == 0)
				break;
			errno = e;
			return give_up(name, w.bound);
		}
	}
	errno = e;
	return 0;
}

int lock_take(struct lock *l, const char *name)
{
	if (__builtin_expect(lock_try(l) == 0, 1))
		return 0;
	return lock_wait(l, name);
}

void lock_give(struct lock *l)
{
	if (__atomic_exchange_n(&l->v, 0, __ATOMIC_RELEASE) == 2) {
		int e = errno;
		syscall(SYS_futex, &l->v, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
		errno = e;
	}
}

void lock_reinit(struct lock *l)
{
	__atomic_store_n(&l->v, 0, __ATOMIC_RELAXED);
}
