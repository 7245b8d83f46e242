/*
 * sampler.c - owns the sampler's life and its signal handler (cp_*): the
 * configuration from the environment, start-up in the preloaded library's
 * constructor, the overflow handler, the crediting of hits (paper 5.1),
 * fork and exit.
 *
 * Environment (set by `cpprof record`, `cfprof record`; the prefix is the
 * collector's, sink.h: CPPROF_, CFPROF_):
 *   _EVENTS    NAME:INTERVAL,... (intervals in gticks); default cpu:1ms
 *   _RANDOM    0: fixed intervals (default: uniform in mean +- 50%)
 *   _OUT       the data file (default the collector's, made absolute)
 *   _ROOT_PID  the process that writes FILE; others write FILE.PID
 *   _NO_PERF   1: act as if perf_event_open were not permitted
 *
 * The handler is async-signal-safe: it reads a counter (read(2)), walks the
 * interrupted stack with unwind_capture_context (no loader lock, no malloc,
 * no locks), adds to the lock-free table, and may re-arm the event
 * (ioctl(2), timer_settime(2)).  It touches only this thread's TLS, the
 * table's atomics and the read-only configuration; errno is preserved.
 */
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "altstack.h"
#include "execs.h"
#include "fds.h"
#include "format.h"
#include "io.h"
#include "kcpu.h"
#include "keep.h"
#include "outfile.h"
#include "modules.h"
#include "newfile.h"
#include "perf.h"
#include "pyframes.h"
#include "langname.h"
#include "resources.h"
#include "signals.h"
#include "sandbox.h"
#include "sink.h"
#include "state.h"
#include "thread.h"
#include "unwind.h"
#include "watch.h"

/* ---- the handler ---- */

static void rearm(struct cp_thread *t, int r, uint64_t consumed)
{
	struct cp_rstate *s = &t->r[r];
	uint64_t left = s->next - consumed;

	if (!cp.random && r != RES_CPU)
		return; /* the kernel reloads the same period itself */
	/* A period change costs: a software event overflows once more right
	 * after it (at its next event), an extra signal that on a VM costs as
	 * much as a sample (~15 us); the task-clock's hrtimer is reprogrammed
	 * (~2 us).  So the kernel's period is redrawn every 8th sample only,
	 * and repeated meanwhile: the sampling points stay random, and the
	 * hits do not depend on them (they are the boundaries crossed, drawn
	 * per hit by cp_credit).  The draw is a fresh one, not the distance
	 * to our next boundary, which is shorter on average.
	 * But the task-clock's period is set to that distance at every
	 * sample: an overflow then comes at each boundary, and none is
	 * passed unseen when the thread ends (a thread of a few ms lost half
	 * a hit on average: 52-cp-threads.t), for the hrtimer's ~2 us. */
	/* The syscall tracepoint has no extra overflow to pay: its period is
	 * redrawn at every sample, as the paper's are.  Held for 8 samples,
	 * a period that divided a program's loop of two calls (tar's read
	 * and write) put every sample on one of them: 97% in read. */
	if (s->fd >= 0 && r != RES_CPU && r != RES_SYSCALLS) {
		if (++s->samples % 8)
			return;
		left = cp_draw(t, cp.interval[r]);
	}
	/* Never less than half the mean, the shortest draw, nor
	 * CP_CLOCK_MIN_PERIOD: a distance of a few us (the last sample
	 * overshot its boundary by nearly a draw) made the kernel's floor,
	 * 10 us, whose interrupts then took all the thread's time (the
	 * handler's walk of 35 frames 180 ms: python3 under -e cpu:100us
	 * ran 15 s for 0.5).  The boundary that the period passes is
	 * credited at the next overflow, a point as independent of the
	 * program as the boundary. */
	if (r == RES_CPU && left < cp.interval[r] / 2)
		left = cp.interval[r] / 2;
	if (r == RES_CPU && left < CP_CLOCK_MIN_PERIOD)
		left = CP_CLOCK_MIN_PERIOD;
	if (s->fd >= 0) {
		/* The syscall tracepoint counts the handler's own syscalls too:
		 * its period must leave room for them, or the handler's own
		 * calls would overflow it again and again.  Below that room,
		 * a period drawn in [room, 2 x room]: one fixed period was
		 * the same trap at small intervals. */
		if (r == RES_SYSCALLS)
			left = left + 2 < cp.sys_min_period
				       ? (cp.random ? cp.sys_min_period / 2 + cp_draw(t, cp.sys_min_period)
						    : cp.sys_min_period)
				       : left + 2;
		pf_set_period(s->fd, left);
		t->nsys++;
		if (r == RES_CPU)
			s->armed_period = left;
		/* A software event (not the hrtimer-driven task-clock) overflows
		 * at its very next event after a period change: that signal
		 * reads the counts like any other, and finds no boundary
		 * crossed, or one.  (It was skipped, by a flag the signal that
		 * named the event cleared: two fault events at interval 1
		 * overflow at the same fault, their signals make one, and the
		 * other's flag stayed set: minor-faults got 10 samples of
		 * 1,600.) */
	} else if (s->has_timer) {
		struct itimerspec it;
		it.it_value.tv_sec = (time_t)(left / 1000000000);
		it.it_value.tv_nsec = (long)(left % 1000000000);
		it.it_interval.tv_sec = (time_t)(cp.interval[r] / 1000000000);
		it.it_interval.tv_nsec = (long)(cp.interval[r] % 1000000000);
		timer_settime(s->timer, 0, &it, NULL);
	}
}

/* This library's code (its executable segment): own_text sets it. */
static uintptr_t own_lo, own_hi;

static int own_segment(struct dl_phdr_info *info, size_t size, void *arg)
{
	uintptr_t self = (uintptr_t)arg;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && self - lo < ph->p_memsz) {
			own_lo = lo;
			own_hi = lo + ph->p_memsz;
			return 1;
		}
	}
	return 0;
}

/* Once, before the first sample. */
static void own_text(void)
{
	dl_iterate_phdr(own_segment, (void *)(uintptr_t)own_text);
}

/*
 * A sample in the sampler's own work inside an interposed call (io.c's
 * io_kend, kcpu.c's drains after the real read returned: 5% of dd bs=4k's
 * samples, named io_kend, kc_call_drain, io_kbegin) goes to the call the
 * program made: the leading frames in this library fold into the
 * outermost of them, the exported wrapper (read).  Its frame 0 is then a
 * return address.
 */
static int own(uint64_t pc)
{
	return pc - own_lo < own_hi - own_lo;
}

int cp_fold_own(uint64_t *f, int n, uint32_t *flags, int busy)
{
	int i = 0, k;

	/* In the sampler's work (busy: draining the rings after the real
	 * call, timing it), what that work called is folded too (the vDSO's
	 * clock_gettime, libc's __errno_location: 5% of dd's samples were
	 * io_kend's, a few walk_regs'): the innermost run of frames here
	 * folds into its outermost, the wrapper, whatever is above it. */
	if (busy)
		while (i < n && !own(f[i]))
			i++;
	if (i >= n || !own(f[i]))
		return n;
	for (k = i; k + 1 < n && own(f[k + 1]); k++)
		;
	if (!k)
		return n;
	memmove(f, f + k, (size_t)(n - k) * sizeof *f);
	*flags &= ~(uint32_t)FORMAT_STACK_PC_FIRST;
	return n - k;
}

/* The interrupted stack, walked at most once per signal. */
struct caught {
	const void *uc;
	int n; /* -1: not yet */
	uint32_t flags;
	int busy; /* the thread was in the sampler's own work (state.h) */
	int clocked;     /* the thread has a CPU clock (perf task-clock or timer) */
	uint64_t cpu_in; /* its raw count at the handler's entry */
	int cpu_taken;   /* take() read it: cpu_consumed is its count */
	uint64_t cpu_consumed;
	/* The fault events' raw counts at the handler's entry, the
	 * program's: what comes after is the handler's own. */
	uint64_t fault_in[RES_MAJOR_FAULTS - RES_PAGE_FAULTS + 1];
};

static void record(struct cp_thread *t, struct caught *c, int col, uint64_t hits)
{
	if (cp_sink.here) {
		const ucontext_t *uc = c->uc;

		cp_sink.here(0, col, hits, uc ? (uintptr_t)uc->uc_mcontext.gregs[REG_RIP] : 0);
		return;
	}
	if (c->n < 0) {
		c->n = unwind_capture_context(c->uc, t->frames, CP_MAX_DEPTH, &c->flags);
		if (c->n > 1)
			c->n = cp_fold_own(t->frames, c->n, &c->flags, c->busy);
		/* A Python program: its frames in place of the eval loop's. */
		if (cp.py && t->lframes) {
			uint64_t before = py_safe_syscalls;

			c->n = py_rewrite_signal(t->frames, c->n, CP_MAX_DEPTH, t->lframes, &c->flags,
						 (uint8_t *)(t->lframes + CP_MAX_DEPTH));
			/* Its reads are system calls: the syscalls resource's
			 * take() leaves them out as the handler's own (without,
			 * each sample's reads made the next: -e syscalls:10 on
			 * python3 never ended). */
			t->nsys += py_safe_syscalls - before;
		}
	}
	cp_sink.stack(t->frames, c->n, c->flags, (uint32_t)t->tid, col, hits);
}

/* Whether the OS uses protection keys (CPUID 7: ECX bit 4, OSPKE): then
 * memory may be executable and not readable. */
static int cp_ospke = -1;

static int ospke(void)
{
	unsigned a = 7, b, c = 0, d;

	__asm__ volatile("cpuid" : "+a"(a), "=b"(b), "+c"(c), "=d"(d));
	return (c >> 4) & 1;
}

/*
 * Whether the signal came as a system call returned: the interrupted pc
 * is just past a `syscall` instruction (0f 05), or on it (a call the
 * kernel restarts).  The syscalls resource's hits go only there.  Code
 * is readable where it runs, but for execute-only memory under
 * protection keys: there it is read by process_vm_readv, which fails
 * rather than faults.  An instruction across a page's edge is taken as
 * one (the page before may be gone).
 */
static int at_syscall(struct cp_thread *t, const void *uc)
{
	uintptr_t pc;
	uint8_t b[4];

	if (!uc)
		return 1;
	pc = (uintptr_t)((const ucontext_t *)uc)->uc_mcontext.gregs[REG_RIP];
	if ((pc & 4095) < 2 || (pc & 4095) > 4094)
		return 1;
	if (cp_ospke) {
		struct iovec l = { b, sizeof b }, r = { (void *)(pc - 2), sizeof b };

		t->nsys += 2;
		if (syscall(SYS_process_vm_readv, syscall(SYS_getpid), &l, 1UL, &r, 1UL, 0UL) !=
		    (long)sizeof b)
			return 1;
	} else {
		memcpy(b, (const void *)(pc - 2), sizeof b);
	}
	return (b[0] == 0x0f && b[1] == 0x05) || (b[2] == 0x0f && b[3] == 0x05);
}

/* Read resource r's counter, credit its hits, re-arm it. */
static void take(struct cp_thread *t, int r, struct caught *c)
{
	struct cp_rstate *s = &t->r[r];
	uint64_t consumed, crossed, mine, real = 0;

	if (r == RES_CPU && c->clocked) {
		if (c->cpu_in < s->base)
			return;
		consumed = c->cpu_in - s->base;
	} else if (res_is_fault(r)) {
		/* Its count at the handler's entry: the faults since are ours. */
		if (c->fault_in[r - RES_PAGE_FAULTS] < s->base)
			return;
		consumed = c->fault_in[r - RES_PAGE_FAULTS] - s->base;
	} else if (s->fd >= 0) {
		uint64_t own = r == RES_SYSCALLS ? t->nsys : 0, raw = pf_read(s->fd);
		t->nsys++;
		if (raw < s->base + own)
			return;
		consumed = raw - s->base - own;
	} else {
		consumed = cp_now(CLOCK_THREAD_CPUTIME_ID) - s->base;
	}
	crossed = cp_credit(t, r, consumed);
	/* Less what kernel-mode samples took of the CPU clock's (kcpu.h). */
	mine = r == RES_CPU && cp.col[r] >= 0 ? kc_settle(t, crossed) : crossed;
	/* A system call's boundary found crossed in the program's code (the
	 * kernel's period, which counts the handler's own calls too, was
	 * longer than the distance, and the CPU clock's signal read the
	 * count first): its hits wait for the next signal at a system call's
	 * return, which the kernel is told, once, to make soon.  Given to
	 * the code the CPU clock interrupted, git log -p had 16% of its
	 * system calls in a function that makes none.  (A period set makes
	 * the event overflow at its next count, a call of the handler's:
	 * that signal, here, sets nothing more.) */
	if (r == RES_SYSCALLS && cp.col[r] >= 0 && (mine || s->owed)) {
		if (!at_syscall(t, c->uc)) {
			s->owed += mine;
			if (!s->owed_armed) {
				pf_set_period(s->fd, cp.sys_min_period);
				t->nsys++;
				s->owed_armed = 1;
			}
			return;
		}
		mine += s->owed;
		s->owed = 0;
		if (s->owed_armed) {
			/* The kernel's period as it was: the distance to the
			 * next boundary, or with fixed intervals the interval
			 * (rearm leaves that to the kernel). */
			s->owed_armed = 0;
			if (cp.random)
				crossed = crossed ? crossed : 1;
			else
				pf_set_period(s->fd, cp.interval[r] + 1 < cp.sys_min_period
							     ? cp.sys_min_period
							     : cp.interval[r] + 1),
					t->nsys++;
		}
	}
	if (mine && cp.col[r] >= 0) /* else the clock serves real only */
		record(t, c, cp.col[r], mine);
	/* Its stack, for those owed at the thread's end (thread.c). */
	if (r == RES_SYSCALLS && mine && t->sysframes && c->n > 0) {
		memcpy(t->sysframes, t->frames, (size_t)c->n * sizeof *t->frames);
		t->nsysframes = c->n;
		t->sysflags = c->flags;
	}
	if (r == RES_CPU && cp.col[RES_REAL] >= 0 && t->slot)
		real = __atomic_exchange_n(&t->slot->real_pending, 0, __ATOMIC_ACQ_REL);
	if (real)
		real = kc_settle_real(t, real);
	if (real)
		record(t, c, cp.col[RES_REAL], real);
	/* The CPU clock is re-armed by the handler, once its own time is
	 * left out. */
	if (r == RES_CPU && c->clocked) {
		c->cpu_taken = 1;
		c->cpu_consumed = consumed;
	} else if (crossed) {
		rearm(t, r, consumed);
	}
}

/*
 * How late the CPU clock's overflow signal came, at raw count `in` (the
 * handler's entry): the thread's time from the period's end to here, in
 * the kernel (the timer interrupt, the irq_work that raises the signal,
 * the signal's frame) and, before it, the last handler's re-arming and
 * rt_sigreturn.  None of it is the program's, but the task-clock counts
 * it: 16-35 us a signal on this VM (60 and more on a busy host), a third
 * of the samples at -e cpu:100us (a loop of 0.66 s of CPU had 10,965
 * samples, 1.1 s) and 2-10% at 1 ms.  The kernel's period ends where it
 * was set plus the period, so what is past that end is the delay.  But a
 * signal held (a handler of the program's that blocks it, a wait in
 * the kernel before its delivery) comes later by program time: so only
 * up to half the period, and CP_LATE_MAX, and nothing when a whole
 * period more went by (a period that ended in kernel mode, unsignalled,
 * or a signal held that long), or there is no period to go by (the
 * signal was another event's, or the thread's first).
 */
#define CP_LATE_MAX 100000
static uint64_t clock_late(const struct cp_rstate *s, uint64_t in)
{
	uint64_t p = s->armed_period, late, cap;

	if (!p || in < s->armed + p || in - s->armed >= 2 * p)
		return 0;
	late = in - s->armed - p;
	cap = p / 2 < CP_LATE_MAX ? p / 2 : CP_LATE_MAX;
	return late < cap ? late : cap;
}

/* The calling thread's CPU clock, raw: its task-clock's count or its
 * CPU time. */
static uint64_t cpu_raw(struct cp_thread *t)
{
	struct cp_rstate *s = &t->r[RES_CPU];

	if (s->fd < 0)
		return cp_now(CLOCK_THREAD_CPUTIME_ID);
	t->nsys++;
	return pf_read(s->fd);
}

void cp_own_begin(struct cp_own *o, int kc)
{
	struct cp_thread *t = &cp_self;
	struct cp_rstate *c = &t->r[RES_CPU], *y = &t->r[RES_SYSCALLS];
	int e = errno;

	o->on = __atomic_load_n(&t->ready, __ATOMIC_ACQUIRE) && !t->own;
	if (!o->on)
		return;
	o->busy = t->busy;
	o->kc = kc && !cp.py;
	t->busy = 1; /* its reads are not the program's (io.c) */
	if (o->kc)
		kc_call_drain(t); /* the program's, before ours begin */
	__atomic_store_n(&t->own, 1, __ATOMIC_RELAXED);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	/* The syscalls first: the CPU clock's read is then among ours. */
	o->sys = y->fd >= 0 ? pf_read(y->fd) : 0;
	o->nsys = __atomic_load_n(&t->nsys, __ATOMIC_RELAXED);
	o->clocked = c->fd >= 0 || c->has_timer;
	o->cpu = o->clocked ? (c->fd >= 0 ? pf_read(c->fd) : cp_now(CLOCK_THREAD_CPUTIME_ID)) : 0;
	errno = e;
}

void cp_own_end(struct cp_own *o)
{
	struct cp_thread *t = &cp_self;
	struct cp_rstate *c = &t->r[RES_CPU], *y = &t->r[RES_SYSCALLS];
	int e = errno;

	if (!o->on)
		return;
	if (o->clocked) {
		uint64_t now = c->fd >= 0 ? pf_read(c->fd) : cp_now(CLOCK_THREAD_CPUTIME_ID);
		if (now > o->cpu)
			c->base += now - o->cpu;
	}
	if (y->fd >= 0) {
		/* raw_syscalls:sys_exit counts a call as it returns: the two
		 * reads and what came between, less what nsys has of it
		 * already (the rt_sigreturns of signals that did nothing). */
		uint64_t now = pf_read(y->fd), mine = now - o->sys + 1,
			 known = __atomic_load_n(&t->nsys, __ATOMIC_RELAXED) - o->nsys;
		if (now >= o->sys && mine > known)
			__atomic_fetch_add(&t->nsys, mine - known, __ATOMIC_RELAXED);
	}
	if (o->kc)
		kc_mark(t);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	__atomic_store_n(&t->own, 0, __ATOMIC_RELAXED);
	t->busy = o->busy;
	errno = e;
}

/*
 * EFLAGS.AC (alignment check) off for the rest of the handler.  A program
 * may set it for a few instructions (HotSpot's CPU-feature probe flips it
 * to tell a 486 from a 386), and the kernel hands it to the handler: an
 * unaligned access of ours then trapped (#AC, SIGBUS), which the JVM took
 * for its own crash and reported on the sampler's alternate stack until
 * that overflowed (java under cpprof, one run in about 60: exit 139).
 * rt_sigreturn gives the program its flags back.
 */
#define EFLAGS_AC 0x40000
static __attribute__((noinline)) void ac_off(void)
{
	__asm__ volatile("pushfq\n\tandq %0, (%%rsp)\n\tpopfq" : : "i"(~(long)EFLAGS_AC) : "cc", "memory");
}

/*
 * CP_SIG: an overflow of one of this thread's perf events (si_fd names it)
 * or of its CPU-time timer.  Two overflows before the signal is delivered
 * make one signal (it is not a queued signal, deliberately: a full queue
 * of real-time signals turns into SIGIO, which kills), so every counting
 * event of the thread is read, not only the one named.
 */
static __attribute__((noinline)) void handle(int sig, siginfo_t *si, void *uc)
{
	struct cp_thread *t = &cp_self;
	int e = errno, r = -1, busy = t->busy;
	struct caught c = { .uc = uc, .n = -1, .busy = busy };

	/* Ours: an overflow of a perf event (fasync: a POLL_* code; nothing
	 * else sends SIGPROF with one) or of a CPU timer of ours (its tag).
	 * One may still arrive after its event was closed (thread exit, fork):
	 * it is dropped, never passed on. */
	if (si->si_code == SI_TIMER && si->si_value.sival_int == CP_TIMER_TAG) {
		if (t->r[RES_CPU].has_timer && si->si_timerid == (int)(intptr_t)t->r[RES_CPU].timer)
			r = RES_CPU;
	} else if (si->si_code >= POLL_IN && si->si_code <= POLL_HUP) {
		for (int k = 0; k < RES_N && t->frames; k++)
			if (t->r[k].fd >= 0 && t->r[k].fd == si->si_fd)
				r = k;
	} else {
		/* Not ours: an ITIMER_PROF tick, a kill -PROF.  The program's. */
		sg_chain(sig, si, uc);
		goto out;
	}
	if (r < 0)
		goto out;
	if (!__atomic_load_n(&t->ready, __ATOMIC_ACQUIRE) || !__atomic_load_n(&cp.on, __ATOMIC_RELAXED))
		goto out;
	if (uc) /* a call left by a longjmp is over */
		kc_call_gone(t, (uint64_t)((const ucontext_t *)uc)->uc_mcontext.gregs[REG_RSP]);
	/* In a Python program's interposed call (to its end, kc_call_out),
	 * as in its drain: the call's kernel records are not yet credited,
	 * and the CPU clock's hits taken now would count that time a second
	 * time, at the call's stack (reader 0.91-0.94 of cp_pyread.py's CPU
	 * at -e cpu:100us, 0.65-0.72 true). */
	if (kc_busy(t) || kc_in_call(t) || __atomic_load_n(&t->own, __ATOMIC_RELAXED))
		goto out; /* its counts are read at the next */
	/* Its reads are libc's read, the sampler's own (io.c): not sampled. */
	t->busy = 1;
	/* The handler's own page faults (its tables and stacks touched the
	 * first time, the kernel-mode records' drain's too) are not the
	 * program's: each fault event's base moves past them, as the CPU
	 * clock's does past its time.  Counted, perl under -e
	 * cpu,page-faults:1 had 44% more faults than bare, and at interval 1
	 * each overflowed in the handler, and its signal came after it, in
	 * the code it interrupted.  The counts are read first; the kernel's
	 * records of the CPU clock made meanwhile are ours (kc_pin). */
	kc_pin(t);
	for (int k = RES_PAGE_FAULTS; k <= RES_MAJOR_FAULTS; k++)
		if (t->r[k].fd >= 0) {
			c.fault_in[k - RES_PAGE_FAULTS] = pf_read(t->r[k].fd);
			t->nsys++;
		}
	kc_drain(t);
	kc_unpin(t);
	/* The handler's own CPU time (the walk, the Python frames' reads)
	 * is not the program's: its CPU clock leaves it out (the base moves
	 * past it).  Counted, a sample dearer than the interval (a cold
	 * walk of python3, 60 us, under -e cpu:20us) made the next at once,
	 * and the program never got back its CPU: python3 did not end. */
	c.clocked = t->r[RES_CPU].fd >= 0 || t->r[RES_CPU].has_timer;
	if (c.clocked)
		c.cpu_in = cpu_raw(t);
	/* The signal's own delay is not the program's time either. */
	if (r == RES_CPU && t->r[RES_CPU].fd >= 0)
		t->r[RES_CPU].base += clock_late(&t->r[RES_CPU], c.cpu_in);
	take(t, r, &c);
	for (int k = 0; k < RES_N; k++)
		if (k != r && t->r[k].fd >= 0 && (!res_is_fault(k) || res_is_fault(r)))
			take(t, k, &c); /* a fault event's only at a fault: below */
	if (c.clocked) {
		uint64_t out = cpu_raw(t);

		if (out > c.cpu_in)
			t->r[RES_CPU].base += out - c.cpu_in;
		/* Its period, the distance to its next boundary in the
		 * program's time, counted from here: at every signal, as the
		 * kernel's period went on through the handler, and one that
		 * the handler's time brought early crosses none. */
		if (c.cpu_taken) {
			t->r[RES_CPU].armed_period = 0;
			rearm(t, RES_CPU, c.cpu_consumed);
			t->r[RES_CPU].armed = out;
		}
	}
	for (int k = RES_PAGE_FAULTS; k <= RES_MAJOR_FAULTS; k++)
		if (t->r[k].fd >= 0) {
			uint64_t now = pf_read(t->r[k].fd), in = c.fault_in[k - RES_PAGE_FAULTS];

			t->nsys++;
			if (now > in)
				t->r[k].base += now - in;
		}
	kc_mark(t); /* after the last (but rt_sigreturn's) */
	t->busy = busy;
out:
	t->nsys++; /* this handler's rt_sigreturn */
	errno = e;
}

/* The handler itself: AC off first, before any store the compiler makes
 * (handle's first, a 16-byte store at rsp+0x2c, trapped); for the
 * program's own CP_SIG handler (sg_chain) too, which loses nothing by it. */
static void handler(int sig, siginfo_t *si, void *uc)
{
	if (((const ucontext_t *)uc)->uc_mcontext.gregs[REG_EFL] & EFLAGS_AC)
		ac_off();
	handle(sig, si, uc);
}

/* ---- configuration ---- */

static int parse_events(const char *spec)
{
	char buf[1024], *save = NULL, *tok;

	if (strlen(spec) >= sizeof buf)
		return -1;
	strcpy(buf, spec);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *colon = strchr(tok, ':');
		int r;

		if (colon)
			*colon = 0;
		r = res_find(tok);
		if (r < 0)
			return -1;
		if (cp.col[r] < 0) {
			cp.col[r] = cp.nres;
			cp.res[cp.nres++] = r;
		}
		cp.interval[r] = res_table[r].interval;
		if (colon && res_parse_interval(r, colon + 1, &cp.interval[r]) < 0)
			return -1;
	}
	return cp.nres ? 0 : -1;
}

/* The collector's variable NAME: CPPROF_NAME, CFPROF_NAME. */
static const char *env(const char *name)
{
	char key[64];

	if (strlen(cp_sink.env) + strlen(name) >= sizeof key)
		return NULL;
	strcpy(key, cp_sink.env);
	strcat(key, name);
	return getenv(key);
}

static void out_path(void)
{
	const char *o = env("OUT");
	size_t n = 0;

	if (!o || !*o)
		o = cp_sink.out;
	if (o[0] != '/' && getcwd(cp.out, sizeof cp.out - 2)) {
		n = strlen(cp.out);
		cp.out[n++] = '/';
	}
	if (n + strlen(o) >= sizeof cp.out) {
		cp.out[0] = 0;
		return;
	}
	strcpy(cp.out + n, o);
}

/* Drop resource r from the run (this machine cannot sample it). */
static void drop(int r)
{
	int c = cp.col[r];

	for (int k = c; k + 1 < cp.nres; k++) {
		cp.res[k] = cp.res[k + 1];
		cp.col[cp.res[k]] = k;
	}
	cp.nres--;
	cp.col[r] = -1;
}

/* The process the sampler counts for: a vfork child (no fork handler
 * ran) that calls _exit is not it. */
static pid_t cp_pid;
static void sandboxed(void);

/* The keep's copies read and write (pread, pwrite: io.c's wrappers),
 * while its tables move: the thread is busy, its calls not sampled (a
 * child that drained its parent's kernel-mode ring into them crashed). */
static int fork_busy;

static void on_fork_prepare(void)
{
	fork_busy = cp_self.busy;
	cp_self.busy = 1;
	if (!sandbox_entered())
		keep_fork_prepare();
}

static void on_fork_parent(void)
{
	if (!sandbox_entered())
		keep_fork_parent();
	cp_self.busy = fork_busy;
}

static void fork_child(void)
{
	if (sandbox_entered())
		return;
	cp_pid = getpid();
	modules_fork_child();
	if (!cp.on) {
		keep_fork_child();
		return;
	}
	cp.start_ns = cp_now(CLOCK_REALTIME);
	/* The keep's tables are the parent's: the child's own copy first. */
	if (keep_fork_child() < 0 || cp_sink.fork_child() < 0) {
		cp.on = 0;
		cp_warn("forked child: cannot map the collector's memory; profiling stopped", NULL,
			NULL);
		return;
	}
	th_after_fork();
	wt_after_fork();
}

static void on_fork_child(void)
{
	fork_child();
	cp_self.busy = fork_busy;
}

/* Under a launcher (cpprof record, cfprof record), the collector's tables
 * go in its keep (keep.h): taken before they are made. */
static void keep_start(void)
{
	char k[64], r[64];

	if (strlen(cp_sink.env) + 9 > sizeof k)
		return;
	strcpy(k, cp_sink.env);
	strcat(k, "KEEP");
	strcpy(r, cp_sink.env);
	strcat(r, "ROOT_PID");
	keep_attach(k, r, cp_sink.kind, cp_sink.layout);
}

/* Why the launcher writes no profile from a keep (cfprof's first hook may
 * have taken it) when the collector does not start: it saves nothing at
 * exit either. */
#define NOT_STARTED "its collector did not start (said above)"

__attribute__((constructor(101))) static void cp_start(void)
{
	const char *ev = env("EVENTS"), *s;
	char how[512], why[512], no_perf[32];

	/* Every real function the interposed ones call, before anything can
	 * return: later, dlsym would take the loader's lock (io.h).  The
	 * common code's too, whose own constructors run after this one,
	 * when the CPU clock is on: their dlsym calls showed in one profile
	 * in some thirty (`_dl_init;call_init;...;dlsym`). */
	execs_init();
	fds_init();
	io_init();
	newfile_keep_umask();
	th_lookup();
	sg_lookup();
	as_lookup();
	sandbox_on(sandboxed);
	/* First: cfprof's first hook may have taken the keep already, and
	 * whatever happens below, a forked child must get its own copy. */
	pthread_atfork(on_fork_prepare, on_fork_parent, on_fork_child);
	for (int r = 0; r < RES_N; r++)
		cp.col[r] = -1;
	s = env("RANDOM");
	cp.random = !(s && s[0] == '0');
	s = env("NO_PERF");
	cp.no_perf = s && s[0] == '1';
	if (parse_events(ev && *ev ? ev : "cpu") < 0) {
		cp_warn("bad events '", ev, "'; nothing sampled");
		keep_void(NOT_STARTED);
		return;
	}
	strcpy(no_perf, cp_sink.env); /* 7 bytes */
	strcat(no_perf, "NO_PERF");
	for (int k = 0; k < cp.nres;) {
		int r = cp.res[k];
		if (res_probe(r, cp.no_perf ? no_perf : NULL, how, sizeof how, why, sizeof why) < 0) {
			cp_warn(res_table[r].name, " not sampled: ", why);
			drop(r);
			continue;
		}
		k++;
	}
	if (!cp.nres) {
		keep_void(NOT_STARTED);
		return;
	}
	if (cp.col[RES_SYSCALLS] >= 0) {
		int nperf = 0;
		cp.syscall_tp = res_tracepoint_id("raw_syscalls/sys_exit", why, sizeof why);
		for (int r = 0; r < RES_N; r++)
			nperf += cp.col[r] >= 0 && (res_table[r].how == RES_HOW_PERF || r == RES_CPU);
		/* A handler makes a read per event, an ioctl and rt_sigreturn;
		 * two handlers can run per overflow.  A smaller mean interval
		 * still works: a sample then credits several hits. */
		cp.sys_min_period = 4 * ((uint64_t)nperf + 2);
	}
	cp.clock_needed = cp.col[RES_CPU] >= 0 || cp.col[RES_REAL] >= 0;
	if (cp.col[RES_CPU] < 0 && cp.col[RES_REAL] >= 0)
		cp.interval[RES_CPU] = cp.interval[RES_REAL];
	cp.clock_interval = cp.interval[RES_CPU];
	cp.clock_perf = !cp.no_perf;
	s = env("ROOT_PID");
	cp.root_pid = s && *s ? (pid_t)atol(s) : getpid();
	cp_pid = getpid();
	own_text();
	cp_ospke = ospke();
	out_path();
	if (!cp.out[0]) {
		cp_warn("output file name too long; nothing sampled", NULL, NULL);
		keep_void(NOT_STARTED);
		return;
	}
	cp.start_ns = cp_now(CLOCK_REALTIME);
	/* A stack collector in a Python program samples its Python frames
	 * (pyframes.h): decided before any thread is set up. */
	cp.py = !cp_sink.here && py_setup(cp_sink.name) == 1;
	keep_start();
	if (cp_sink.start(cp.nres) < 0 || unwind_modules_refresh() < 0 || th_init() < 0) {
		cp_warn("cannot map the sampler's memory; nothing sampled", NULL, NULL);
		keep_void(NOT_STARTED);
		return;
	}
	if (sg_install(handler) < 0) {
		cp_warn("cannot install the SIGPROF handler; nothing sampled", NULL, NULL);
		keep_void(NOT_STARTED);
		return;
	}
	__atomic_store_n(&cp.on, 1, __ATOMIC_RELEASE);
	/* The watcher first: creating it is not the program's doing. */
	if (wt_start() < 0)
		cp_warn("cannot start the watcher thread: real time of blocked threads and "
			"context switches are not sampled", NULL, NULL);
	th_setup();
}

/*
 * The program installs a seccomp filter, in this thread, now (sandbox.h):
 * the filter may forbid what a sample does (sshd's forbids rt_sigreturn).
 * Every thread's events stopped, the watcher joined, SIGPROF the
 * program's again (pending ones dropped), and the file saved while its
 * system calls are still allowed: the profile ends here.
 */
static void sandboxed(void)
{
	if (!__atomic_load_n(&cp.on, __ATOMIC_ACQUIRE) || getpid() != cp_pid)
		return;
	__atomic_store_n(&cp.on, 0, __ATOMIC_SEQ_CST);
	th_quiet_all();
	th_teardown();
	wt_stop();
	sg_release();
	strcpy(cp_ended, "stopped at its seccomp filter");
	cp_sink.save(NULL);
}

/* After the program's atexit handlers and destructors (priority 101 runs
 * last among destructors). */
__attribute__((destructor(101))) static void cp_finish(void)
{
	if (sandbox_entered()) /* no system call of ours: it may be forbidden */
		return;
	keep_exit_handlers();
	if (!__atomic_load_n(&cp.on, __ATOMIC_ACQUIRE))
		return;
	__atomic_store_n(&cp.on, 0, __ATOMIC_SEQ_CST);
	th_teardown();
	wt_stop();
	cp_sink.save(NULL);
}

/*
 * The program execs path (execs.h): an image that spent enough CPU time
 * has its profile written aside, FILE.exec1 (FILE.PID.exec1 in a forked
 * child), while sampling goes on (the exec may fail; the tables take
 * readers while handlers add, as at exit with threads still running).
 * This thread's signals are held meanwhile.  Not in a vfork child
 * (cp_pid): it shares its parent's memory.
 */
void rt_exec_save(const char *path)
{
	char suffix[24], ended[sizeof cp_ended], was[sizeof cp_ended];
	sigset_t all, old;
	int e = errno;

	if (sandbox_entered() || !__atomic_load_n(&cp.on, __ATOMIC_ACQUIRE) || getpid() != cp_pid ||
	    !execs_aside(path, suffix, sizeof suffix, ended, sizeof ended))
		return;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	memcpy(was, cp_ended, sizeof was);
	memcpy(cp_ended, ended, sizeof ended);
	cp_sink.save(suffix);
	memcpy(cp_ended, was, sizeof was);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	errno = e;
}

/*
 * The program calls _exit (exit.c): no destructor will run.  Under a
 * launcher the keep has the tables and the launcher writes the file (it
 * is told the status); else (no keep, or a void one) save now, as the
 * destructor does.  Not in a
 * vfork child: it shares its parent's memory.
 */
void cp_exit_now(int status)
{
	sigset_t all, old;
	char num[24];

	if (sandbox_entered()) /* no system call of ours: it may be forbidden */
		return;
	/* The process is ending: no signal may cut the save short (as the
	 * monitor's mon_exit_now); the real _exit drops any that came.
	 * First thing: a timer the program set to fire just after its _exit
	 * (tests/progs/exit_alarm.c's, 200 us) must find them held. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	/* The keep has the tables, and a language's names only if it had
	 * room when the first came (langname.h): with names, the runtime
	 * saves, and the launcher does not. */
	if (getpid() != cp_pid || (keep_exiting(status) && !langname_any())) {
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		return;
	}
	strcpy(cp_ended, "_exit(");
	strcat(cp_ended, outfile_u64(num, (uint64_t)(status & 0377)));
	strcat(cp_ended, ")");
	cp_finish();
}
