/* peakrand.c - the heap's peak under a random walk, checked against the
 * program's own count: peakrand SEED EVENTS [THREADS].
 *
 * Allocations come from 40 call sites, each its own stack: site() calls
 * itself k times, then allocates (main > run > site x (k + 1)).  Each
 * event allocates 1 to 3000 bytes at a random site, or frees a random
 * live object; the odds of a free rise and fall in waves, so the heap
 * climbs, falls and climbs past its old peak many times.  The program
 * counts live bytes and objects by site, and at each new peak (the first
 * moment the heap is higher than ever) copies them.  At the end it frees
 * everything and prints, without stdio (its buffer would be one more
 * allocation) and after the frees:
 *   peak P
 *   site K BYTES OBJECTS    (for each site that held something at the peak)
 * With THREADS (2 or more), that many threads take turns under one lock,
 * so the events are in one order; the peak is then exact only with
 * MPROF_PEAK_SLACK=0. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NSITES 40
#define MAXLIVE 20000

static void *obj[MAXLIVE];
static size_t obj_size[MAXLIVE];
static int obj_site[MAXLIVE];
static int nlive;
static int64_t live_bytes[NSITES], live_objs[NSITES], total, peak;
static int64_t at_peak_bytes[NSITES], at_peak_objs[NSITES];
static uint64_t rng;
static long events_left;
static pthread_mutex_t lk = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t started; /* every thread made before the first event */

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

__attribute__((noinline)) static void *site(int k, size_t n)
{
	void *volatile p;

	if (k > 0)
		p = site(k - 1, n);
	else
		p = malloc(n);
	return p; /* not a tail call: each depth is a frame */
}

static void event(long i)
{
	/* waves of 20000 events: the odds of a free go 0.30 .. 0.65 */
	long ph = i % 20000;
	uint64_t free_odds = 300 + (uint64_t)(ph < 10000 ? ph : 20000 - ph) * 350 / 10000;

	if (nlive && (nlive == MAXLIVE || next() % 1000 < free_odds)) {
		int j = (int)(next() % (uint64_t)nlive);

		free(obj[j]);
		total -= (int64_t)obj_size[j];
		live_bytes[obj_site[j]] -= (int64_t)obj_size[j];
		live_objs[obj_site[j]]--;
		nlive--;
		obj[j] = obj[nlive];
		obj_size[j] = obj_size[nlive];
		obj_site[j] = obj_site[nlive];
	} else {
		int k = (int)(next() % NSITES);
		size_t n = 1 + next() % 3000;
		void *p = site(k, n);

		if (!p)
			abort();
		memset(p, 1, n);
		obj[nlive] = p;
		obj_size[nlive] = n;
		obj_site[nlive] = k;
		nlive++;
		total += (int64_t)n;
		live_bytes[k] += (int64_t)n;
		live_objs[k]++;
		if (total > peak) {
			peak = total;
			memcpy(at_peak_bytes, live_bytes, sizeof live_bytes);
			memcpy(at_peak_objs, live_objs, sizeof live_objs);
		}
	}
}

static void *worker(void *arg)
{
	long i;

	if (arg)
		pthread_barrier_wait(&started);
	for (;;) {
		pthread_mutex_lock(&lk);
		if (events_left <= 0) {
			pthread_mutex_unlock(&lk);
			return NULL;
		}
		i = --events_left;
		event(i);
		pthread_mutex_unlock(&lk);
	}
}

__attribute__((noinline)) static void run(int nthreads)
{
	pthread_t t[16];
	int i;

	if (nthreads < 2) {
		worker(NULL);
		return;
	}
	if (nthreads > 16)
		nthreads = 16;
	pthread_barrier_init(&started, NULL, (unsigned)nthreads);
	for (i = 0; i < nthreads; i++)
		if (pthread_create(&t[i], NULL, worker, &started))
			abort();
	for (i = 0; i < nthreads; i++)
		pthread_join(t[i], NULL);
}

static void put(const char *s)
{
	size_t n = strlen(s);

	if (write(1, s, n) != (ssize_t)n)
		abort();
}

static void put_num(int64_t v)
{
	char b[32], *q = b + sizeof b;

	*--q = 0;
	do {
		*--q = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	put(q);
}

int main(int argc, char **argv)
{
	int k;

	if (argc < 3)
		return 2;
	rng = strtoull(argv[1], NULL, 10) * 0x9e3779b97f4a7c15ull | 1;
	events_left = strtol(argv[2], NULL, 10);
	run(argc > 3 ? atoi(argv[3]) : 1);
	while (nlive)
		free(obj[--nlive]);
	put("peak ");
	put_num(peak);
	put("\n");
	for (k = 0; k < NSITES; k++) {
		if (!at_peak_bytes[k] && !at_peak_objs[k])
			continue;
		put("site ");
		put_num(k);
		put(" ");
		put_num(at_peak_bytes[k]);
		put(" ");
		put_num(at_peak_objs[k]);
		put("\n");
	}
	return 0;
}
