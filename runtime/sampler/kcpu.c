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
 * Not for a Python program (its frames at a ring sample are gone by the
 * drain) nor for a stackless collector (cfprof's current function, the
 * same): there kernel time is credited as before.  At most KC_MAX threads
 * have a ring at once (a descriptor, 132 KiB locked and 25 KiB more
 * each), and a quarter of the descriptor budget; a thread past that, or
 * refused one (perf_event_paranoid 2 forbids kernel-mode sampling to all
 * but root), is credited as before.
 */
#include <stddef.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/perf_event.h>

#include "fds.h"
#include "kcpu.h"
#include "perf.h"
#include "sink.h"
#include "state.h"
#include "unwind.h"

#define KC_MAX 128

struct kc_state {
	struct pf_ring ring;
	uint64_t owed;    /* hits recorded on kernel stacks, not yet paid */
	uint64_t skip;    /* ring offset up to which records are the handler's */
	uint64_t mean;    /* the CPU clock's mean interval: a hit */
	uint64_t period;  /* the kernel's: a record is worth this much */
	uint64_t acc;     /* worth not yet a whole hit */
	int full;         /* the last drain found the ring full: records lost */
	int nlast;        /* the last recorded stack: in frames[last] */
	uint32_t flast;
	int last;
	size_t len;       /* this mapping's */
	struct cp_thread *t;
	uint64_t frames[2][CP_MAX_DEPTH];
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

void kc_open(struct cp_thread *t)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), len;
	struct kc_state *k;

	t->kc = NULL;
	if (cp.col[RES_CPU] < 0 || cp.py || cp_sink.here || !cp.clock_perf || t->r[RES_CPU].fd < 0)
		return;
	/* A quarter of the descriptor budget (fds.h) at most, counted
	 * exactly, and only while half of it is free: its check is not
	 * exact (threads set up at once may each pass it by one, and each
	 * open holds two descriptors for a moment, fds_keep), and a ring is
	 * worth less than a clock.  Checked as a clock's is, 891 threads
	 * holding a file each under ulimit -n 1024 (seven eighths of it, as
	 * bare) had an open fail in one run of five on a loaded machine. */
	int budget = fds_budget(NULL), cap = budget / 4 < KC_MAX ? budget / 4 : KC_MAX;

	if (__atomic_add_fetch(&kc_live, 1, __ATOMIC_RELAXED) > cap || !fds_spare(budget / 2, 0))
		goto none;
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
		goto none;
	k->len = len;
	k->owed = k->skip = k->acc = 0;
	k->full = k->nlast = k->last = 0;
	k->t = t;
	/* Drawn once, for this thread: a new period restarts the kernel's
	 * timer, and one restarted at each signal fires less often than it
	 * should (the time since its last firing is lost each time):
	 * cp_kernel.c's kread 0.47 on average against 0.50. */
	k->mean = cp.clock_interval;
	k->period = cp_draw(t, k->mean);
	if (pf_open_ring(&k->ring, t->tid, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, k->period,
			 PF_KSTACK_COPY, 1) < 0) {
		munmap(k, len);
		goto none;
	}
	t->kc = k;
	return;
none:
	__atomic_sub_fetch(&kc_live, 1, __ATOMIC_RELAXED);
}

void kc_close(struct cp_thread *t)
{
	struct kc_state *k = t->kc;

	if (!k)
		return;
	t->kc = NULL;
	pf_close_ring(&k->ring);
	munmap(k, k->len);
	__atomic_sub_fetch(&kc_live, 1, __ATOMIC_RELAXED);
}

void kc_disable(struct cp_thread *t)
{
	struct kc_state *k = t->kc;

	if (k)
		pf_disable(k->ring.fd);
}

static void on_sample(void *arg, uint32_t tid, uint64_t count, uint64_t ip, uint64_t sp,
		      uint64_t bp, const void *stack, size_t len)
{
	struct kc_state *k = arg;
	uint64_t *f = k->frames[!k->last], hits;
	uint32_t flags = 0;
	int n;

	(void)count;
	/* rt_sigreturn: the handler's (or a handler's) last system call. */
	if (!stack || (ip >= kc_restorer && ip < kc_restorer + 16))
		return;
	n = unwind_capture_copy(ip, sp, bp, 1, stack, len, f, CP_MAX_DEPTH, &flags);
	/* In a signal handler (the sampler's: a page fault, its delivery;
	 * or the program's), whose stack returns to the restorer. */
	if (n <= 0)
		return;
	for (int i = 1; i < n; i++)
		if (f[i] + 1 - kc_restorer < 17)
			return;
	/* A record stands for the kernel's period of kernel-mode time. */
	k->acc += k->period;
	hits = k->acc / k->mean;
	k->acc -= hits * k->mean;
	if (hits)
		cp_sink.stack(f, n, flags, tid, cp.col[RES_CPU], hits);
	k->owed += hits;
	k->last = !k->last;
	k->nlast = n;
	k->flast = flags;
}

void kc_drain(struct cp_thread *t)
{
	struct kc_state *k = t->kc;

	if (!k)
		return;
	/* Full, less room for two records: the kernel dropped some. */
	k->full = pf_waiting(&k->ring) + 2 * (PF_KSTACK_COPY + 256) > pf_room(&k->ring);
	k->nlast = 0;
	pf_drain(&k->ring, k->rec, k->skip, on_sample, k);
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
	return t->kc ? settle(t, t->kc, crossed, 1) : crossed;
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
	kc_drain(t);
	settle(t, k, crossed, 0);
}

void kc_mark(struct cp_thread *t)
{
	struct kc_state *k = t->kc;

	if (k)
		k->skip = pf_head(&k->ring);
}
