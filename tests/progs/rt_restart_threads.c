/* rt_restart_threads.c - mprof_restart while another thread holds counts
 * of the old profile: a worker allocates 10 x 50 bytes, main restarts
 * into FILE, then the worker allocates 3 x 60 bytes, frees its 10 old
 * blocks (unknown frees now) and one of the new ones, and exits; a second
 * worker (which may reuse the first one's per-thread block) allocates
 * 2 x 70 bytes.  FILE must hold only what came after the restart.
 *
 * Usage: rt_restart_threads FILE */
#include <pthread.h>
#include <stdlib.h>

#include "mprof.h"

#pragma weak mprof_restart

static pthread_barrier_t bar;
static void *old[10], *new[3];
static void *volatile sink;

static void *worker(void *arg)
{
	int i;

	for (i = 0; i < 10; i++)
		old[i] = malloc(50);
	pthread_barrier_wait(&bar); /* main restarts */
	pthread_barrier_wait(&bar);
	for (i = 0; i < 3; i++)
		new[i] = malloc(60);
	for (i = 0; i < 10; i++)
		free(old[i]);
	free(new[0]);
	return arg;
}

static void *second(void *arg)
{
	sink = malloc(70);
	sink = malloc(70);
	return arg;
}

int main(int argc, char **argv)
{
	pthread_t t;

	if (!mprof_restart || argc < 2)
		return 10;
	pthread_barrier_init(&bar, NULL, 2);
	if (pthread_create(&t, NULL, worker, NULL))
		return 1;
	pthread_barrier_wait(&bar);
	mprof_restart(argv[1]);
	pthread_barrier_wait(&bar);
	pthread_join(t, NULL);
	if (pthread_create(&t, NULL, second, NULL))
		return 1;
	pthread_join(t, NULL);
	return 0;
}
