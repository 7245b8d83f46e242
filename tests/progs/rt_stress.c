/* rt_stress.c - exact totals under contention and thread churn.
 *
 * Two waves of 8 threads (the second wave reuses the monitor's per-thread
 * blocks of the first), each making N/2 random operations (default N
 * 200000): malloc, realloc (grow or shrink), free, and handing a block to
 * a shared exchange where whichever thread comes next frees it, so many
 * frees happen on a thread other than the allocating one; a few blocks
 * are of 256 KiB or more (the address map keeps their sizes apart).  A
 * block carries its requested size in its first 8 bytes.  One block in 64
 * is kept to the end.  The program counts what the monitor must count and
 * prints "allocs frees bytes bytes_freed" after main has freed the
 * exchange and the slots (kept blocks stay allocated).
 *
 * Usage: rt_stress [N] */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define THREADS 8
#define SLOTS 128
#define XFER 64

static unsigned long n = 200000;
static uint64_t allocs, frees, bytes, freed;
static void *xfer[XFER];
static void *slots[2][THREADS][SLOTS];

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void *get(size_t size)
{
	uint64_t *p = malloc(size);

	if (!p)
		abort();
	*p = size;
	__atomic_fetch_add(&allocs, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&bytes, size, __ATOMIC_RELAXED);
	return p;
}

static void put(void *p)
{
	if (!p)
		return;
	__atomic_fetch_add(&frees, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&freed, *(uint64_t *)p, __ATOMIC_RELAXED);
	free(p);
}

static void *work(void *arg)
{
	long id = (long)arg;
	void **mine = slots[id / THREADS][id % THREADS];
	uint64_t s = 0x9e3779b97f4a7c15ull * (uint64_t)(id + 1), r;
	unsigned long i;

	for (i = 0; i < n / 2; i++) {
		r = rnd(&s);
		size_t size = 8 + (r >> 8) % (r & 1 ? 100 : 3000);
		if ((r >> 4) % 512 == 0) /* now and then 256 KiB or more */
			size = (256 << 10) + (r >> 24) % 100000;
		unsigned k = (unsigned)(r >> 40) % SLOTS;
		switch ((r >> 20) % 8) {
		case 0: case 1: case 2: /* malloc (replacing) */
			put(mine[k]);
			mine[k] = get(size);
			break;
		case 3: case 4: /* realloc: a free of the old block + a new one */
			if (!mine[k]) {
				mine[k] = get(size);
				break;
			}
			{
				uint64_t old = *(uint64_t *)mine[k];
				uint64_t *q = realloc(mine[k], size);
				if (!q)
					abort();
				*q = size;
				mine[k] = q;
				__atomic_fetch_add(&frees, 1, __ATOMIC_RELAXED);
				__atomic_fetch_add(&freed, old, __ATOMIC_RELAXED);
				__atomic_fetch_add(&allocs, 1, __ATOMIC_RELAXED);
				__atomic_fetch_add(&bytes, size, __ATOMIC_RELAXED);
			}
			break;
		case 5: /* free */
			put(mine[k]);
			mine[k] = NULL;
			break;
		default: /* hand over; free what the last thread left */
			put(__atomic_exchange_n(&xfer[(r >> 50) % XFER], get(size),
						__ATOMIC_ACQ_REL));
			break;
		}
		if (i % 64 == 0)
			mine[k] = NULL; /* kept: never freed */
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th[THREADS];
	int w, t, k;

	if (argc > 1)
		n = strtoul(argv[1], NULL, 10);
	for (w = 0; w < 2; w++) {
		for (t = 0; t < THREADS; t++)
			if (pthread_create(&th[t], NULL, work, (void *)(long)(w * THREADS + t)))
				return 1;
		for (t = 0; t < THREADS; t++)
			pthread_join(th[t], NULL);
	}
	for (k = 0; k < XFER; k++)
		put(xfer[k]);
	for (w = 0; w < 2; w++)
		for (t = 0; t < THREADS; t++)
			for (k = 0; k < SLOTS; k++)
				put(slots[w][t][k]);
	printf("%llu %llu %llu %llu\n", (unsigned long long)allocs, (unsigned long long)frees,
	       (unsigned long long)bytes, (unsigned long long)freed);
	return 0;
}
