/*
 * bounds.c - owns finding the calling thread's stack bounds (bounds_*)
 * for the unwinders' safe reads, without libc's help.
 *
 * glibc's pthread_getattr_np, the obvious way, takes the thread's lock
 * and then allocates (its cpuset; for the main thread also fopen of
 * /proc/self/maps).  Called from inside malloc it deadlocks whenever the
 * program is itself inside pthread_getattr_np: Rust's std, the JVM and
 * the Boehm GC all ask for the main thread's stack at start-up, and
 * glibc's fopen calls malloc while holding the lock (issue 12).
 *
 * So the bounds come from the kernel: the maps (/proc/thread-self/maps
 * first: /proc/self/maps reads as empty once the main thread has exited)
 * read with raw system calls into a buffer on our own stack, parsed here.  A thread's
 * stack is found from an address that lies on it whatever the thread is
 * running on now: for a thread glibc created, its thread pointer (glibc
 * keeps the thread descriptor at the top of the thread's stack block,
 * also for stacks the program supplied); for the main thread,
 * __libc_stack_end (the stack pointer the kernel started the process
 * with).  The stack's top is the end of the mapping holding that address,
 * its low end where the run of contiguous readable mappings up to it
 * starts; the main stack's low end leaves room for the growth that
 * RLIMIT_STACK allows, down to the mapping below it.
 *
 * A thread stack found once is kept in a small cache keyed by its thread
 * pointer: glibc reuses the stack blocks of threads that ended, so a
 * program that makes many short threads reads the maps about once per
 * block, not once per thread (5 us in a small process, ~170 us in
 * one of 1000 mappings).
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bounds.h"

extern void *__libc_stack_end;

/* ---- the cache of thread stacks ---- */

#define CACHE_N 16
static struct {
	uintptr_t tp, lo, hi;
} bounds_cache[CACHE_N];
static unsigned bounds_next;
static int bounds_busy; /* try-lock only: nobody ever waits on it */

static int cache_take(void)
{
	return __atomic_exchange_n(&bounds_busy, 1, __ATOMIC_ACQUIRE) == 0;
}

static void cache_give(void)
{
	__atomic_store_n(&bounds_busy, 0, __ATOMIC_RELEASE);
}

static int cache_find(uintptr_t tp, uintptr_t sp, uintptr_t *lo, uintptr_t *hi)
{
	int found = 0;

	if (!cache_take())
		return 0;
	for (int i = 0; i < CACHE_N && !found; i++) {
		if (bounds_cache[i].tp == tp && sp >= bounds_cache[i].lo &&
		    sp < bounds_cache[i].hi) {
			*lo = bounds_cache[i].lo;
			*hi = bounds_cache[i].hi;
			found = 1;
		}
	}
	cache_give();
	return found;
}

static void cache_put(uintptr_t tp, uintptr_t lo, uintptr_t hi)
{
	if (!cache_take())
		return;
	unsigned i = bounds_next++ % CACHE_N;
	bounds_cache[i].tp = tp;
	bounds_cache[i].lo = lo;
	bounds_cache[i].hi = hi;
	cache_give();
}

/* ---- /proc/self/maps ---- */

/*
 * What the parse found for key: the mapping holding it ends at hi; lo is
 * where the run of contiguous readable mappings that ends with it starts
 * (the stack's low end may lie in another mapping: a guard zone the JVM
 * made inside it, growth), below the end of the mapping before that run.
 */
struct run {
	uintptr_t key;
	uintptr_t lo, hi;
	uintptr_t below;
	int found;
};

struct parse {
	int field;         /* 0 start, 1 end, 2 perms, 3 the rest of the line */
	int digits;        /* hex digits of the field so far */
	uintptr_t s, e;    /* the line's range */
	int readable;
	int cur;           /* the current run of readable mappings is valid */
	uintptr_t cur_lo, cur_hi, cur_below, prev_end;
	int lines;
	struct run *want;
	int nwant;
};

/* One mapping [s, e), in address order (the kernel lists them so). */
static void mapping(struct parse *p, uintptr_t s, uintptr_t e, int readable)
{
	p->lines++;
	if (readable && p->cur && s == p->cur_hi) {
		p->cur_hi = e;
	} else {
		p->cur = readable;
		p->cur_lo = s;
		p->cur_hi = e;
		p->cur_below = p->prev_end;
	}
	p->prev_end = e;
	for (int i = 0; i < p->nwant; i++) {
		struct run *w = &p->want[i];
		if (readable && !w->found && w->key >= s && w->key < e) {
			/* Not the run's end: a readable neighbour above the
			 * stack may be unmapped later, the stack's top not. */
			w->lo = p->cur_lo;
			w->hi = e;
			w->below = p->cur_below;
			w->found = 1;
		}
	}
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

static void feed(struct parse *p, const char *buf, long n)
{
	for (long i = 0; i < n; i++) {
		char c = buf[i];
		int v;

		if (c == '\n') {
			if (p->field == 3 && p->s < p->e)
				mapping(p, p->s, p->e, p->readable);
			p->field = p->digits = 0;
			p->s = p->e = 0;
			continue;
		}
		switch (p->field) {
		case 0:
		case 1:
			if ((v = hexval(c)) >= 0 && p->digits < 16) {
				uintptr_t *x = p->field ? &p->e : &p->s;
				*x = *x << 4 | (uintptr_t)v;
				p->digits++;
			} else if ((c == '-' && p->field == 0) || (c == ' ' && p->field == 1)) {
				p->field++;
				p->digits = 0;
			} else {
				p->field = 4; /* not a line we understand: skip it */
			}
			break;
		case 2:
			p->readable = c == 'r';
			p->field = 3;
			break;
		default:
			break;
		}
	}
}

/* Parse one maps file into want[]; 0, or -1 if it cannot be read or is
 * empty (/proc/self/maps is, once the main thread has exited). */
static int read_maps(const char *path, struct run *want, int nwant)
{
	struct parse p = { .want = want, .nwant = nwant };
	char buf[1024];
	long fd, n;

	fd = syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	for (;;) {
		n = syscall(SYS_read, (int)fd, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		feed(&p, buf, n);
	}
	syscall(SYS_close, (int)fd);
	return n < 0 || p.lines == 0 ? -1 : 0;
}

/* The maps, through this thread's own view first: /proc/self/ reads as
 * empty once the main thread has exited. */
static int read_any_maps(long tid, struct run *want, int nwant)
{
	char task[48] = "/proc/self/task/", num[24];
	size_t n = strlen(task), k = 0;

	if (read_maps("/proc/thread-self/maps", want, nwant) == 0)
		return 0;
	do
		num[k++] = (char)('0' + tid % 10);
	while ((tid /= 10) > 0 && k < sizeof num);
	while (k)
		task[n++] = num[--k];
	memcpy(task + n, "/maps", 6);
	if (read_maps(task, want, nwant) == 0)
		return 0;
	return read_maps("/proc/self/maps", want, nwant);
}

int bounds_thread(uintptr_t sp, uintptr_t *lo, uintptr_t *hi)
{
	uintptr_t tp = (uintptr_t)__builtin_thread_pointer();
	long tid = syscall(SYS_gettid);
	int is_main = tid == syscall(SYS_getpid), e = errno;
	struct run want[2] = { { .key = tp }, { .key = (uintptr_t)__libc_stack_end } };
	struct run *a = &want[0], *b = &want[1], *pick;
	struct rlimit rl;

	if (!is_main && cache_find(tp, sp, lo, hi))
		return 0;
	if (read_any_maps(tid, want, b->key ? 2 : 1) < 0) {
		errno = e;
		return -1;
	}
	/* The main stack grows down, as far as RLIMIT_STACK lets it and never
	 * into the mapping below. */
	if (b->found) {
		uintptr_t low = b->below;
		if (syscall(SYS_prlimit64, 0, RLIMIT_STACK, NULL, &rl) == 0 &&
		    rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < b->hi && b->hi - rl.rlim_cur > low)
			low = b->hi - rl.rlim_cur;
		if (low < b->lo)
			b->lo = low;
	}
	errno = e;
	/* The stack sp is on, if it is this thread's; else the thread's own
	 * (this capture is made on another stack). */
	if (a->found && sp >= a->lo && sp < a->hi)
		pick = a;
	else if (b->found && sp >= b->lo && sp < b->hi)
		pick = b;
	else
		pick = is_main ? b : a;
	if (!pick->found)
		return -1;
	if (pick == a)
		cache_put(tp, a->lo, a->hi);
	*lo = pick->lo;
	*hi = pick->hi;
	return 0;
}
