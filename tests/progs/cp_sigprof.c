/* cp_sigprof: a program with a SIGPROF profiler of its own (ITIMER_PROF
 * every 10 ms, a handler that counts): prints its ticks for 0.3 s of CPU,
 * and whether sigaction still reports its handler. */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

static volatile int ticks;
static volatile uint64_t sink;

static void on_prof(int sig)
{
	(void)sig;
	ticks++;
}

static uint64_t cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + (uint64_t)ts.tv_nsec;
}

int main(void)
{
	struct sigaction sa, cur;
	struct itimerval it = { { 0, 10000 }, { 0, 10000 } };
	uint64_t end, x = 1;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_prof;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGPROF, &sa, NULL);
	setitimer(ITIMER_PROF, &it, NULL);
	end = cpu_ns() + 300000000;
	while (cpu_ns() < end)
		for (int i = 0; i < 10000; i++)
			x = x * 6364136223846793005ull + 1;
	sink = x;
	sigaction(SIGPROF, NULL, &cur);
	printf("ticks %s\nhandler %s\n", ticks >= 15 && ticks <= 45 ? "ok" : "wrong",
	       cur.sa_handler == on_prof ? "kept" : "lost");
	return 0;
}
