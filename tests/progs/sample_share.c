/*
 * sample_share.c - allocations whose shares are known, for the sampled
 * monitor's accuracy (tests/e2e/97-sample.t): big_share allocates three
 * quarters of the churned bytes, small_share one quarter (objects of
 * 64 .. 8191 bytes, each freed at once: 2 GB in all), and keeper keeps
 * 400 objects of 256 KiB (100 MiB, never freed).  Prints its own counts:
 * "big BYTES small BYTES kept BYTES allocs N".
 *
 *   sample_share [threads N] [kill]
 *     threads N: the same work split over N threads
 *     kill: SIGKILL itself at the end (the keep's salvage)
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TOTAL (2048ull << 20)

static unsigned long long big_bytes, small_bytes, kept_bytes, nallocs;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static void *kept[400];

/* The churn, written out in each function (a function inlined would
 * still be the allocating frame, from the DWARF). */
#define CHURN(bytes, seed, n)                                                  \
	unsigned long long done = 0;                                           \
	unsigned x = (seed);                                                   \
	while (done < (bytes)) {                                               \
		size_t size = 64 + (x = x * 1103515245u + 12345u) % 8128;      \
		void *p = malloc(size);                                        \
		*(volatile char *)p = 1;                                       \
		free(p);                                                       \
		done += size;                                                  \
		++*(n);                                                        \
	}                                                                      \
	return done

__attribute__((noinline)) static unsigned long long big_share(unsigned long long bytes, unsigned seed,
							      unsigned long long *n)
{
	CHURN(bytes, seed, n);
}

__attribute__((noinline)) static unsigned long long small_share(unsigned long long bytes,
								unsigned seed, unsigned long long *n)
{
	CHURN(bytes, seed, n);
}

__attribute__((noinline)) static void keeper(int from, int to)
{
	for (int i = from; i < to; i++)
		memset(kept[i] = malloc(256 << 10), 1, 64);
}

struct part {
	int i, n;
};

static void *work(void *arg)
{
	const struct part *w = arg;
	unsigned long long n = 0, b, s;

	b = big_share(TOTAL / 4 * 3 / (unsigned)w->n, 17u + (unsigned)w->i, &n);
	s = small_share(TOTAL / 4 / (unsigned)w->n, 91u + (unsigned)w->i, &n);
	keeper(400 * w->i / w->n, 400 * (w->i + 1) / w->n);
	pthread_mutex_lock(&mu);
	big_bytes += b;
	small_bytes += s;
	nallocs += n + (unsigned long long)(400 * (w->i + 1) / w->n - 400 * w->i / w->n);
	pthread_mutex_unlock(&mu);
	return NULL;
}

int main(int argc, char **argv)
{
	int nt = 1, kill_me = 0;
	pthread_t t[16];
	struct part w[16];

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "threads") && i + 1 < argc)
			nt = atoi(argv[++i]);
		else if (!strcmp(argv[i], "kill"))
			kill_me = 1;
	}
	if (nt < 1 || nt > 16)
		return 2;
	for (int i = 0; i < nt; i++) {
		w[i] = (struct part){ i, nt };
		if (nt == 1)
			work(&w[i]);
		else
			pthread_create(&t[i], NULL, work, &w[i]);
	}
	for (int i = 0; nt > 1 && i < nt; i++)
		pthread_join(t[i], NULL);
	kept_bytes = 400ull << 18;
	printf("big %llu small %llu kept %llu allocs %llu\n", big_bytes, small_bytes, kept_bytes,
	       nallocs);
	fflush(stdout);
	if (kill_me)
		kill(getpid(), SIGKILL);
	return 0;
}
