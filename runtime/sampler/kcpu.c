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
 * So beside it each thread has a second task-clock at the same mean
 * period, sampling in kernel mode only, into a ring of its own: at each
 * of its overflows (a timer firing while the thread is in a system call
 * or a page fault) the kernel writes the user registers as the kernel was
 * entered and a copy of the user stack: the system call's caller, the
 * faulting instruction.  Nobody is signalled.  The thread drains its ring
 * first thing in each of its signals (kc_drain): each record is one hit
 * on its stack, owed by the CPU clock, whose next crossed boundaries pay
 * it (kc_settle) before the rest go to the interrupted stack.  So the CPU
 * clock's total is unchanged, and the kernel's share of it goes where it
 * was spent.
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
 * each); a thread past that, or refused one (perf_event_paranoid 2
 * forbids kernel-mode sampling to all but root), is credited as before.
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
	size_t len;       /* this mapping's */
	struct cp_thread *t;
	uint64_t frames[CP_MAX_DEPTH];
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
	if (__atomic_add_fetch(&kc_live, 1, __ATOMIC_RELAXED) > KC_MAX || !fds_spare(1, 0))
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
	k->owed = k->skip = 0;
	k->t = t;
	if (pf_open_ring(&k->ring, t->tid, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK,
			 cp_draw(t, cp.clock_interval), PF_KSTACK_COPY, 1) < 0) {
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
	uint32_t flags = 0;
	int n;

	(void)count;
	/* rt_sigreturn: the handler's (or a handler's) last system call. */
	if (!stack || (ip >= kc_restorer && ip < kc_restorer + 16))
		return;
	n = unwind_capture_copy(ip, sp, bp, 1, stack, len, k->frames, CP_MAX_DEPTH, &flags);
	/* In a signal handler (the sampler's: a page fault, its delivery;
	 * or the program's), whose stack returns to the restorer. */
	if (n <= 0)
		return;
	for (int i = 1; i < n; i++)
		if (k->frames[i] + 1 - kc_restorer < 17)
			return;
	cp_sink.stack(k->frames, n, flags, tid, cp.col[RES_CPU], 1);
	k->owed++;
}

void kc_drain(struct cp_thread *t)
{
	struct kc_state *k = t->kc;

	if (k && pf_drain(&k->ring, k->rec, k->skip, on_sample, k) && cp.random) {
		/* Random periods, as every resource's: none that a program's
		 * loop of calls divides. */
		pf_set_period(k->ring.fd, cp_draw(t, cp.clock_interval));
		t->nsys++;
	}
}

uint64_t kc_settle(struct cp_thread *t, uint64_t crossed)
{
	struct kc_state *k = t->kc;
	uint64_t pay;

	if (!k)
		return crossed;
	pay = k->owed < crossed ? k->owed : crossed;
	k->owed -= pay;
	return crossed - pay;
}

void kc_mark(struct cp_thread *t)
{
	struct kc_state *k = t->kc;

	if (k)
		k->skip = pf_head(&k->ring);
}
