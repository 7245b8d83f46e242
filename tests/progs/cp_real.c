/* cp_real: wall-clock phases that know their own durations: compute (on the
 * CPU), doze (nanosleep in 10 ms naps, counting any that fail with EINTR),
 * and wait_child (blocked in read on a pipe until a child writes).  Prints
 * each phase's share of the wall time, the EINTR count, how many times
 * doze was preempted (involuntary context switches beside its 30 naps'),
 * and compute's share spent waiting for a CPU. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static volatile uint64_t sink;
static int eintr;

static uint64_t clock_ns(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + (uint64_t)ts.tv_nsec;
}

static uint64_t now_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

__attribute__((noinline)) static void compute(uint64_t ns)
{
	uint64_t end = now_ns() + ns, x = 1;
	do
		for (int i = 0; i < 10000; i++)
			x = x * 6364136223846793005ull + 1;
	while (now_ns() < end);
	sink += x;
}

__attribute__((noinline)) static void doze(int naps)
{
	for (int i = 0; i < naps; i++) {
		struct timespec t = { 0, 10000000 };
		if (nanosleep(&t, NULL) < 0 && errno == EINTR)
			eintr++;
	}
	sink++;
}

__attribute__((noinline)) static void wait_child(void)
{
	int p[2];
	char c;
	if (pipe(p) < 0)
		return;
	if (fork() == 0) {
		usleep(300000);
		(void)!write(p[1], "x", 1);
		_exit(0);
	}
	if (read(p[0], &c, 1) < 0 && errno == EINTR)
		eintr++;
	sink++;
}

int main(void)
{
	uint64_t t[4], c[2];
	double total;
	struct rusage ru[2];

	t[0] = now_ns();
	c[0] = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	compute(300000000);
	c[1] = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	t[1] = now_ns();
	getrusage(RUSAGE_SELF, &ru[0]);
	doze(30);
	getrusage(RUSAGE_SELF, &ru[1]);
	t[2] = now_ns();
	wait_child();
	t[3] = now_ns();
	total = (double)(t[3] - t[0]);
	printf("compute %.4f\ndoze %.4f\nwait_child %.4f\neintr %d\n", (t[1] - t[0]) / total,
	       (t[2] - t[1]) / total, (t[3] - t[2]) / total, eintr);
	/* doze's involuntary context switches (a loaded machine preempts it). */
	printf("doze_preempted %ld\n", ru[1].ru_nivcsw - ru[0].ru_nivcsw);
	/* compute's time waiting for a CPU (its wall time less its CPU
	 * time), as a share of the whole. */
	printf("compute_waited %.4f\n", (double)((t[1] - t[0]) - (c[1] - c[0])) / total);
	return 0;
}
