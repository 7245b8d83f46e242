/*
 * threads.c - bench workload: 4 threads allocating at once.
 *
 * Each thread makes N malloc/free pairs (default 500,000) of 8..1032 bytes
 * a few calls deep, and keeps one block in 100 until it ends (a pool of
 * live objects, so frees interleave with the other threads' allocations in
 * the monitor's address map), then frees them.
 *
 * Usage: threads [pairs-per-thread [threads]]
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define MAXT 64
static unsigned long n = 500000;
static unsigned long sums[MAXT];

__attribute__((noinline)) static char *make(unsigned long i, unsigned long t)
{
	size_t size = 8 + (i * 131 + t * 17) % 1025;
	char *p = malloc(size);

	if (!p)
		abort();
	p[0] = (char)i;
	__asm__ volatile("" ::: "memory");
	return p;
}

__attribute__((noinline)) static unsigned long work(unsigned long t)
{
	unsigned long nkeep = n / 100 + 1, k = 0, s = 0;
	char **keep = calloc(nkeep, sizeof *keep);

	if (!keep)
		abort();
	for (unsigned long i = 0; i < n; i++) {
		char *p = make(i, t);
		s += (unsigned char)p[0];
		if (i % 100 == 0 && k < nkeep)
			keep[k++] = p;
		else
			free(p);
	}
	while (k)
		free(keep[--k]);
	free(keep);
	__asm__ volatile("" ::: "memory");
	return s;
}

static void *thread_main(void *arg)
{
	unsigned long t = (unsigned long)arg;

	sums[t] = work(t);
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned long nt = 4, s = 0;
	pthread_t tid[MAXT];

	if (argc > 1)
		n = strtoul(argv[1], NULL, 10);
	if (argc > 2)
		nt = strtoul(argv[2], NULL, 10);
	if (nt < 1 || nt > MAXT)
		nt = 4;
	for (unsigned long t = 0; t < nt; t++)
		if (pthread_create(&tid[t], NULL, thread_main, (void *)t) != 0)
			abort();
	for (unsigned long t = 0; t < nt; t++) {
		pthread_join(tid[t], NULL);
		s += sums[t];
	}
	printf("%lu\n", s);
	return 0;
}
