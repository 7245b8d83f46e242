/*
 * watch.c - owns the watcher thread (wt_*): a thread of the sampler's own
 * that samples what a signal must not interrupt.
 *
 * real (wall-clock time, every thread): at each tick (the real interval,
 * drawn around its mean), every thread has used one tick of real time.  A
 * thread that is blocked in the kernel is sampled here without being
 * touched: /proc/self/task/TID/syscall gives the user pc and sp of a
 * blocked thread ("running" otherwise), process_vm_readv copies its stack
 * (a thread that exits meanwhile is an EFAULT, not a crash), the walk runs
 * on the copy, and the sample counts only if the thread did not run in
 * between (the same syscall line and the same /proc schedstat before and
 * after).  The bp register, which /proc does not give, comes from a
 * registers-only perf record the kernel makes at each of the thread's
 * switch-outs, when that record's pc and sp are the blocked ones.  A
 * thread that is running or runnable instead gets the hits as "pending":
 * its own CPU clock signal records them with its stack (sampler.c), so it
 * is interrupted only while on the CPU, as for cpu; those of a thread that
 * ran less than a CPU-clock interval between two blocks, less its running
 * time, go to the second block (waits_to_block).  A signal to a blocked
 * thread would make nanosleep, poll, select and sem_wait fail with EINTR.
 *
 * context-switches: the kernel writes each sampled switch-out's registers
 * and a copy of the user stack into a per-thread ring (perf.c); the watcher
 * drains the rings, walks the copies and credits hits by counts.
 *
 * The watcher takes no libc lock and never allocates (only system calls,
 * the lock-free table and static buffers), so a fork in another thread can
 * never find it holding one.  All signals are blocked in it.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "fds.h"
#include "perf.h"
#include "pyframes.h"
#include "state.h"
#include "sink.h"
#include "thread.h"
#include "unwind.h"
#include "watch.h"

#define WT_COPY (64 * 1024) /* stack bytes copied from a blocked thread */

static pthread_t wt_thread;
static int wt_quit;
static struct cp_thread wt_rng; /* only its rng: cp_draw's state */
static uint64_t wt_frames[CP_MAX_DEPTH];
static uint64_t wt_lframes[2 * CP_MAX_DEPTH]; /* py_rewrite_thread's scratch */
static uint8_t wt_stack[WT_COPY];
static uint8_t wt_rec[PF_REC_MAX]; /* pf_drain's: the rings' one consumer */
static pid_t wt_pid;

int wt_running(void)
{
	return __atomic_load_n(&th_watched, __ATOMIC_ACQUIRE);
}

/* ---- context switches ---- */

struct csw_arg {
	struct cp_slot *s;
	int rings; /* the regs ring: only note the registers */
};

static void on_record(void *arg, uint32_t tid, uint64_t count, uint64_t ip, uint64_t sp,
		      uint64_t bp, const void *stack, size_t len)
{
	struct csw_arg *a = arg;
	struct cp_slot *s = a->s;
	uint64_t hits = 0, mean = cp.interval[RES_CONTEXT_SWITCHES];
	uint32_t flags;
	int n;

	if (a->rings) {
		s->last_ip = ip;
		s->last_sp = sp;
		s->last_bp = bp;
		return;
	}
	/* Boundaries crossed by the count (paper 5.1), as cp_credit does. */
	while (count >= s->ring_next) {
		hits++;
		s->ring_next += cp_draw(&wt_rng, mean);
	}
	if (hits && cp_sink.here) {
		/* A stackless collector: what the thread is doing now. */
		cp_sink.here(tid, cp.col[RES_CONTEXT_SWITCHES], hits, 0);
		return;
	}
	if (!hits || !stack)
		return;
	n = unwind_capture_copy(ip, sp, bp, 1, stack, len, wt_frames, CP_MAX_DEPTH, &flags);
	cp_sink.stack(wt_frames, n, flags, tid, cp.col[RES_CONTEXT_SWITCHES], hits);
}

static void drain(struct cp_slot *s)
{
	struct csw_arg a = { s, 0 };

	if (s->ring.map && pf_drain(&s->ring, wt_rec, 0, UINT64_MAX, on_record, &a) && cp.random)
		pf_set_period(s->ring.fd, cp_draw(&wt_rng, cp.interval[RES_CONTEXT_SWITCHES]));
	a.rings = 1;
	if (s->regs.map)
		pf_drain(&s->regs, wt_rec, 0, UINT64_MAX, on_record, &a);
}

/* ---- real time of blocked threads ---- */

/* sample_blocked: the stack of thread s if it is blocked in the kernel
 * (its depth, in wt_frames), else 0.  For a stackless collector, 1 when
 * it is blocked (nothing copied). */

static int open_proc(int tid, const char *what)
{
	char path[64];
	int fd;

	snprintf(path, sizeof path, "/proc/self/task/%d/%s", tid, what);
	fd = open(path, O_RDONLY | O_CLOEXEC);

	/* Out of the program's way, and not its to close (fds.h). */
	return fd < 0 ? fd : fds_keep(fd);
}

void wt_thread_files(struct cp_slot *s)
{
	int e = errno, why = 0;

	if (s->proc_fd == -1 && (s->proc_fd = open_proc(s->tid, "syscall")) < 0) {
		s->proc_fd = -2;
		why = errno;
	}
	if (s->sched_fd == -1 && (s->sched_fd = open_proc(s->tid, "schedstat")) < 0) {
		s->sched_fd = -2;
		why = why ? why : errno;
	}
	if (why == EACCES)
		cp_warn("real: the blocked time of threads made after the program changed its user "
			"is not sampled (their /proc files are closed to it)", NULL, NULL);
	else if (why)
		cp_warn("real: the blocked time of a thread is not sampled: /proc/self/task: ",
			strerror(why), NULL);
	errno = e;
}

static ssize_t reread(int fd, char *buf, size_t len)
{
	ssize_t n = pread(fd, buf, len - 1, 0);

	buf[n > 0 ? n : 0] = 0;
	return n;
}

static uint64_t hex(const char **p)
{
	uint64_t v = 0;

	while (**p == ' ')
		(*p)++;
	if ((*p)[0] == '0' && (*p)[1] == 'x')
		*p += 2;
	for (;; (*p)++) {
		char c = **p;
		int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
		if (d < 0)
			return v;
		v = v << 4 | (uint64_t)d;
	}
}

/* "NR a1..a6 sp pc", "-1 sp pc" or "running": 1 and sp/pc if blocked. */
static int parse_syscall(const char *b, uint64_t *sp, uint64_t *pc)
{
	const char *p = b;
	int fields = 0;
	uint64_t v[9];

	if (!strncmp(b, "running", 7) || !*b)
		return 0;
	while (*p && *p != '\n' && fields < 9) {
		while (*p == ' ')
			p++;
		if (*p == '-') { /* -1: blocked, not in a syscall */
			p++;
		}
		v[fields++] = hex(&p);
		while (*p && *p != ' ' && *p != '\n')
			p++;
	}
	if (fields == 3) {
		*sp = v[1];
		*pc = v[2];
	} else if (fields == 9) {
		*sp = v[7];
		*pc = v[8];
	} else {
		return 0;
	}
	return *sp != 0;
}

/* The blocked thread's stack into wt_frames; its depth, or 0: not blocked
 * (or it moved while we looked).  *cpu: its run time so far (schedstat's
 * first field, ns), or SEG_UNKNOWN. */
static int sample_blocked_files(struct cp_slot *s, uint32_t *flags, uint64_t *cpu)
{
	char sys1[256], sys2[256], st1[128], st2[128];
	uint64_t sp, pc, len, bp = 0;
	struct iovec local, remote;
	ssize_t got;
	int n, bp_known = 0;

	if (reread(s->sched_fd, st1, sizeof st1) <= 0)
		return 0;
	if (st1[0] >= '0' && st1[0] <= '9') {
		*cpu = 0;
		for (const char *p = st1; *p >= '0' && *p <= '9'; p++)
			*cpu = *cpu * 10 + (uint64_t)(*p - '0');
	}
	if (reread(s->proc_fd, sys1, sizeof sys1) <= 0 || !parse_syscall(sys1, &sp, &pc))
		return 0;
	if (cp_sink.here) {
		/* A stackless collector needs no copy: only that the thread
		 * stayed blocked while we looked. */
		if (reread(s->proc_fd, sys2, sizeof sys2) <= 0 || strcmp(sys1, sys2) ||
		    reread(s->sched_fd, st2, sizeof st2) <= 0 || strcmp(st1, st2))
			return 0;
		return 1;
	}
	if (sp < s->stack_lo || sp >= s->stack_hi)
		return 0;
	len = s->stack_hi - sp < WT_COPY ? s->stack_hi - sp : WT_COPY;
	local.iov_base = wt_stack;
	local.iov_len = len;
	remote.iov_base = (void *)(uintptr_t)sp;
	remote.iov_len = len;
	got = process_vm_readv(wt_pid, &local, 1, &remote, 1, 0);
	if (got <= 0)
		return 0;
	if (s->last_sp == sp && s->last_ip == pc) {
		bp = s->last_bp;
		bp_known = 1;
	}
	n = unwind_capture_copy(pc, sp, bp, bp_known, wt_stack, (size_t)got, wt_frames, CP_MAX_DEPTH,
				flags);
	/* A Python program: the thread's Python frames, which stay while it
	 * is blocked (read before the check that it was). */
	if (cp.py)
		n = py_rewrite_thread(wt_frames, n, CP_MAX_DEPTH, wt_lframes, flags,
				      (uint8_t *)(wt_lframes + CP_MAX_DEPTH), s->tid);
	if (reread(s->proc_fd, sys2, sizeof sys2) <= 0 || strcmp(sys1, sys2) ||
	    reread(s->sched_fd, st2, sizeof st2) <= 0 || strcmp(st1, st2))
		return 0; /* it ran meanwhile: the copy may be torn */
	return n;
}

static int sample_blocked(struct cp_slot *s, uint32_t *flags, uint64_t *cpu)
{
	int n, e;

	*cpu = SEG_UNKNOWN;
	if (s->proc_fd == -1 || s->sched_fd == -1)
		wt_thread_files(s);
	if (s->proc_fd != WT_FILES_EACH_LOOK || s->sched_fd != WT_FILES_EACH_LOOK)
		return s->proc_fd < 0 || s->sched_fd < 0 ? 0 : sample_blocked_files(s, flags, cpu);
	/* For this look only, in the budget's room for that (fds.h); up
	 * and marked as the kept ones are (a program's closefrom may run
	 * meanwhile). */
	if (!fds_spare(2, 1))
		return 0;
	e = errno;
	s->proc_fd = open_proc(s->tid, "syscall");
	s->sched_fd = s->proc_fd < 0 ? -1 : open_proc(s->tid, "schedstat");
	n = s->proc_fd < 0 || s->sched_fd < 0 ? 0 : sample_blocked_files(s, flags, cpu);
	fds_close(s->proc_fd);
	fds_close(s->sched_fd);
	s->proc_fd = s->sched_fd = WT_FILES_EACH_LOOK;
	errno = e;
	return n;
}

/*
 * Thread s is blocked again, cpu its run time now: of the hits it was
 * given pending since it was last seen blocked, those it was not running
 * (waiting for a CPU after it woke, or blocked but moving as we looked),
 * if it ran less than a CPU-clock interval meanwhile.  Its CPU clock may
 * not signal for a long while, and they would go to wherever it did: a
 * thread that naps 10 ms 30 times, on a CPU shared with a busy one, lost
 * a third of its nap to the computation it did next.  Where it ran next
 * is the short run that led here.  Its running time stays pending, with
 * the rest: where its clock signals next.
 */
static uint64_t waits_to_block(struct cp_slot *s, uint64_t cpu)
{
	uint64_t mean = cp.interval[RES_REAL], ran, run, seg = s->seg_hits, p, take;

	s->seg_hits = 0;
	ran = cpu - s->seg_cpu;
	if (!seg || cpu == SEG_UNKNOWN || s->seg_cpu == SEG_UNKNOWN || cpu < s->seg_cpu ||
	    ran >= cp.clock_interval)
		return 0;
	/* Its running time in hits, rounded at random (unbiased). */
	run = ran / mean + ((cp_draw(&wt_rng, mean) - (mean - mean / 2)) % mean < ran % mean);
	if (run >= seg)
		return 0;
	take = seg - run;
	p = __atomic_load_n(&s->real_pending, __ATOMIC_ACQUIRE);
	do {
		if (take > p)
			take = p;
	} while (take && !__atomic_compare_exchange_n(&s->real_pending, &p, p - take, 0,
						       __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE));
	return take;
}

static void real_tick(struct cp_slot *s, uint64_t elapsed)
{
	uint64_t mean = cp.interval[RES_REAL], hits, cpu;
	uint32_t flags;
	int n;

	s->real_carry += elapsed;
	hits = s->real_carry / mean;
	s->real_carry -= hits * mean;
	if (!hits)
		return;
	n = sample_blocked(s, &flags, &cpu);
	if (n > 0) {
		hits += waits_to_block(s, cpu);
		s->seg_cpu = cpu;
		/* Its pending hits stay pending: it ran then, and they go to
		 * where it runs at its next CPU-clock signal.  Given to the
		 * call it blocked in, a thread that sleeps 10 ms and works 10
		 * ms showed 58% asleep (a helper's sweep): its CPU clock
		 * signals in user mode only, and a system call's time waited
		 * in pending for the next block.  A stackless collector
		 * charges what the blocked thread has current. */
		if (cp_sink.here)
			cp_sink.here((uint32_t)s->tid, cp.col[RES_REAL], hits, 0);
		else
			cp_sink.stack(wt_frames, n, flags, (uint32_t)s->tid, cp.col[RES_REAL], hits);
	} else {
		__atomic_add_fetch(&s->real_pending, hits, __ATOMIC_ACQ_REL);
		s->seg_hits += hits;
	}
}

/* ---- the loop ---- */

static void release(struct cp_slot *s)
{
	drain(s);
	th_rings_close(s);
	if (s->proc_fd >= 0)
		fds_close(s->proc_fd);
	if (s->sched_fd >= 0)
		fds_close(s->sched_fd);
	s->proc_fd = s->sched_fd = -1;
	__atomic_store_n(&s->state, TH_FREE, __ATOMIC_RELEASE);
}

static void *loop(void *arg)
{
	int real = cp.col[RES_REAL] >= 0;
	uint64_t last = cp_now(CLOCK_MONOTONIC), next = last;

	(void)arg;
	prctl(PR_SET_NAME, cp_sink.watcher, 0, 0, 0);
	wt_rng.rng = last | 1;
	while (!__atomic_load_n(&wt_quit, __ATOMIC_ACQUIRE)) {
		uint64_t iv = real ? cp_draw(&wt_rng, cp.interval[RES_REAL]) : 10000000, now, elapsed;
		struct timespec ts;
		int ns = __atomic_load_n(&th_nslots, __ATOMIC_ACQUIRE);

		next += iv;
		ts.tv_sec = (time_t)(next / 1000000000);
		ts.tv_nsec = (long)(next % 1000000000);
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
		now = cp_now(CLOCK_MONOTONIC);
		elapsed = now - last;
		last = now;
		if (now > next + 64 * iv)
			next = now; /* stopped or suspended: do not race to catch up */
		if (!__atomic_load_n(&cp.on, __ATOMIC_ACQUIRE))
			continue;
		for (int i = 0; i < ns; i++) {
			struct cp_slot *s = &th_slots[i];
			int st = __atomic_load_n(&s->state, __ATOMIC_ACQUIRE);

			if (st == TH_LIVE) {
				drain(s);
				if (real)
					real_tick(s, elapsed);
			} else if (st == TH_EXITED) {
				release(s);
			}
		}
	}
	/* The last records, before the save. */
	for (int i = 0; i < th_nslots; i++)
		if (th_slots[i].state == TH_LIVE || th_slots[i].state == TH_EXITED)
			drain(&th_slots[i]);
	return NULL;
}

int wt_start(void)
{
	sigset_t all, old;
	int rc;

	if (cp.col[RES_REAL] < 0 && cp.col[RES_CONTEXT_SWITCHES] < 0)
		return 0;
	wt_pid = getpid();
	__atomic_store_n(&wt_quit, 0, __ATOMIC_RELEASE);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = th_create_unprofiled(&wt_thread, NULL, loop, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0)
		return -1;
	__atomic_store_n(&th_watched, 1, __ATOMIC_RELEASE);
	return 0;
}

void wt_stop(void)
{
	if (!wt_running())
		return;
	__atomic_store_n(&wt_quit, 1, __ATOMIC_RELEASE);
	pthread_join(wt_thread, NULL);
	__atomic_store_n(&th_watched, 0, __ATOMIC_RELEASE);
}

void wt_after_fork(void)
{
	/* The watcher did not come along (fork copies the calling thread). */
	__atomic_store_n(&th_watched, 0, __ATOMIC_RELEASE);
	if (wt_start() < 0)
		cp_warn("forked child: cannot start the watcher thread", NULL, NULL);
}
