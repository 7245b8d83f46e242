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

int lock_await(const int *word, int value, const char *name)
{
	uint64_t bound = __atomic_load_n(&lock_bound_ns, __ATOMIC_RELAXED), t0 = now_ns();
	int e = errno;

	while (__atomic_load_n(word, __ATOMIC_ACQUIRE) != value) {
		if (now_ns() - t0 >= bound) {
			errno = e;
			return give_up(name, bound);
		}
		sched_yield();
	}
	errno = e;
	return 0;
}

static __attribute__((noinline)) int lock_wait(struct lock *l, const char *name)
{
	uint64_t bound = __atomic_load_n(&lock_bound_ns, __ATOMIC_RELAXED), t0 = now_ns(), t;
	int e = errno;

	/* Held for microseconds as a rule: spin a little first. */
	for (int i = 0; i < 200; i++) {
		__builtin_ia32_pause();
		if (__atomic_load_n(&l->v, __ATOMIC_RELAXED) == 0 && lock_try(l) == 0)
			return 0;
	}
	while (__atomic_exchange_n(&l->v, 2, __ATOMIC_ACQUIRE) != 0) {
		t = now_ns() - t0;
		if (t >= bound) {
			errno = e;
			return give_up(name, bound);
		}
		struct timespec left = { (time_t)((bound - t) / 1000000000u),
					 (long)((bound - t) % 1000000000u) };
		syscall(SYS_futex, &l->v, FUTEX_WAIT_PRIVATE, 2, &left, NULL, 0);
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
