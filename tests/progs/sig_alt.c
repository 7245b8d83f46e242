/*
 * sig_alt.c - alternate signal stacks of the program's own, under a
 * profiler that keeps one of its own in each thread: the program must see
 * and control its own as in a bare run.  In main, then in a thread:
 *
 *   1. sigaltstack(NULL, &old) before it installs one: disabled;
 *   2. it installs its own (64 KiB, pattern-filled) and asks: exactly it;
 *   3. it works (CPU time, page faults, a stack 200 frames deep) while a
 *      profiler's handler, if any, runs on that stack: the deepest byte
 *      that changed says how much of it a handler used, the kernel's
 *      signal frame included (stderr: "used N", 0 bare; and "frame F",
 *      what a SIGUSR1 handler that does next to nothing uses: the frame);
 *   4. raise(SIGUSR1), handled SA_ONSTACK: the handler runs on the
 *      program's stack, where sigaltstack reports SS_ONSTACK;
 *   5. in main, SIGPROF from its own ITIMER_PROF, handled SA_ONSTACK: on
 *      its stack too;
 *   6. it disables its stack and asks: disabled; SIGUSR1 then runs on
 *      the thread's own stack.
 *
 * stdout: what it saw, the same in every run.
 */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <time.h>

#define ALT (64 << 10)

static __thread char *alt; /* this thread's own stack */
static __thread volatile int usr1_on, usr1_flags, prof_on, prof_n;
static volatile uint64_t sink;

static int on_alt(const void *p)
{
	return alt && (const char *)p >= alt && (const char *)p < alt + ALT;
}

static void on_usr1(int sig)
{
	stack_t cur;
	char here;

	(void)sig;
	usr1_on = on_alt(&here);
	usr1_flags = sigaltstack(NULL, &cur) == 0 ? cur.ss_flags : -1;
}

static void on_prof(int sig)
{
	char here;

	(void)sig;
	prof_n++;
	prof_on += on_alt(&here);
}

static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + (uint64_t)ts.tv_nsec;
}

/* CPU and first touches of pages, under `depth` frames of recursion. */
__attribute__((noinline)) static uint64_t work(int depth, uint64_t ns)
{
	uint64_t x = (uint64_t)depth, end;

	if (depth > 0)
		return work(depth - 1, ns) + 1;
	end = cpu_ns() + ns;
	while (cpu_ns() < end) {
		char *p = mmap(NULL, 64 << 12, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			       -1, 0);
		for (int i = 0; i < 64 && p != MAP_FAILED; i++)
			p[i << 12] = (char)i;
		if (p != MAP_FAILED)
			munmap(p, 64 << 12);
		for (int i = 0; i < 20000; i++)
			x = x * 6364136223846793005ull + 1;
	}
	return x;
}

/* How deep into its stack a handler went: the deepest byte that changed. */
static size_t depth(void)
{
	for (size_t i = 0; i < ALT; i++)
		if (alt[i] != 0x5a)
			return ALT - i;
	return 0;
}

static const char *flags(int f)
{
	return f < 0		? "error"
	       : f & SS_DISABLE ? "disabled"
	       : f & SS_ONSTACK ? "onstack"
				: "enabled";
}

static void check(const char *who, int itimer)
{
	stack_t ss, cur;
	size_t frame;

	sigaltstack(NULL, &cur);
	printf("%s: before: %s sp=%s size=%zu\n", who, flags(cur.ss_flags),
	       cur.ss_sp ? "set" : "null", cur.ss_size);

	alt = mmap(NULL, ALT, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	memset(alt, 0x5a, ALT);
	ss.ss_sp = alt;
	ss.ss_size = ALT;
	ss.ss_flags = 0;
	printf("%s: install: %d\n", who, sigaltstack(&ss, NULL));
	sigaltstack(NULL, &cur);
	printf("%s: installed: %s, %s\n", who, flags(cur.ss_flags),
	       cur.ss_sp == alt && cur.ss_size == ALT ? "its own" : "another");

	raise(SIGUSR1);
	frame = depth();
	memset(alt, 0x5a, ALT);
	sink += work(200, 300000000);
	fprintf(stderr, "sig_alt: %s: used %zu frame %zu\n", who, depth(), frame);

	raise(SIGUSR1);
	printf("%s: SIGUSR1 on its stack: %s, there %s\n", who, usr1_on ? "yes" : "no",
	       flags(usr1_flags));
	if (itimer) {
		struct itimerval it = {{0, 5000}, {0, 5000}}, stop = {{0, 0}, {0, 0}};

		/* Until 10 of them, 2 s of CPU at most: the timer expires
		 * at the kernel's ticks, and on a loaded VM 100 ms of CPU
		 * time saw 0 or 1 (idle 7; it asks 5). */
		setitimer(ITIMER_PROF, &it, NULL);
		for (int i = 0; i < 100 && prof_n < 10; i++)
			sink += work(0, 20000000);
		setitimer(ITIMER_PROF, &stop, NULL);
		printf("%s: its SIGPROF on its stack: %s\n", who,
		       prof_n >= 5 && prof_on == prof_n ? "always" : "not always");
	}

	ss.ss_flags = SS_DISABLE;
	printf("%s: disable: %d\n", who, sigaltstack(&ss, NULL));
	sigaltstack(NULL, &cur);
	printf("%s: disabled: %s\n", who, flags(cur.ss_flags));
	raise(SIGUSR1);
	printf("%s: SIGUSR1 on its stack: %s\n", who, usr1_on ? "yes" : "no");
}

static void *thread(void *arg)
{
	(void)arg;
	check("thread", 0);
	return NULL;
}

int main(void)
{
	struct sigaction sa;
	pthread_t th;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_usr1;
	sa.sa_flags = SA_ONSTACK;
	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_handler = on_prof;
	sa.sa_flags = SA_ONSTACK | SA_RESTART;
	sigaction(SIGPROF, &sa, NULL);
	check("main", 1);
	fflush(stdout);
	pthread_create(&th, NULL, thread, NULL);
	pthread_join(th, NULL);
	return 0;
}
