/* cp_realmix: 100 rounds of nap (10 ms nanosleep) then work (10 ms of the
 * thread's CPU time, read by clock_gettime(CLOCK_THREAD_CPUTIME_ID), a
 * system call each: much of it in the kernel).  Prints each phase's share
 * of the wall time, "nap SHARE" and "work SHARE" (tests/e2e/55-cp-real.t:
 * a thread's running time must not go to the call it blocks in next).
 * The nap's share is its time blocked: the wait for a CPU once it woke
 * (its schedstat run_delay, long on a loaded machine) is runnable time,
 * which cpprof gives to where the thread runs next, and counts for work. */
#include <stdint.h>
#include <stdio.h>
#include <time.h>

/* This thread's time waiting on a run queue, ns (schedstat), or 0. */
static uint64_t run_delay(void)
{
	unsigned long long run = 0, delay = 0;
	FILE *f = fopen("/proc/thread-self/schedstat", "r");

	if (f) {
		if (fscanf(f, "%llu %llu", &run, &delay) != 2)
			delay = 0;
		fclose(f);
	}
	return delay;
}

static uint64_t ns(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + (uint64_t)ts.tv_nsec;
}

__attribute__((noinline)) static void nap(void)
{
	struct timespec t = { 0, 10000000 };
	nanosleep(&t, NULL);
}

__attribute__((noinline)) static void work(void)
{
	uint64_t end = ns(CLOCK_THREAD_CPUTIME_ID) + 10000000;
	while (ns(CLOCK_THREAD_CPUTIME_ID) < end)
		;
}

int main(void)
{
	uint64_t in_nap = 0, in_work = 0, t0, t1, t2, d0, d1;

	for (int i = 0; i < 100; i++) {
		d0 = run_delay();
		t0 = ns(CLOCK_MONOTONIC);
		nap();
		t1 = ns(CLOCK_MONOTONIC);
		d1 = run_delay();
		work();
		t2 = ns(CLOCK_MONOTONIC);
		in_nap += t1 - t0 - (d1 - d0 < t1 - t0 ? d1 - d0 : 0);
		in_work += t2 - t1 + (d1 - d0 < t1 - t0 ? d1 - d0 : 0);
	}
	printf("nap %.4f\nwork %.4f\n", (double)in_nap / (double)(in_nap + in_work),
	       (double)in_work / (double)(in_nap + in_work));
	return 0;
}
