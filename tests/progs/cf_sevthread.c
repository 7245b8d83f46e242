/* cf_sevthread N: N expiries of a one-shot SIGEV_THREAD timer, one after
 * another.  glibc runs each notification on a thread it makes itself,
 * with its internal pthread_create, not the one a preloaded profiler
 * interposes.  Prints how many times handle() ran, then the growth of
 * the process's mappings (lines of /proc/self/maps) and address space
 * (VmSize, kB) from the first expiry to the last. */
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static sem_t done;
static volatile unsigned long sink;
static int runs;

__attribute__((noinline)) static void handle(int k)
{
	for (int j = 0; j < 1000; j++)
		sink += (unsigned long)(j ^ k);
	runs++;
}

static void expired(union sigval v)
{
	handle(v.sival_int);
	sem_post(&done);
}

static void measure(long *maps, long *vsz)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");

	*maps = *vsz = 0;
	if (f) {
		while (fgets(line, sizeof line, f))
			++*maps;
		fclose(f);
	}
	if ((f = fopen("/proc/self/status", "r"))) {
		while (fgets(line, sizeof line, f))
			if (!strncmp(line, "VmSize:", 7))
				*vsz = atol(line + 7);
		fclose(f);
	}
}

static int fire(timer_t t)
{
	struct itimerspec its = { { 0, 0 }, { 0, 10000 } };

	if (timer_settime(t, 0, &its, NULL) != 0)
		return -1;
	while (sem_wait(&done) != 0)
		;
	return 0;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000, m0, v0, m1, v1;
	struct sigevent se;
	timer_t t;

	sem_init(&done, 0, 0);
	memset(&se, 0, sizeof se);
	se.sigev_notify = SIGEV_THREAD;
	se.sigev_notify_function = expired;
	se.sigev_value.sival_int = 7;
	if (timer_create(CLOCK_MONOTONIC, &se, &t) != 0 || fire(t) != 0)
		return 1;
	measure(&m0, &v0);
	for (long i = 1; i < n; i++)
		if (fire(t) != 0)
			return 1;
	measure(&m1, &v1);
	printf("handle %d\nmaps %ld\nvmsize_kb %ld\n", runs, m1 - m0, v1 - v0);
	return 0;
}
