/*
 * kcpu.c - a thread's CPU time in kernel mode, placed (kc_*).
 *
 * The task-clock that signals a thread (perf.c) overflows in user mode
 * only: a signal raised in a system call's entry would fail the sleep that
 * follows with EINTR.  Its count has the kernel-mode time all the same,
 * and so it was credited at the next overflow in user mode, up to an
 * interval later, to whatever the thread was running then: sqlite's read
 * function had 4% of the CPU under cpprof, 14.7% under perf.
 *
 * So beside it each thread has a second task-clock, its period drawn
 * about the same mean, sampling in kernel mode only, into a ring of its
 * own: at each of its overflows (a timer firing while the thread is in a
 * system call or a page fault) the kernel writes the user registers as
 * the kernel was entered and a copy of the user stack: the system call's
 * caller, the faulting instruction.  Nobody is signalled.  The thread
 * drains its ring first thing in each of its signals (kc_drain): each
 * record is its period's worth of hits on its stack, owed by the CPU
 * clock, whose crossed boundaries pay it (kc_settle) before the rest go
 * to the interrupted stack.  So the CPU clock's total is unchanged, and
 * the kernel's share of it goes where it was spent.  A ring that filled
 * (fifteen records: a long system call, the user-mode clock silent) lost
 * the newest records: the clock's hits beyond those kept go to the last
 * one.  A thread that ends drains its ring and pays it from the clock's
 * boundaries since its last signal (kc_exit): a thread of a few ms in the
 * kernel had only what its last signal credited.
 *
 * Passed over: the handler's own system calls (reading its counters,
 * re-arming them), by where the ring's head was when it ended (kc_mark);
 * and any sample in a signal handler, whose stack returns to the signal
 * restorer: the kernel delivering the signal (a sample at the handler's
 * first instruction), the handler's rt_sigreturn (at the restorer), a
 * page fault in it.  Before, a stripped program's profile showed
 * `libc.so.6+0x3c04f;handler`, up to 5 samples in 1,300.  The program's
 * own handlers' kernel time is so credited as before.  (Not every frame
 * in the sampler's code: the program's read goes through the sampler's,
 * io.c.)
 *
 * The fault events' faults taken in kernel mode (a system call filling
 * the program's buffer) are not counted by them at all (a software event
 * leaves out what exclude_kernel excludes): each has a kernel-mode ring
 * too, whose records carry the event's count, and the boundaries crossed
 * by it are hits at the record's stack (on_fault; the event's own count
 * covers the records a full ring dropped, fault_count).
 *
 * A Python program's frames at a record are gone by the drain: its ring
 * copies no stack, and the interposed calls (io.c: the read and write
 * families, fsync) drain it as they return, at their caller's Python
 * stack (kc_call_*): a file read whole in one function and worked on in
 * the next had all its kernel time in the second (cp_pyread.py: reader
 * 0.04 of the CPU time against 0.75).  What a signal finds there (other
 * system calls', page faults') is passed over: the clock credits that
 * time as before, at the interrupted stack.  Its fault rings the same:
 * no stack, their records drained by the interposed calls, the boundaries
 * crossed in a call hits at its stack (a file read into a fresh buffer:
 * none of the kernel's faults were counted, half the program's); a
 * record a signal finds moves the boundaries on, its hits dropped.  Not for a stackless collector (cfprof's current function,
 * the same problem, no stack to take): there kernel time is credited as
 * before, and kernel-mode faults are not counted.  Rings take at most a sixteenth of the descriptor
 * budget (room); a thread past that, or refused one (perf_event_paranoid
 * 2 forbids kernel-mode sampling to all but root), is credited as before.
 */
#include <signal.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/perf_event.h>

#include "fds.h"
#include "kcpu.h"
#include "perf.h"
#include "resources.h"
#include "sink.h"
#include "state.h"
#include "thread.h"
#include "unwind.h"

#define KC_MAX 128 /* rings at once, of every thread */
#define KC_FAULTS 3 /* page-faults, minor-faults, major-faults */

/* A fault resource's ring: its kernel-mode faults, by their count. */
struct kc_fault {
	struct pf_ring ring;
	int res;
	uint64_t next; /* the next boundary, in its faults */
	uint64_t skip;
	uint64_t upto; /* records from here on are the teardown's own */
	int nlast;     /* the last recorded stack, in fframes */
	uint32_t flast;
};

struct kc_state {
	struct pf_ring ring; /* the CPU's, fd -1 if none */
	uint64_t owed;    /* hits recorded on kernel stacks, not yet paid */
	uint64_t skip;    /* ring offset up to which records are the handler's */
	uint64_t upto;    /* and from which the teardown's (kc_hold) */
	uint64_t mean;    /* the CPU clock's mean interval: a hit */
	uint64_t period;  /* the kernel's: a record is worth this much */
	uint64_t acc;     /* worth not yet a whole hit */
	uint64_t acc_r;   /* the same in real time (-e real) */
	uint64_t owed_r;  /* real hits records were worth, not yet pending */
	int full;         /* the last drain found the ring full: records lost */
	int calling;      /* Python: an interposed call drains (kc_call_end) */
	int incall;       /* Python: in interposed calls (kc_call_begin), their depth */
	uint64_t call_sp; /* and the outermost's frame */
	int nlast;        /* the last recorded stack: in frames[last] */
	uint32_t flast;
	int last;
	int nf;
	struct kc_fault f[KC_FAULTS];
	size_t len;       /* this mapping's */
	struct cp_thread *t;
	uint64_t frames[2][CP_MAX_DEPTH];
	uint64_t fframes[CP_MAX_DEPTH]; /* the fault rings' */
	uint8_t rec[PF_REC_MAX];
};

static int kc_live;
static uint64_t kc_restorer; /* the signal restorer's address (rt_sigreturn's) */
/* The kernel's struct sigaction (rt_sigaction), whose restorer glibc sets. */
struct ksigaction {
	void *handler;
	unsigned long flags;
	void *restorer;
	uint64_t mask;
};

/*
 * Room for one more ring.  A sixteenth of the descriptor budget (fds.h) at
 * most (8 under ulimit -n 1024: the first threads'), counted exactly, and
 * only while half of it is free: its check is not exact (threads set up
 * at once may each pass it by one, and each open holds two descriptors
 * for a moment, fds_keep), and a ring is worth less than a clock or a
 * fault event, which later threads need.  Checked as a clock's is, 891
 * threads holding a file each under 1024 (seven eighths of it, as bare)
 * had an open fail in one run of five on a loaded machine; at a quarter
 * of the budget, 110 threads under -e page-faults had 94 sampled, not
 * 111.  And 8 at most for a user without CAP_IPC_LOCK: a ring's 260 KiB
 * are locked, out of what the user's other rings (-e context-switches,
 * their own perf record) may need.
 */
static int room(void)
{
	int budget = fds_budget(NULL), cap = budget / 16 < KC_MAX ? budget / 16 : KC_MAX;

	if (geteuid() != 0 && cap > 8)
		cap = 8;
	if (__atomic_add_fetch(&kc_live, 1, __ATOMIC_RELAXED) <= cap && fds_spare(budget / 2, 0))
		return 1;
	__atomic_sub_fetch(&kc_live, 1, __ATOMIC_RELAXED);
	return 0;
}

void kc_open(struct cp_thread *t)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), len;
	struct kc_state *k;
	int cpu = (cp.col[RES_CPU] >= 0 || cp.col[RES_REAL] >= 0) && cp.clock_perf &&
		  t->r[RES_CPU].fd >= 0,
	    faults = 0;

	t->kc = NULL;
	for (int r = 0; r < RES_N; r++)
		faults += res_is_fault(r) && cp.col[r] >= 0 && t->r[r].fd >= 0;
	/* Not for cfprof (a stackless collector), whose current function
	 * then is not the one the record was in (a program that read into
	 * fresh memory in one function and touched fresh memory in the next
	 * had all of the first's faults charged to the second).  A Python
	 * program's rings copy no stack: the interposed calls drain them
	 * (kc_call_*). */
	if (cp_sink.here || (!faults && !cpu))
		return;
	if (!kc_restorer) {
		struct ksigaction ka;
		if (syscall(SYS_rt_sigaction, CP_SIG, NULL, &ka, sizeof ka.mask) == 0)
			__atomic_store_n(&kc_restorer, (uint64_t)(uintptr_t)ka.restorer,
					 __ATOMIC_RELAXED);
	}
	len = (sizeof *k + page - 1) / page * page;
	/* Populated: a first touch in the handler would be a page fault of
	 * the program's. */
	k = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1,
		 0);
	if (k == MAP_FAILED)
		return;
	k->len = len;
	k->owed = k->skip = k->acc = k->acc_r = k->owed_r = 0;
	k->upto = UINT64_MAX;
	k->full = k->nlast = k->last = k->nf = k->calling = k->incall = 0;
	k->t = t;
	k->ring.fd = -1;
	k->ring.map = NULL;
	/* Drawn once, for this thread: a new period restarts the kernel's
	 * timer, and one restarted at each signal fires less often than it
	 * should (the time since its last firing is lost each time):
	 * cp_kernel.c's kread 0.47 on average against 0.50. */
	k->mean = cp.clock_interval;
	k->period = cp_draw(t, k->mean);
	if (k->period < CP_CLOCK_MIN_PERIOD)
		k->period = CP_CLOCK_MIN_PERIOD;
	if (cpu && room() &&
	    pf_open_ring(&k->ring, t->tid, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, k->period,
			 cp.py ? 0 : PF_KSTACK_COPY, 1) < 0) {
		k->ring.fd = -1;
		k->ring.map = NULL;
		__atomic_sub_fetch(&kc_live, 1, __ATOMIC_RELAXED);
	}
	for (int r = 0; r < RES_N && k->nf < KC_FAULTS; r++) {
		const struct res_info *ri = &res_table[r];
		struct kc_fault *f = &k->f[k->nf];

		if (!faults || !res_is_fault(r) || cp.col[r] < 0 || t->r[r].fd < 0 || !room())
			continue;
		f->res = r;
		f->next = cp_draw_first(t, cp.interval[r]);
		f->skip = 0;
		f->upto = UINT64_MAX;
		f->nlast = 0;
		if (pf_open_ring(&f->ring, t->tid, ri->perf_type, ri->perf_config, f->next,
				 cp.py ? 0 : PF_KSTACK_COPY, 1) < 0) {
			__atomic_sub_fetch(&kc_live, 1, __ATOMIC_RELAXED);
			continue;
		}
		k->nf++;
	}
	if (k->ring.fd < 0 && !k->nf) {
		munmap(k, len);
		return;
	}
	t->kc = k;
}

void kc_close(struct cp_thread *t)
{
	struct kc_state *k = t->kc;

	if (!k)
		return;
	t->kc = NULL;
	if (k->ring.fd >= 0) {
		pf_close_ring(&k->ring);
		__atomic_sub_fetch(&kc_live, 1, __ATOMIC_RELAXED);
	}
	for (int i = 0; i < k->nf; i++) {
		pf_close_ring(&k->f[i].ring);
		__atomic_sub_fetch(&kc_live, 1, __ATOMIC_RELAXED);
	}
	munmap(k, k->len);
}

/* The record's stack in f, or 0: none, or in a signal handler (the
 * sampler's: a page fault, its delivery, its rt_sigreturn; or the
 * program's), whose stack returns to the restorer. */
static int walk(uint64_t ip, uint64_t sp, uint64_t bp, const void *stack, size_t len, uint64_t *f,
		uint32_t *flags)
{
	int n;

	if (!stack || (ip >= kc_restorer && ip < kc_restorer + 16))
		return 0;
	n = unwind_capture_copy(ip, sp, bp, 1, stack, len, f, CP_MAX_DEPTH, flags);
	for (int i = 1; i < n; i++)
		if (f[i] + 1 - kc_restorer < 17)
			return 0;
	/* Entered from the sampler's own code (an interrupt in io_kend):
	 * the wrapper's, as the handler's samples are. */
	if (n > 1)
		n = cp_fold_own(f, n, flags, 0);
	return n > 0 ? n : 0;
}

/*
 * A record stands for the kernel's period of kernel-mode time: CPU time,
 * hits on its stack f as the clock's boundaries pass, owed by the clock;
 * and with -e real, real time the thread spent running: the watcher has
 * it pending for the thread (a running thread is not sampled from
 * outside), and as much of that as the record is worth goes to f (the
 * rest of the pending to the stack the CPU clock interrupts next, in
 * user mode: dd under -e real had 0.87 in the code after its calls,
 * __pthread_disable_asynccancel).  Never more than is pending: a thread
 * blocked at the watcher's tick had that tick on its blocked stack.  What
 * the watcher has not yet made pending (its tick comes after the record)
 * is owed, a few hits at most, paid at the next record or at the next
 * signal to the last record's stack (kc_settle_real).
 */
#define KC_OWED_REAL 16
static void credit(struct kc_state *k, const uint64_t *f, int n, uint32_t flags, uint32_t tid)
{
	uint64_t hits;

	if (cp.col[RES_CPU] >= 0) {
		k->acc += k->period;
		hits = k->acc / k->mean;
		k->acc -= hits * k->mean;
		if (hits)
			cp_sink.stack(f, n, flags, tid, cp.col[RES_CPU], hits);
		k->owed += hits;
	}
	if (cp.col[RES_REAL] >= 0 && k->t->slot) {
		uint64_t mean = cp.interval[RES_REAL], p;
		uint64_t *pend = &k->t->slot->real_pending;

		uint64_t want;

		k->acc_r += k->period;
		hits = k->acc_r / mean;
		k->acc_r -= hits * mean;
		want = hits + k->owed_r;
		p = __atomic_load_n(pend, __ATOMIC_ACQUIRE);
		do {
			hits = want < p ? want : p;
		} while (hits && !__atomic_compare_exchange_n(pend, &p, p - hits, 0, __ATOMIC_ACQ_REL,
							      __ATOMIC_ACQUIRE));
		k->owed_r = want - hits < KC_OWED_REAL ? want - hits : KC_OWED_REAL;
		if (hits)
			cp_sink.stack(f, n, flags, tid, cp.col[RES_REAL], hits);
	}
}

static void on_sample(void *arg, uint32_t tid, uint64_t count, uint64_t ip, uint64_t sp,
		      uint64_t bp, const void *stack, size_t len)
{
	struct kc_state *k = arg;
	uint64_t *f = k->frames[!k->last];
	uint32_t flags = 0;
	int n = cp.py ? 0 : walk(ip, sp, bp, stack, len, f, &flags);

	(void)count;
	if (!n)
		return;
	credit(k, f, n, flags, tid);
	k->last = !k->last;
	k->nlast = n;
	k->flast = flags;
}

struct fault_arg {
	struct kc_state *k;
	struct kc_fault *f;
};

/* A fault ring's record: the kernel-mode faults so far (its count), the
 * boundaries they crossed its hits, at its stack.  Records the ring had
 * no room for, or passed over, are counted at the next. */
static void on_fault(void *arg, uint32_t tid, uint64_t count, uint64_t ip, uint64_t sp,
		     uint64_t bp, const void *stack, size_t len)
{
	struct fault_arg *a = arg;
	struct kc_fault *f = a->f;
	uint64_t hits = 0, mean = cp.interval[f->res];
	uint32_t flags = 0;
	int n;

	/* A Python program's, outside an interposed call: its frames are
	 * gone; the boundaries it crossed pass, their hits dropped. */
	if (cp.py) {
		while (count >= f->next)
			f->next += cp_draw(a->k->t, mean);
		return;
	}
	n = walk(ip, sp, bp, stack, len, a->k->fframes, &flags);
	if (!n)
		return;
	while (count >= f->next) {
		hits++;
		f->next += cp_draw(a->k->t, mean);
	}
	f->nlast = n;
	f->flast = flags;
	if (hits)
		cp_sink.stack(a->k->fframes, n, flags, tid, cp.col[f->res], hits);
}

/* Fault ring f of thread t, full (or the thread ending): the records the
 * kernel dropped are counted by the event's own count, at the last stack
 * (dd bs=64M, all its faults in read: 7 samples of 120 without).  A
 * system call: in the handler or the teardown, not at every drain. */
static void fault_count(struct cp_thread *t, struct kc_state *k, struct kc_fault *f)
{
	uint64_t count = pf_read(f->ring.fd), hits = 0, mean = cp.interval[f->res];

	t->nsys++;
	while (count >= f->next) {
		hits++;
		f->next += cp_draw(t, mean);
	}
	if (hits && f->nlast > 0)
		cp_sink.stack(k->fframes, f->nlast, f->flast, (uint32_t)t->tid, cp.col[f->res], hits);
}

static uint64_t settle(struct cp_thread *t, struct kc_state *k, uint64_t crossed, int user);

/* CP_SIG held in this thread while it reads its rings outside the
 * handler (close_all's reason: under -e page-faults:10 a ring's page
 * fault, counted, and the signal it raised undid each other forever);
 * its two system calls the sampler's own. */
static int hold_sig(struct cp_thread *t, uint64_t *old)
{
	uint64_t mask = 1ull << (CP_SIG - 1);

	t->nsys += 2;
	return syscall(SYS_rt_sigprocmask, SIG_BLOCK, &mask, old, sizeof mask) == 0 ? 0 : -1;
}

static void release_sig(const uint64_t *old)
{
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, old, NULL, sizeof *old);
}

static void drain(struct cp_thread *t, struct kc_state *k)
{
	if (k->ring.fd >= 0 && cp.py) {
		/* Passed over (on_sample); full is the calls' to say. */
		pf_drain(&k->ring, k->rec, k->skip, k->upto, on_sample, k);
	} else if (k->ring.fd >= 0) {
		/* Full, less room for two records: the kernel dropped some.
		 * Said until the next settle, which pays it to the last
		 * record: an interposed call's drain may come between. */
		if (!k->full)
			k->nlast = 0;
		k->full |= pf_waiting(&k->ring) + 2 * (PF_KSTACK_COPY + 256) > pf_room(&k->ring);
		pf_drain(&k->ring, k->rec, k->skip, k->upto, on_sample, k);
	}
	for (int i = 0; i < k->nf; i++) {
		struct kc_fault *f = &k->f[i];
		struct fault_arg a = { k, f };
		int full = pf_waiting(&f->ring) + 2 * (PF_KSTACK_COPY + 256) > pf_room(&f->ring);

		pf_drain(&f->ring, k->rec, f->skip, f->upto, on_fault, &a);
		if (full || f->upto != UINT64_MAX)
			fault_count(t, k, f);
	}
}

void kc_drain(struct cp_thread *t)
{
	struct kc_state *k = t->kc;

	/* A signal in an interposed call's drain, or in a Python program's
	 * call: the records are the call's.  A read of /dev/zero ends short
	 * when a signal is pending, and that signal came before the call's
	 * drain: the 32 MiB read's 80 hits were passed over, one run in
	 * three of tests/progs/cp_pyfaults.py. */
	if (!k || __atomic_load_n(&k->calling, __ATOMIC_RELAXED) ||
	    __atomic_load_n(&k->incall, __ATOMIC_RELAXED))
		return;
	drain(t, k);
}

void kc_call_drain(struct cp_thread *t)
{
	struct kc_state *k = t->kc;
	uint64_t old;
	int any;

	if (!k || k->calling)
		return;
	any = k->ring.fd >= 0 && pf_waiting(&k->ring);
	for (int i = 0; i < k->nf; i++)
		any |= pf_waiting(&k->f[i].ring) != 0;
	if (!any || hold_sig(t, &old) < 0)
		return;
	__atomic_store_n(&k->calling, 1, __ATOMIC_RELAXED);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	drain(t, k);
	/* Full: the clock's boundaries passed in the call beyond its records
	 * are the call's, paid now to its last record, before another call
	 * fills the ring again (dd bs=64M: read's 64 MB and write's each
	 * fill it; its lost records went to whichever call came last before
	 * a signal, read 0.31 or 0.59 against perf's 0.25-0.30). */
	/* And the real time pending, the thread having run since: the
	 * call's too (tests/progs/cp_kernel.c two under -e real: kbig 0.46
	 * to 0.54 of the two without, 0.67 true). */
	if (k->full && k->nlast > 0 && k->ring.fd >= 0 && cp.col[RES_REAL] >= 0 && t->slot) {
		uint64_t p = __atomic_exchange_n(&t->slot->real_pending, 0, __ATOMIC_ACQ_REL);

		k->owed_r = 0;
		if (p)
			cp_sink.stack(k->frames[k->last], k->nlast, k->flast, (uint32_t)t->tid,
				      cp.col[RES_REAL], p);
		if (cp.col[RES_CPU] < 0)
			k->full = 0;
	}
	if (k->full && k->nlast > 0 && k->ring.fd >= 0 && t->r[RES_CPU].fd >= 0 &&
	    cp.col[RES_CPU] >= 0) {
		struct cp_rstate *c = &t->r[RES_CPU];
		uint64_t raw = pf_read(c->fd);

		t->nsys++;
		if (raw >= c->base)
			settle(t, k, cp_credit(t, RES_CPU, raw - c->base), 0);
	}
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	__atomic_store_n(&k->calling, 0, __ATOMIC_RELAXED);
	release_sig(&old);
}

int kc_busy(const struct cp_thread *t)
{
	return t->kc && __atomic_load_n(&t->kc->calling, __ATOMIC_RELAXED);
}

void kc_pin(struct cp_thread *t)
{
	struct kc_state *k = t->kc;

	if (k && k->ring.fd >= 0)
		k->upto = pf_head(&k->ring);
}

void kc_unpin(struct cp_thread *t)
{
	struct kc_state *k = t->kc;

	if (k)
		k->upto = UINT64_MAX;
}

void kc_hold(struct cp_thread *t)
{
	struct kc_state *k = t->kc;

	if (!k)
		return;
	k->upto = pf_head(&k->ring);
	for (int i = 0; i < k->nf; i++)
		k->f[i].upto = pf_head(&k->f[i].ring);
}

/* Of the CPU clock's `crossed` hits, what the kernel-mode records took;
 * the rest, for the interrupted stack if `user` (a signal), else none. */
static uint64_t settle(struct cp_thread *t, struct kc_state *k, uint64_t crossed, int user)
{
	uint64_t pay, left;

	pay = k->owed < crossed ? k->owed : crossed;
	k->owed -= pay;
	left = crossed - pay;
	/* The ring was full: the kernel's records after it filled were
	 * dropped, and they were the newest.  What the clock passed in the
	 * kernel beyond those it kept goes to the last of them (a
	 * copy_file_range of 1 s, one system call: every hit but 15 went to
	 * where the thread returned to, the dynamic linker's lazy binding). */
	if (k->full && left && k->nlast > 0) {
		cp_sink.stack(k->frames[k->last], k->nlast, k->flast, (uint32_t)t->tid,
			      cp.col[RES_CPU], left);
		left = 0;
	}
	k->full = 0;
	return user ? left : 0;
}

uint64_t kc_settle(struct cp_thread *t, uint64_t crossed)
{
	struct kc_state *k = t->kc;

	/* In kc_call_end's drain, what it owes is paid at the next signal. */
	if (!k || k->ring.fd < 0 || __atomic_load_n(&k->calling, __ATOMIC_RELAXED))
		return crossed;
	return settle(t, k, crossed, 1);
}

uint64_t kc_settle_real(struct cp_thread *t, uint64_t real)
{
	struct kc_state *k = t->kc;
	uint64_t pay;

	if (!k || k->ring.fd < 0 || !k->owed_r || k->nlast <= 0 ||
	    __atomic_load_n(&k->calling, __ATOMIC_RELAXED))
		return real;
	pay = k->owed_r < real ? k->owed_r : real;
	k->owed_r -= pay;
	if (pay)
		cp_sink.stack(k->frames[k->last], k->nlast, k->flast, (uint32_t)t->tid,
			      cp.col[RES_REAL], pay);
	return real - pay;
}

void kc_exit(struct cp_thread *t, uint64_t crossed)
{
	struct kc_state *k = t->kc;

	if (!k)
		return;
	/* Its records since its last signal, and the clock's boundaries
	 * since: no signal will come.  A thread that lives a few ms in the
	 * kernel (git status's workers, lstat by lstat) had only its last
	 * signal's share. */
	if (k->ring.fd >= 0)
		settle(t, k, crossed, 0);
}

void kc_mark(struct cp_thread *t)
{
	struct kc_state *k = t->kc;

	if (!k || __atomic_load_n(&k->calling, __ATOMIC_RELAXED) ||
	    __atomic_load_n(&k->incall, __ATOMIC_RELAXED))
		return;
	k->skip = pf_head(&k->ring);
	for (int i = 0; i < k->nf; i++)
		k->f[i].skip = pf_head(&k->f[i].ring);
}

__attribute__((noinline)) void kc_call_begin(struct cp_thread *t)
{
	struct kc_state *k = t->kc;

	if (!k)
		return;
	/* A call in a call (the program's handler) leaves the outer's. */
	if (!__atomic_load_n(&k->incall, __ATOMIC_RELAXED)) {
		/* The caller's stack pointer at this call: above its own
		 * frame's base, its return address and the saved one. */
		k->call_sp = (uint64_t)(uintptr_t)__builtin_frame_address(0) + 16;
		if (k->ring.fd >= 0)
			k->skip = pf_head(&k->ring);
		for (int i = 0; i < k->nf; i++)
			k->f[i].skip = pf_head(&k->f[i].ring);
	}
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	__atomic_store_n(&k->incall, k->incall + 1, __ATOMIC_RELAXED);
}

void kc_call_gone(struct cp_thread *t, uint64_t sp)
{
	struct kc_state *k = t->kc;

	if (k && k->incall && sp > k->call_sp)
		k->incall = 0;
}

int kc_in_call(const struct cp_thread *t)
{
	return t->kc && __atomic_load_n(&t->kc->incall, __ATOMIC_RELAXED);
}

void kc_call_out(struct cp_thread *t)
{
	struct kc_state *k = t->kc;

	if (k && k->incall > 0)
		__atomic_store_n(&k->incall, k->incall - 1, __ATOMIC_RELAXED);
}

int kc_call_waiting(struct cp_thread *t)
{
	struct kc_state *k = t->kc;
	int any;

	if (!k)
		return 0;
	any = k->ring.fd >= 0 && pf_head(&k->ring) != k->skip;
	for (int i = 0; i < k->nf; i++)
		any |= pf_head(&k->f[i].ring) != k->f[i].skip;
	return any;
}

struct call_arg {
	struct kc_state *k;
	const uint64_t *f;
	int n, seen;
	uint32_t flags;
};

/* A record of the call's kernel time: a hit on the call's stack as the
 * clock's boundaries are passed, owed by the clock (on_sample's). */
static void on_call(void *arg, uint32_t tid, uint64_t count, uint64_t ip, uint64_t sp,
		    uint64_t bp, const void *stack, size_t len)
{
	struct call_arg *a = arg;

	(void)count, (void)ip, (void)sp, (void)bp, (void)stack, (void)len;
	a->seen = 1;
	credit(a->k, a->f, a->n, a->flags, tid);
}

struct fcall_arg {
	struct kc_state *k;
	struct kc_fault *kf;
	const uint64_t *f;
	int n, seen;
	uint32_t flags;
};

/* A fault ring's record of the call: the boundaries its count crossed,
 * hits on the call's stack (on_fault's). */
static void on_fault_call(void *arg, uint32_t tid, uint64_t count, uint64_t ip, uint64_t sp,
			  uint64_t bp, const void *stack, size_t len)
{
	struct fcall_arg *a = arg;
	uint64_t hits = 0, mean = cp.interval[a->kf->res];

	(void)ip, (void)sp, (void)bp, (void)stack, (void)len;
	a->seen = 1;
	while (count >= a->kf->next) {
		hits++;
		a->kf->next += cp_draw(a->k->t, mean);
	}
	if (hits)
		cp_sink.stack(a->f, a->n, a->flags, tid, cp.col[a->kf->res], hits);
}

/* The call's fault records, at its stack; a full ring's dropped ones by
 * the event's count (fault_count), there too. */
static void call_faults(struct cp_thread *t, struct kc_state *k, const uint64_t *f, int n,
			uint32_t flags)
{
	for (int i = 0; i < k->nf; i++) {
		struct kc_fault *kf = &k->f[i];
		struct fcall_arg a = { k, kf, f, n, 0, flags };
		int full = pf_waiting(&kf->ring) + 2 * 256 > pf_room(&kf->ring);

		pf_drain(&kf->ring, k->rec, kf->skip, kf->upto, on_fault_call, &a);
		if (a.seen) {
			for (int j = 0; j < n; j++)
				k->fframes[j] = f[j];
			kf->nlast = n;
			kf->flast = flags;
		}
		if (full || kf->upto != UINT64_MAX)
			fault_count(t, k, kf);
	}
}

void kc_call_end(struct cp_thread *t, const uint64_t *f, int n, uint32_t flags)
{
	struct kc_state *k = t->kc;
	struct call_arg a = { k, f, n, 0, flags };
	uint64_t old;
	int full;

	if (!k || n <= 0 || hold_sig(t, &old) < 0)
		return;
	__atomic_store_n(&k->calling, 1, __ATOMIC_RELAXED);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	call_faults(t, k, f, n, flags);
	if (k->ring.fd < 0)
		goto out;
	full = pf_waiting(&k->ring) + 2 * 256 > pf_room(&k->ring);
	pf_drain(&k->ring, k->rec, k->skip, UINT64_MAX, on_call, &a);
	if (a.seen) {
		/* The ring's remainder, if it was full, is this call's too. */
		uint64_t *to = k->frames[!k->last];

		for (int i = 0; i < n; i++)
			to[i] = f[i];
		k->last = !k->last;
		k->nlast = n;
		k->flast = flags;
		k->full |= full;
	}
out:
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	__atomic_store_n(&k->calling, 0, __ATOMIC_RELAXED);
	release_sig(&old);
}
