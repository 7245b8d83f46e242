/*
 * cf_sig.c - signal handlers that run instrumented code while the main
 * path runs instrumented code.  A real-time interval timer (ITIMER_REAL,
 * every 100 us: high resolution) sends SIGALRM, whose handler calls
 * async_work: it lands anywhere, in the hooks too.  Every 1000th call of
 * main_work, main_work raises SIGUSR1, whose handler calls sync_work: it
 * runs at a known point, inside raise (libc), never inside a hook.
 *
 * Prints one "name value" per line (tests/e2e/72-cf-robust.t): main_work
 * (500000), sync_work (500), checksum (both deterministic), then
 * async_work (how many timer signals were handled: varies from run to run).
 *
 *   cf_sig [N]   N calls of main_work (default 500000: about 0.2 s)
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

static long n_main_work;
static volatile sig_atomic_t n_sync_work, n_async_work;
static volatile unsigned long sink, hsink;

__attribute__((noinline)) static void async_work(void)
{
	n_async_work++;
	for (int i = 0; i < 100; i++)
		hsink = hsink * 31 + (unsigned long)i;
}

__attribute__((noinline)) static void sync_work(void)
{
	n_sync_work++;
	for (int i = 0; i < 100; i++)
		hsink = hsink * 17 + (unsigned long)i;
}

static void on_alrm(int sig)
{
	(void)sig;
	async_work();
}

static void on_usr1(int sig)
{
	(void)sig;
	sync_work();
}

__attribute__((noinline)) static void main_work(long i)
{
	n_main_work++;
	for (int k = 0; k < 200; k++)
		sink = sink * 6364136223846793005ull + (unsigned long)(i + k);
	if (i % 1000 == 999)
		raise(SIGUSR1);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 500000;
	struct sigaction sa;
	struct itimerval it = {{0, 100}, {0, 100}}, off = {{0, 0}, {0, 0}};

	memset(&sa, 0, sizeof(sa));
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_handler = on_alrm;
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	for (long i = 0; i < n; i++)
		main_work(i);
	setitimer(ITIMER_REAL, &off, NULL);
	printf("main_work %ld\nsync_work %d\nchecksum %lu\nasync_work %d\n", n_main_work,
	       (int)n_sync_work, sink, (int)n_async_work);
	return 0;
}
