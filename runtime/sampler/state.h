/*
 * state.h - the cpprof sampler's shared state (state.c): the run's
 * configuration (from CPPROF_EVENTS and friends, filled in by sampler.c),
 * each thread's sampling state, and the one function every sampling path
 * ends in, cp_credit.  Every module of the sampler includes this, and
 * sampler.c, which starts and stops them all, includes theirs: it is the
 * top of the module graph, this header the bottom.
 *
 * Who runs where:
 *   signal context  cp_handler (sampler.c): overflow of a perf event or of
 *                   a CPU-time timer in the thread that consumed the gticks
 *   the program     the interposed read/write calls (io.c)
 *   the watcher     a thread of ours (watch.c): real time of blocked
 *                   threads, and the context-switch ring buffers
 * None of them locks or allocates: per-thread state is in initial-exec TLS
 * (this thread's only), the stack table is lock-free (table.c).
 */
#ifndef CP_STATE_H
#define CP_STATE_H

#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "resources.h"

#define CP_SIG SIGPROF
#define CP_TIMER_TAG 0x43505046 /* si_value of the sampler's CPU timers */
#define CP_MAX_DEPTH 1024
#define CP_VIS __attribute__((visibility("default")))

struct cp_config {
	int on;                    /* sampling set up and not stopped */
	int nres;                  /* counters in the file, in column order */
	int res[RES_N];            /* column -> resource */
	int col[RES_N];            /* resource -> column, -1 if not sampled */
	uint64_t interval[RES_N];  /* mean interval, gticks */
	int random;                /* draw intervals around the mean */
	int no_perf;               /* CPPROF_NO_PERF: timers only */
	int py;                    /* a Python program whose frames are read (pyframes.h) */
	int clock_perf;            /* the CPU clock is perf task-clock (else a timer) */
	int clock_res;             /* RES_CPU, or RES_REAL when only real needs the clock */
	int clock_needed;          /* cpu or real asked */
	uint64_t clock_interval;   /* period of the CPU clock */
/* The least period the kernel is given for a task-clock (the CPU clock's,
 * the kernel-mode clock's, kcpu.c), whatever the interval: each overflow
 * is a timer interrupt, which the task-clock counts as the thread's time,
 * and on a VM an interrupt, the signal it raises and the re-arming cost
 * ~40 us together.  At periods near that (the kernel's own floor is
 * 10 us) the interrupts took all the thread's time: a loop of 1.1 s ran
 * 10.6 s under -e cpu:100us, and never ended under 50us.  A shorter
 * interval still works: each sample then credits several hits. */
#define CP_CLOCK_MIN_PERIOD 50000
	int64_t syscall_tp;        /* tracepoint id of raw_syscalls:sys_exit */
	uint64_t sys_min_period;   /* its kernel period is never below this */
	uint64_t start_ns;
	pid_t root_pid;
	char out[PATH_MAX];
};
extern struct cp_config cp;

/* One resource's counting state in one thread. */
struct cp_rstate {
	int fd;            /* perf event, or -1 */
	int has_timer;
	timer_t timer;
	uint64_t base;     /* raw count when counting started */
	uint64_t consumed; /* gticks so far (raw - base - own) */
	uint64_t next;     /* the next sample boundary, in consumed gticks */
	uint64_t samples;  /* overflows taken (the period is redrawn every 8th) */
	/* The CPU clock's perf event: its raw count when its period was last
	 * set (about), and that period; 0 before (sampler.c, clock_late). */
	uint64_t armed, armed_period;
	/* syscalls: hits whose boundary was found crossed away from a system
	 * call's return (at another event's signal, in the program's code):
	 * given to the next signal that is at one (sampler.c, take). */
	uint64_t owed;
	int owed_armed; /* the kernel's period set short for them */
};

struct cp_slot;
struct kc_state;

struct cp_thread {
	int ready;           /* set up: signals and calls may sample */
	int tid;
	int busy;            /* inside an interposed call's sampling */
	int own;             /* in the sampler's own work outside the handler
			      * (cp_own_begin): a signal waits for the next */
	uint64_t nsys;       /* syscalls the sampler made in this thread and
			      * that have returned (the syscalls resource
			      * leaves them out) */
	uint64_t rng;
	uint64_t *frames;    /* CP_MAX_DEPTH for the signal handler */
	uint64_t *sysframes; /* CP_MAX_DEPTH: the last system calls sample's
			      * stack (with -e syscalls), for those owed at
			      * the thread's end */
	int nsysframes;
	uint32_t sysflags;
	uint64_t *cframes;   /* CP_MAX_DEPTH for the interposed calls */
	uint64_t *lframes;   /* 2 x CP_MAX_DEPTH for the Python frames' rewrite (cp.py) */
	uint64_t *ioframes;  /* 2 x CP_MAX_DEPTH, the same for the interposed calls
			      * (the handler may interrupt them) */
	size_t frames_len;   /* the one mapping they are in (th_setup) */
	struct kc_state *kc; /* its kernel-mode CPU samples (kcpu.h), or NULL */
	struct cp_slot *slot;
	struct cp_rstate r[RES_N];
	/* The program's view of CP_SIG in this thread's mask (signals.c):
	 * blocked, as it asked, though it is not; and one of its own CP_SIGs
	 * held until it unblocks. */
	int sigview, sigpend;
	/* The thread's real mask (CP_SIG aside) as the program's last call
	 * through the sampler's functions left it, or its creator's then: a
	 * signal that comes with one of these unblocked was unblocked by a
	 * system call of the program's own (signals.c's sg_chain). */
	sigset_t sigreal;
	int sigreal_set;
	/* The view is its creator's, and it has made no call through the
	 * sampler's functions since (the only case sg_chain doubts it). */
	int sigview_inherited;
	int inchain; /* in the program's own CP_SIG handler (sg_chain), inside
		      * the sampler's: CP_SIG stays blocked there, really */
};
extern __thread struct cp_thread cp_self __attribute__((tls_model("initial-exec")));

/* A mean-`mean` interval: uniform in [mean/2, 3*mean/2] unless --no-random. */
uint64_t cp_draw(struct cp_thread *t, uint64_t mean);
/*
 * A thread's first boundary, from its start: drawn from the equilibrium
 * distribution of cp_draw's intervals (the gap to the next boundary at a
 * random moment of a long run), as if the thread joined a run already
 * going.  Then a thread that consumes x gticks is credited x/mean hits on
 * average, however short it lives; a first interval like the others
 * (mean/2 to 3mean/2, on average mean) credited half a hit less a thread:
 * 100 threads of 3 ms of CPU each came to 198 samples, not 300.  mean
 * with --no-random (every boundary a multiple of it).
 */
uint64_t cp_draw_first(struct cp_thread *t, uint64_t mean);

/*
 * The gticks consumed by resource r in thread t are now `consumed`: return
 * the sample boundaries crossed since the last call (hits, paper 5.1:
 * "when more gticks pass than a single sample boundary, we credit that
 * many hits") and move the next boundary past them.
 */
uint64_t cp_credit(struct cp_thread *t, int r, uint64_t consumed);

/*
 * The sampler's own work outside its handler, in the program's thread (the
 * loader wrappers' module snapshot, loader.c): like the handler's, its CPU
 * time is left out of the CPU clock (the base moves past it) and its
 * system calls out of the syscalls resource (nsys), and a signal that
 * comes meanwhile does nothing: the next reads the counts.  With kc, the
 * thread's kernel-mode records before it are drained first, and those it
 * makes are passed over (kcpu.h); without (after a dlclose, which the
 * records before may name: walked while it is going on, a library it
 * unloaded was read), the rings are left to the next signal.  Not nested;
 * nothing is done before the thread is set up.
 */
struct cp_own {
	int on, busy, clocked, kc;
	uint64_t cpu, sys, nsys;
};
void cp_own_begin(struct cp_own *o, int kc);
void cp_own_end(struct cp_own *o);

/* A stack f of n frames in the sampler's own work folded into the call
 * the program made (sampler.c); the frames left.  busy: the thread was
 * in that work (the handler's), else only leading frames of ours fold
 * (a kernel-mode record's stack).  Async-signal-safe. */
int cp_fold_own(uint64_t *f, int n, uint32_t *flags, int busy);

/* Nanoseconds of CLOCK_MONOTONIC / CLOCK_REALTIME; async-signal-safe. */
uint64_t cp_now(clockid_t c);

/* How the program ended, INFO "ended": "exit", or "_exit(N)" (exit.c). */
extern char cp_ended[96];

/* The program calls _exit(status): save if that is for us (exit.c). */
void cp_exit_now(int status);

/* "cpprof: <what>" on stderr, each distinct line once; never stdio. */
void cp_warn(const char *a, const char *b, const char *c);

#endif
