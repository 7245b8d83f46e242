/*
 * rt_restart_race.c - mprof_restart racing allocations on other threads.
 * Two threads allocate and free at once on ever-changing stacks (a random
 * recursion depth, so many are new and go through the stack table's lock,
 * which a restart holds) while main restarts the profile every 2 ms into
 * DIR/rN.data.  An allocation counted in the old profile whose object
 * carried an index of the new one would have its free counted in the new
 * profile without its allocation: a stack with more frees than
 * allocations.  The last profile (written at exit, the threads joined) is
 * exact, so the test checks it; main waits until both threads have
 * allocated in it (on a loaded machine 2 ms may pass without).
 *
 * Usage: rt_restart_race DIR [ROUNDS]
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "mprof.h"

#pragma weak mprof_restart

static volatile int stop;
static void *volatile sink;
static unsigned long done[2]; /* each worker's rounds */

__attribute__((noinline)) static void down(int d)
{
	if (d > 0) {
		down(d - 1);
		__asm__ volatile("" ::: "memory");
		return;
	}
	void *p = malloc(8);

	sink = p; /* keeps the pair from being optimised away */
	free(p);
}

static void *worker(void *arg)
{
	unsigned seed = (unsigned)(long)arg;

	while (!stop) {
		down(rand_r(&seed) % 300);
		__atomic_add_fetch(&done[(long)arg - 1], 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int rounds = argc > 2 ? atoi(argv[2]) : 100;
	pthread_t t[2];
	char name[4096];
	unsigned long seen[2];

	if (argc < 2 || !mprof_restart)
		return 2;
	for (long i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, worker, (void *)(i + 1));
	for (int i = 0; i < rounds; i++) {
		snprintf(name, sizeof name, "%s/r%d.data", argv[1], i);
		mprof_restart(name);
		usleep(2000);
	}
	for (int i = 0; i < 2; i++)
		seen[i] = __atomic_load_n(&done[i], __ATOMIC_RELAXED);
	for (int i = 0; i < 2; i++)
		while (__atomic_load_n(&done[i], __ATOMIC_RELAXED) < seen[i] + 50)
			usleep(1000);
	stop = 1;
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	return 0;
}
