/*
 * rt_orphan.c - allocations after a thread's monitor block went back to
 * the pool: a pthread key destructor of the program's runs after the
 * monitor's (keys are destroyed in the order they were made, the
 * monitor's first), so what it allocates goes to the shared orphan
 * block, which the first of them makes, racing the others (its lock comes
 * after the pool's: issue 12 review).  16 threads, started together; each
 * destructor allocates one block of 91 bytes (kept) and one of 92
 * (freed), made in orphan_alloc().
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_key_t key;
static pthread_barrier_t start;
static void *volatile keep[16];
static void *volatile sink;
static int next;

static __attribute__((noinline)) void orphan_alloc(void)
{
	void *p = malloc(92);

	sink = p;
	keep[__atomic_fetch_add(&next, 1, __ATOMIC_RELAXED) % 16] = malloc(91);
	free(p);
}

static void destructor(void *v)
{
	(void)v;
	orphan_alloc();
}

static void *thread(void *arg)
{
	(void)arg;
	pthread_setspecific(key, (void *)1);
	pthread_barrier_wait(&start);
	return NULL;
}

int main(void)
{
	pthread_t t[16];

	free(malloc(1)); /* the monitor's key first */
	if (pthread_key_create(&key, destructor) != 0)
		return 1;
	pthread_barrier_init(&start, NULL, 16);
	for (int i = 0; i < 16; i++)
		if (pthread_create(&t[i], NULL, thread, NULL) != 0)
			return 1;
	for (int i = 0; i < 16; i++)
		pthread_join(t[i], NULL);
	printf("%d\n", next);
	return 0;
}
