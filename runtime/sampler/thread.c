/*
 * thread.c - owns the sampler's threads (th_*): the registry the watcher
 * walks, the interposed pthread_create that sets a new thread up before it
 * runs the program's code, each thread's events (one per resource, owned
 * by the thread: overflow signals go to it alone), and their release at
 * thread exit (a pthread key destructor) and in a forked child.
 *
 * Everything here runs outside signal context and may call libc freely
 * (malloc, timer_create), but for the stack bounds, which come from
 * bounds.c (pthread_getattr_np takes a lock the program may hold).  The
 * signal handler only reads cp_self.ready and the fds and state below it,
 * all this thread's own.
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "altstack.h"
#include "fds.h"
#include "kcpu.h"
#include "perf.h"
#include "sink.h"
#include "state.h"
#include "thread.h"
#include "unwind.h"
#include "watch.h"

struct cp_slot th_slots[TH_MAX];
int th_nslots;
int th_watched;
static pthread_key_t th_key;

typedef int create_fn(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
static create_fn *real_create;

void th_lookup(void)
{
	/* Now, not at the first pthread_create: dlsym takes the loader's lock. */
	if (!real_create)
		real_create = (create_fn *)dlsym(RTLD_NEXT, "pthread_create");
}

/*
 * The key's destructor.  Created first, the key's destructor runs first in
 * each of glibc's rounds, before those of the program's keys, which may
 * still run instrumented code: it sets its value again (one more round)
 * until the last round, and tears down then.
 */
static void th_key_exit(void *v)
{
	uintptr_t round = (uintptr_t)v;

	if (round < PTHREAD_DESTRUCTOR_ITERATIONS && pthread_setspecific(th_key, (void *)(round + 1)) == 0)
		return;
	th_teardown();
}

int th_init(void)
{
	return pthread_key_create(&th_key, th_key_exit) == 0 ? 0 : -1;
}

/* Stop s's rings counting (their records stay readable). */
static void rings_disable(struct cp_slot *s)
{
	pf_disable(s->ring.fd);
	pf_disable(s->regs.fd);
}

void th_rings_close(struct cp_slot *s)
{
	pf_close_ring(&s->ring);
	pf_close_ring(&s->regs);
}

static struct cp_slot *claim(int tid)
{
	for (int i = 0; i < TH_MAX; i++) {
		int want = TH_FREE;
		if (__atomic_compare_exchange_n(&th_slots[i].state, &want, TH_CLAIMED, 0,
						__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
			struct cp_slot *s = &th_slots[i];
			s->tid = tid;
			s->real_pending = 0;
			s->real_carry = 0;
			s->seg_cpu = SEG_UNKNOWN;
			s->seg_hits = 0;
			s->proc_fd = s->sched_fd = -1;
			s->ring.fd = s->regs.fd = -1;
			s->ring.map = s->regs.map = NULL;
			s->last_ip = s->last_sp = s->last_bp = 0;
			s->self = NULL;
			int n = __atomic_load_n(&th_nslots, __ATOMIC_RELAXED);
			while (n < i + 1 &&
			       !__atomic_compare_exchange_n(&th_nslots, &n, i + 1, 0, __ATOMIC_RELEASE,
							    __ATOMIC_RELAXED))
				;
			return s;
		}
	}
	return NULL;
}

/* A timer on this thread's CPU time, sending CP_SIG to this thread. */
static int clock_timer(struct cp_thread *t, struct cp_rstate *s)
{
	struct sigevent ev;
	struct itimerspec it;
	uint64_t first = cp_draw_first(t, cp.clock_interval);

	memset(&ev, 0, sizeof ev);
	ev.sigev_notify = SIGEV_THREAD_ID;
	ev.sigev_signo = CP_SIG;
	ev.sigev_value.sival_int = CP_TIMER_TAG;
	ev._sigev_un._tid = t->tid;
	if (timer_create(CLOCK_THREAD_CPUTIME_ID, &ev, &s->timer) < 0)
		return -1;
	it.it_value.tv_sec = (time_t)(first / 1000000000);
	it.it_value.tv_nsec = (long)(first % 1000000000);
	it.it_interval.tv_sec = (time_t)(cp.clock_interval / 1000000000);
	it.it_interval.tv_nsec = (long)(cp.clock_interval % 1000000000);
	s->has_timer = 1;
	s->next = first;
	s->base = 0;
	{
		struct timespec ts;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
		s->base = (uint64_t)ts.tv_sec * 1000000000 + (uint64_t)ts.tv_nsec;
	}
	if (timer_settime(s->timer, 0, &it, NULL) < 0) {
		timer_delete(s->timer);
		s->has_timer = 0;
		return -1;
	}
	return 0;
}

static int open_signal_event(struct cp_thread *t, int r, uint32_t type, uint64_t config,
			     uint64_t mean)
{
	struct cp_rstate *s = &t->r[r];
	uint64_t first = s->next; /* drawn in setup_events */
	int fd;

	(void)mean;
	if (r == RES_SYSCALLS) /* see rearm() in sampler.c */
		first = first + 1 < cp.sys_min_period ? cp.sys_min_period : first + 1;
	if (r == RES_CPU && first < CP_CLOCK_MIN_PERIOD)
		first = CP_CLOCK_MIN_PERIOD;
	fd = pf_open_signal(type, config, first);
	if (fd < 0)
		return fd;
	s->fd = fd;
	s->base = 0;
	return 0;
}

/*
 * Whether this thread may take one more descriptor for an event of
 * resource `what` (fds.h: the collectors keep to an eighth of the
 * program's limit); if not, said once, unless quiet (the event has a way
 * that takes none).
 */
static int spare_fd(const char *what, int quiet)
{
	char b[96];
	long limit;
	int budget;

	if (fds_spare(1, 0))
		return 1;
	if (quiet)
		return 0;
	budget = fds_budget(&limit);
	snprintf(b, sizeof b, "%d of the program's %ld descriptors (ulimit -n)", budget, limit);
	cp_warn(what, ": some threads are not sampled: the profiler holds at most ", b);
	return 0;
}

/* This thread's events; the syscall tracepoint last (see sampler.c). */
static void setup_events(struct cp_thread *t)
{
	for (int r = 0; r < RES_N; r++) {
		t->r[r].fd = -1;
		t->r[r].has_timer = 0;
		t->r[r].consumed = t->r[r].samples = 0;
		t->r[r].armed = t->r[r].armed_period = 0; /* a fork child's new clock */
		t->r[r].owed = 0; /* a fork child's are the parent's */
		t->r[r].owed_armed = 0;
		t->r[r].next = cp.col[r] >= 0 || (r == RES_CPU && cp.clock_needed)
				       ? cp_draw_first(t, cp.interval[r])
				       : UINT64_MAX;
		/* The kernel's period is the first boundary's, which may be
		 * short: redrawn at the first overflow (sampler.c's rearm; the
		 * task-clock's is the next boundary's at every overflow). */
		t->r[r].samples = 7;
	}
	t->nsys = 0;
	t->nsysframes = 0;
	if (cp.clock_needed) {
		int rc = -1;
		/* Past the descriptor budget, this thread's clock is a timer:
		 * the same hits, in fewer samples. */
		if (cp.clock_perf && spare_fd("cpu", 1)) {
			rc = open_signal_event(t, RES_CPU, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK,
					       cp.clock_interval);
			if (rc < 0) {
				/* This thread and those after it use timers. */
				cp_warn("cpu: perf task-clock refused (", strerror(-rc),
					"); using a POSIX CPU-time timer");
				cp.clock_perf = 0;
			}
		}
		if (rc < 0)
			rc = clock_timer(t, &t->r[RES_CPU]);
		if (rc < 0)
			cp_warn("a thread's CPU clock could not be set up: ", strerror(errno),
				"; its CPU time is not sampled");
	}
	for (int r = 0; r < RES_N; r++) {
		const struct res_info *ri = &res_table[r];
		int rc;

		if (cp.col[r] < 0 || r == RES_SYSCALLS)
			continue;
		if ((ri->how == RES_HOW_PERF || (ri->how == RES_HOW_RING && t->slot)) &&
		    !spare_fd(ri->name, 0))
			continue;
		if (ri->how == RES_HOW_PERF) {
			rc = open_signal_event(t, r, ri->perf_type, ri->perf_config, cp.interval[r]);
			if (rc < 0)
				cp_warn(ri->name, ": perf_event_open failed in a thread: ", strerror(-rc));

		} else if (ri->how == RES_HOW_RING && t->slot) {
			uint64_t first = cp_draw_first(t, cp.interval[r]);
			rc = pf_open_ring(&t->slot->ring, t->tid, ri->perf_type, ri->perf_config, first,
					  PF_STACK_COPY, 0);
			if (rc < 0)
				cp_warn(ri->name, ": perf ring buffer failed in a thread: ", strerror(-rc));
			t->slot->ring_last = 0;
			t->slot->ring_next = first;
		}
	}
	/* real: registers at every switch-out, so the watcher knows the bp
	 * of a thread blocked in the kernel (best effort: without it, frame
	 * pointer code is walked only up to its first frame). */
	if (cp.col[RES_REAL] >= 0 && t->slot && !cp.no_perf && spare_fd("real", 1))
		pf_open_ring(&t->slot->regs, t->tid, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, 1,
			     0, 0);
	if (cp.col[RES_SYSCALLS] >= 0 && spare_fd("syscalls", 0)) {
		int rc = open_signal_event(t, RES_SYSCALLS, PERF_TYPE_TRACEPOINT,
					   (uint64_t)cp.syscall_tp, cp.interval[RES_SYSCALLS]);
		if (rc < 0)
			cp_warn("syscalls: perf_event_open failed in a thread: ", strerror(-rc), NULL);
		/* The enabling ioctl's own sys_exit is counted. */
		t->nsys = 1;
	}
	/* Last: the kernel-mode rings are worth less than any event asked
	 * for, and come out of the same descriptors and locked memory. */
	kc_open(t);
}

static void close_events(struct cp_thread *t)
{
	for (int r = 0; r < RES_N; r++) {
		if (t->r[r].fd >= 0)
			fds_close(t->r[r].fd);
		if (t->r[r].has_timer)
			timer_delete(t->r[r].timer);
		t->r[r].fd = -1;
		t->r[r].has_timer = 0;
	}
}

static void bounds(struct cp_slot *s)
{
	uintptr_t lo, hi;

	s->stack_lo = s->stack_hi = 0;
	if (unwind_thread_stack(&lo, &hi) == 0) {
		s->stack_lo = lo;
		s->stack_hi = hi;
	}
}

int th_setup(void)
{
	struct cp_thread *t = &cp_self;

	t->ready = 0;
	/* Before any event of the thread's can signal it: the handler must
	 * never run on a stack it interrupted (altstack.h). */
	if (as_setup() < 0) {
		cp_warn("cannot set up an alternate signal stack: a thread is not sampled", NULL,
			NULL);
		return -1;
	}
	t->tid = (int)syscall(SYS_gettid);
	t->rng = ((uint64_t)t->tid << 32 ^ cp_now(CLOCK_MONOTONIC)) | 1;
	/* Without its stack's bounds (no /proc) a thread is still sampled:
	 * its samples hold the interrupted pc alone (unwind.h). */
	unwind_thread_init();
	if (!t->frames) {
		/* Populated now: a first touch in the handler would count as
		 * one of the program's page faults. */
		size_t len = ((cp.py ? 6 : 2) + (cp.col[RES_SYSCALLS] >= 0)) * CP_MAX_DEPTH *
			     sizeof(uint64_t);
		void *m = mmap(NULL, len, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
		if (m == MAP_FAILED) {
			as_release();
			return -1;
		}
		t->frames = m;
		t->frames_len = len;
		t->cframes = t->frames + CP_MAX_DEPTH;
		t->lframes = cp.py ? t->cframes + CP_MAX_DEPTH : NULL;
		t->ioframes = cp.py ? t->lframes + 2 * CP_MAX_DEPTH : NULL;
		t->sysframes = cp.col[RES_SYSCALLS] >= 0
				       ? t->frames + (cp.py ? 6 : 2) * CP_MAX_DEPTH
				       : NULL;
	}
	t->slot = claim(t->tid);
	if (t->slot) {
		bounds(t->slot);
		t->slot->self = t;
		/* Past the descriptor budget, the watcher opens them for
		 * each look (watch.h). */
		if (cp.col[RES_REAL] >= 0 && fds_spare(2, 0))
			wt_thread_files(t->slot);
		else if (cp.col[RES_REAL] >= 0)
			t->slot->proc_fd = t->slot->sched_fd = WT_FILES_EACH_LOOK;
	}
	setup_events(t);
	if (t->slot)
		__atomic_store_n(&t->slot->state, TH_LIVE, __ATOMIC_RELEASE);
	pthread_setspecific(th_key, (void *)1);
	__atomic_store_n(&t->ready, 1, __ATOMIC_RELEASE);
	return 0;
}

void th_quiet_all(void)
{
	static const struct itimerspec off;

	for (int i = 0; i < __atomic_load_n(&th_nslots, __ATOMIC_ACQUIRE); i++) {
		struct cp_slot *s = &th_slots[i];
		struct cp_thread *t;

		if (__atomic_load_n(&s->state, __ATOMIC_ACQUIRE) != TH_LIVE || !(t = s->self))
			continue;
		for (int r = 0; r < RES_N; r++) {
			if (t->r[r].fd >= 0)
				pf_disable(t->r[r].fd);
			if (t->r[r].has_timer)
				timer_settime(t->r[r].timer, 0, &off, NULL);
		}
		rings_disable(s);
	}
}

/*
 * The thread ends: its kernel-mode records since its last signal (those
 * its rings hold now: the teardown's own system calls come after, kc_hold)
 * and the CPU clock's boundaries crossed since that signal (kcpu.h), then
 * its events closed.  With CP_SIG held: reading a ring outside the
 * handler under -e page-faults:10 livelocked (its page's fault counted,
 * every tenth a signal, and the signal, pending, undid the fault).
 */
/*
 * The thread ends: the system calls' boundaries crossed since its last
 * sample, and those owed (sampler.c: found crossed away from a call's
 * return), go to its last sample's stack, a call of the program's, where
 * they were lost (a thread of 200 calls lost a fifth of them).
 */
static void syscalls_exit(struct cp_thread *t)
{
	struct cp_rstate *s = &t->r[RES_SYSCALLS];
	uint64_t own = t->nsys, raw, hits;

	if (s->fd < 0 || cp.col[RES_SYSCALLS] < 0)
		return;
	raw = pf_read(s->fd);
	t->nsys++;
	hits = s->owed + (raw >= s->base + own ? cp_credit(t, RES_SYSCALLS, raw - s->base - own) : 0);
	s->owed = 0;
	if (!hits)
		return;
	if (cp_sink.here)
		cp_sink.here(0, cp.col[RES_SYSCALLS], hits, 0);
	else if (t->nsysframes > 0)
		cp_sink.stack(t->sysframes, t->nsysframes, t->sysflags, (uint32_t)t->tid,
			      cp.col[RES_SYSCALLS], hits);
}

static void close_all(struct cp_thread *t)
{
	struct cp_rstate *s = &t->r[RES_CPU];

	syscalls_exit(t); /* not ready: no signal reads the count now */
	if (t->kc) {
		uint64_t mask = 1ull << (CP_SIG - 1), old;

		kc_hold(t);
		if (syscall(SYS_rt_sigprocmask, SIG_BLOCK, &mask, &old, sizeof mask) == 0) {
			kc_drain(t);
			if (s->fd >= 0 && cp.col[RES_CPU] >= 0) {
				uint64_t raw = pf_read(s->fd);
				kc_exit(t, raw >= s->base ? cp_credit(t, RES_CPU, raw - s->base) : 0);
			}
			close_events(t);
			kc_close(t);
			syscall(SYS_rt_sigprocmask, SIG_SETMASK, &old, NULL, sizeof old);
			return;
		}
	}
	close_events(t);
	kc_close(t);
}

void th_teardown(void)
{
	struct cp_thread *t = &cp_self;

	__atomic_store_n(&t->ready, 0, __ATOMIC_SEQ_CST);
	close_all(t);
	if (t->slot) {
		/* What this thread does from here on (joining the watcher at
		 * exit, say) is not the program's. */
		rings_disable(t->slot);
		if (__atomic_load_n(&th_watched, __ATOMIC_ACQUIRE)) {
			/* The watcher drains and closes the rings, then frees it. */
			__atomic_store_n(&t->slot->state, TH_EXITED, __ATOMIC_RELEASE);
		} else {
			th_rings_close(t->slot);
			__atomic_store_n(&t->slot->state, TH_FREE, __ATOMIC_RELEASE);
		}
		t->slot = NULL;
	}
	if (cp_sink.thread_exit)
		cp_sink.thread_exit();
	/* Last: a signal of the sampler's may still be pending; from here on
	 * it runs on the thread's stack, and is dropped (not ready). */
	as_release();
	/* Nothing uses them once the thread is not ready (the handler, the
	 * interposed calls).  Kept, a program that made 20,000 threads one
	 * after another held 320 MB of them. */
	if (t->frames)
		munmap(t->frames, t->frames_len);
	t->frames = t->cframes = t->lframes = t->ioframes = t->sysframes = NULL;
}

void th_after_fork(void)
{
	struct cp_thread *t = &cp_self;
	int was = t->ready;

	t->ready = 0;
	/* Inherited descriptors count the parent's threads: close them, the
	 * other threads' events too (their state is still in the child's
	 * memory, as they left it; a child of a program with many threads
	 * held all their events, and then took its own thread's clock out of
	 * a budget they used up). */
	for (int i = 0; i < th_nslots; i++) {
		struct cp_slot *s = &th_slots[i];
		if (s->state == TH_FREE)
			continue;
		if (s->state == TH_LIVE && s->self && s->self != t) {
			for (int r = 0; r < RES_N; r++)
				if (s->self->r[r].fd >= 0)
					fds_close(s->self->r[r].fd);
			kc_close(s->self);
		}
		th_rings_close(s);
		if (s->proc_fd >= 0)
			fds_close(s->proc_fd);
		if (s->sched_fd >= 0)
			fds_close(s->sched_fd);
		s->proc_fd = s->sched_fd = -1;
		s->state = TH_FREE;
	}
	th_nslots = 0;
	for (int r = 0; r < RES_N; r++)
		if (t->r[r].fd >= 0)
			fds_close(t->r[r].fd);
	kc_close(t);
	/* POSIX timers are not inherited. */
	for (int r = 0; r < RES_N; r++) {
		t->r[r].fd = -1;
		t->r[r].has_timer = 0;
	}
	t->slot = NULL;
	if (was)
		th_setup();
}

/* ---- pthread_create ---- */

struct th_start {
	void *(*fn)(void *);
	void *arg;
	int sigview; /* the creator's (signals.c): a thread inherits its mask */
	int sigreal_set;
	sigset_t sigreal;
};

static void *trampoline(void *p)
{
	struct th_start s = *(struct th_start *)p;

	free(p);
	if (__atomic_load_n(&cp.on, __ATOMIC_ACQUIRE))
		th_setup();
	cp_self.sigview = s.sigview;
	cp_self.sigreal = s.sigreal;
	cp_self.sigreal_set = s.sigreal_set;
	cp_self.sigview_inherited = s.sigview;
	return s.fn(s.arg);
}

int th_create_unprofiled(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
	if (!real_create)
		real_create = (create_fn *)dlsym(RTLD_NEXT, "pthread_create");
	return real_create ? real_create(th, attr, fn, arg) : EAGAIN;
}

CP_VIS int pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
	struct th_start *s;
	int rc;

	if (!__atomic_load_n(&cp.on, __ATOMIC_ACQUIRE) || !(s = malloc(sizeof *s)))
		return th_create_unprofiled(th, attr, fn, arg);
	s->fn = fn;
	s->arg = arg;
	s->sigview = cp_self.sigview;
	s->sigreal = cp_self.sigreal;
	s->sigreal_set = cp_self.sigreal_set;
	rc = th_create_unprofiled(th, attr, trampoline, s);
	if (rc != 0)
		free(s);
	return rc;
}
