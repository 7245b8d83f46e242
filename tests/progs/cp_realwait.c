/* cp_realwait: a thread that naps on a CPU it shares with a busy process
 * waits for that CPU each time it wakes.  It pins itself and a spinning
 * child to one CPU and naps 100 times for 3 ms (doze) at SCHED_IDLE, so
 * that each wake waits for the child's turn to end (about 2 ms here on an
 * idle machine; the scheduler decides, and under load it varies from a
 * tenth of that to ten times).  Then it stops the child, goes back to
 * SCHED_OTHER and computes for 0.3 s.  Prints each phase's share of the
 * wall time and the wait for the CPU in doze (its run_delay in
 * /proc/thread-self/schedstat), in ms. */
#define _GNU_SOURCE
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile uint64_t sink;

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + (uint64_t)ts.tv_nsec;
}

static uint64_t run_delay(void)
{
	unsigned long long cpu = 0, delay = 0;
	FILE *f = fopen("/proc/thread-self/schedstat", "r");

	if (f) {
		if (fscanf(f, "%llu %llu", &cpu, &delay) != 2)
			delay = 0;
		fclose(f);
	}
	return delay;
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
		struct timespec t = { 0, 3000000 };
		nanosleep(&t, NULL);
	}
	sink++;
}

int main(void)
{
	volatile int *stop = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	struct sched_param none = { 0 };
	uint64_t t[3], d[2];
	int cpu = sched_getcpu(), back;
	double total;
	cpu_set_t one;
	pid_t kid;

	if (stop == MAP_FAILED || cpu < 0)
		return 1;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	if (sched_setaffinity(0, sizeof one, &one) < 0)
		return 1;
	if ((kid = fork()) == 0) {
		while (!*stop)
			sink++;
		_exit(0);
	}
	if (kid < 0 || sched_setscheduler(0, SCHED_IDLE, &none) < 0)
		return 1;
	usleep(20000); /* the child is spinning */
	t[0] = now_ns();
	d[0] = run_delay();
	doze(100);
	d[1] = run_delay();
	t[1] = now_ns();
	*stop = 1;
	back = sched_setscheduler(0, SCHED_OTHER, &none) == 0;
	waitpid(kid, NULL, 0);
	compute(300000000);
	t[2] = now_ns();
	total = (double)(t[2] - t[0]);
	printf("doze %.4f\ncompute %.4f\ndoze_wait_ms %.1f\nback_to_other %d\n", (t[1] - t[0]) / total,
	       (t[2] - t[1]) / total, (d[1] - d[0]) / 1e6, back);
	return 0;
}
