/*
 * cp_sigmask: a program that blocks signals, as servers do.
 *
 * "server": every signal blocked in main before its thread is made (a
 * server takes them in a thread of its own, by sigwait or a signalfd);
 * the thread burns 0.3 s of CPU, main 0.1 s; each says whether SIGPROF is
 * blocked in its mask, as it set it.
 *
 * "handler": its own SIGPROF handler (ITIMER_PROF, 1 ms), which blocks
 * every signal while it works and sets back the mask it found.
 *
 * "itimer": its own SIGPROF handler and ITIMER_PROF, SIGPROF blocked for
 * 0.1 s of CPU (no tick may reach the handler), then unblocked (the one
 * pending tick comes at once), then 0.1 s more (ticks come).
 *
 * "rawthread": as a cgo program's threads under Go's runtime: made with
 * every signal blocked through pthread_sigmask, the thread unblocks them
 * by the system call itself, then counts the SIGPROFs of its own CPU
 * timer (timer_create, to this thread: Go's CPU profile) over 0.3 s of
 * CPU at 1 ms (at scheduler ticks: 75 at 250 Hz); it says whether it got
 * more than 40.
 *
 * "shrink": its own SIGPROF handler and ITIMER_PROF (1 ms), SIGPROF
 * blocked through pthread_sigmask; then its mask gets smaller past the
 * interposed functions, SIGPROF still blocked: a SIGUSR1 handler that
 * sets a mask and sets it back (the handler's return unblocks SIGUSR1),
 * a siglongjmp to a mask without SIGUSR2 (glibc's own sigprocmask), a
 * system call that unblocks SIGUSR2; 0.1 s of CPU after each; it says
 * how many ticks came while blocked (bare: 0).
 */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>
#include <time.h>

static volatile uint64_t sink;
static volatile sig_atomic_t ticks;

static uint64_t cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + (uint64_t)ts.tv_nsec;
}

__attribute__((noinline)) static void burn(uint64_t ns)
{
	uint64_t end = cpu_ns() + ns, x = 1;
	do
		for (int i = 0; i < 10000; i++)
			x = x * 6364136223846793005ull + 1;
	while (cpu_ns() < end);
	sink += x;
}

static int prof_blocked(void)
{
	sigset_t cur;

	pthread_sigmask(SIG_BLOCK, NULL, &cur);
	return sigismember(&cur, SIGPROF);
}

static void *worker(void *arg)
{
	burn(300000000);
	printf("thread: SIGPROF blocked %d\n", prof_blocked());
	return arg;
}

static void tick(int sig)
{
	(void)sig;
	ticks++;
}

static void usr1_masks(int sig)
{
	sigset_t t, o;

	(void)sig;
	sigemptyset(&t);
	sigaddset(&t, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &t, &o);
	pthread_sigmask(SIG_SETMASK, &o, NULL);
}

static sigjmp_buf jb;

static int shrink(void)
{
	struct itimerval it = { { 0, 1000 }, { 0, 1000 } };
	sigset_t set;
	int n[3];

	signal(SIGPROF, tick);
	signal(SIGUSR1, usr1_masks);
	sigemptyset(&set);
	sigaddset(&set, SIGPROF);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	setitimer(ITIMER_PROF, &it, NULL);
	raise(SIGUSR1);
	burn(100000000);
	n[0] = ticks;
	if (sigsetjmp(jb, 1) == 0) {
		sigemptyset(&set);
		sigaddset(&set, SIGUSR2);
		pthread_sigmask(SIG_BLOCK, &set, NULL);
		siglongjmp(jb, 1);
	}
	burn(100000000);
	n[1] = ticks;
	{
		uint64_t usr2 = 1ull << (SIGUSR2 - 1);

		pthread_sigmask(SIG_BLOCK, &set, NULL);
		syscall(SYS_rt_sigprocmask, SIG_UNBLOCK, &usr2, NULL, sizeof usr2);
	}
	burn(100000000);
	n[2] = ticks;
	printf("ticks while blocked: after a handler %d, a siglongjmp %d, a system call %d\n", n[0],
	       n[1], n[2]);
	return 0;
}

static void *raw_worker(void *arg)
{
	struct sigevent ev;
	struct itimerspec its = { { 0, 1000000 }, { 0, 1000000 } };
	uint64_t none = 0;
	timer_t tm;

	/* Go's minit: the mask by the system call (8 bytes: the kernel's). */
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &none, NULL, sizeof none);
	memset(&ev, 0, sizeof ev);
	ev.sigev_notify = SIGEV_THREAD_ID;
	ev.sigev_signo = SIGPROF;
	ev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
	if (timer_create(CLOCK_THREAD_CPUTIME_ID, &ev, &tm) != 0)
		return arg;
	timer_settime(tm, 0, &its, NULL);
	burn(300000000);
	timer_delete(tm);
	printf("thread: its own timer's SIGPROFs %s\n", ticks > 40 ? "more than 40" : "too few");
	return arg;
}

/* A handler that blocks every signal while it works, then sets back the
 * mask it found: it must find SIGPROF blocked there, as bare (the
 * kernel blocks a handler's own signal), or its next ticks never come. */
static void masked_tick(int sig)
{
	sigset_t all, old;

	(void)sig;
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &old);
	ticks++;
	sigprocmask(SIG_SETMASK, &old, NULL);
}

int main(int argc, char **argv)
{
	sigset_t set;

	if (argc > 1 && !strcmp(argv[1], "handler")) {
		struct itimerval it = { { 0, 1000 }, { 0, 1000 } };
		int first;
		sigset_t cur;

		signal(SIGPROF, masked_tick);
		setitimer(ITIMER_PROF, &it, NULL);
		burn(100000000);
		first = ticks;
		burn(100000000);
		sigprocmask(SIG_BLOCK, NULL, &cur);
		printf("ticks in the first 0.1 s %s, in the second %s; SIGPROF blocked after %d\n",
		       first > 10 ? "more than 10" : "too few", ticks - first > 10 ? "more than 10" : "too few",
		       sigismember(&cur, SIGPROF));
		return 0;
	}
	if (argc > 1 && !strcmp(argv[1], "itimer")) {
		struct itimerval it = { { 0, 1000 }, { 0, 1000 } };
		int blocked, after;

		signal(SIGPROF, tick);
		sigemptyset(&set);
		sigaddset(&set, SIGPROF);
		sigprocmask(SIG_BLOCK, &set, NULL);
		setitimer(ITIMER_PROF, &it, NULL);
		burn(100000000);
		blocked = ticks;
		sigprocmask(SIG_UNBLOCK, &set, NULL);
		after = ticks;
		burn(100000000);
		printf("ticks while blocked %d, at the unblock %d, later %s\n", blocked, after,
		       ticks > after + 10 ? "more" : "too few");
		return 0;
	}
	pthread_t t;
	if (argc > 1 && !strcmp(argv[1], "shrink"))
		return shrink();
	if (argc > 1 && !strcmp(argv[1], "rawthread")) {
		sigset_t old;

		signal(SIGPROF, tick);
		sigfillset(&set);
		pthread_sigmask(SIG_SETMASK, &set, &old);
		if (pthread_create(&t, NULL, raw_worker, NULL) != 0)
			return 1;
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		pthread_join(t, NULL);
		return 0;
	}
	sigfillset(&set);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	if (pthread_create(&t, NULL, worker, NULL) != 0)
		return 1;
	burn(100000000);
	pthread_join(t, NULL);
	printf("main: SIGPROF blocked %d\n", prof_blocked());
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	printf("main, unblocked: SIGPROF blocked %d\n", prof_blocked());
	return 0;
}
