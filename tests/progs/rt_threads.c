/* rt_threads.c - 4 threads, 100000 malloc(77)/free pairs each, every 1000th
 * block kept: exact totals under contention (bin 77: 400000 allocs, 399600
 * frees).  Also 1000 blocks of 5000 bytes per thread, freed by main, so
 * frees cross threads. */
#include <pthread.h>
#include <stdlib.h>

#define THREADS 4
#define PAIRS 100000
static void *kept[THREADS][PAIRS / 1000];
static void *big[THREADS][1000];

static void *work(void *arg)
{
	long t = (long)arg;
	for (int i = 0; i < PAIRS; i++) {
		char *p = malloc(77);
		p[0] = (char)i;
		if (i % 1000 == 0)
			kept[t][i / 1000] = p;
		else
			free(p);
		if (i % 100 == 0)
			big[t][i / 100] = malloc(5000);
	}
	return NULL;
}

int main(void)
{
	pthread_t th[THREADS];
	for (long t = 0; t < THREADS; t++)
		if (pthread_create(&th[t], NULL, work, (void *)t))
			return 1;
	for (int t = 0; t < THREADS; t++)
		pthread_join(th[t], NULL);
	for (int t = 0; t < THREADS; t++)
		for (int i = 0; i < 1000; i++)
			free(big[t][i]);
	return 0;
}
