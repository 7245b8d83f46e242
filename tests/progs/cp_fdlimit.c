/*
 * cp_fdlimit.c - a program that uses most of its descriptor limit, for
 * 56-cp-fds.t: cpprof's descriptors must not make its opens fail.
 *
 * cp_fdlimit threads N [ITERS]: N threads, each opens /dev/null and holds
 * it until all have tried (a barrier), burning CPU first: ITERS turns of
 * a loop (1,000,000 by default, 3 ms on one machine, 0.4 on another), or
 * with ITERS "Kms", K ms of the thread's CPU time.  With CP_FDLIMIT_PERF set, it
 * also prints how many perf event descriptors the process held then.
 * cp_fdlimit files N: a thread naps 0.3 s in nap() while the main thread
 * opens N files and holds them until it wakes.
 * Prints how many opens failed with EMFILE, and with another error.
 * cp_fdlimit short N: N threads, each burning 3 ms of CPU and ending (no
 * file), one after another; prints the CPU time they spent in their start
 * routine, "cpu MS", for 52-cp-threads.t.
 * cp_fdlimit count: prints how many descriptors it has open below its
 * limit as it starts (those it inherits), so that the test knows how many
 * more make seven eighths of it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static pthread_barrier_t bar, bar2; /* all up; all counted */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int emfile, other;
static long burned; /* short: the threads' CPU time in holder, ns */
static volatile unsigned long sink;
static unsigned long iters = 1000000;
static long burn_ms; /* threads N Kms: K ms of CPU each, by its clock */

/* The perf event descriptors the process holds now. */
static int perf_events(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	char path[300], link[256];
	int n = 0;

	while (d && (e = readdir(d))) {
		ssize_t k;

		snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
		k = readlink(path, link, sizeof link - 1);
		if (k > 0) {
			link[k] = 0;
			n += strstr(link, "perf_event") != NULL;
		}
	}
	if (d)
		closedir(d);
	return n;
}

static int open_one(void)
{
	int fd = open("/dev/null", O_RDONLY);

	if (fd < 0) {
		pthread_mutex_lock(&mu);
		if (errno == EMFILE)
			emfile++;
		else
			other++;
		pthread_mutex_unlock(&mu);
	}
	return fd;
}

/* This thread's CPU time, ns. */
static long thread_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

static void *holder(void *a)
{
	int fd = a ? -1 : open_one();

	/* short: 3 ms of CPU by the thread's clock, from here (a million
	 * additions took 3 ms on one machine, 0.4 on another, where the
	 * sampler's set-up of each thread before its start routine, which
	 * no sample counts, came to a third of the thread's time). */
	if (a) {
		long t0 = thread_ns(), t;

		while ((t = thread_ns()) - t0 < 3000000)
			for (int i = 0; i < 10000; i++)
				sink += (unsigned long)i;
		pthread_mutex_lock(&mu);
		burned += t - t0;
		pthread_mutex_unlock(&mu);
	} else if (burn_ms) {
		long t0 = thread_ns();

		while (thread_ns() - t0 < burn_ms * 1000000)
			for (int i = 0; i < 10000; i++)
				sink += (unsigned long)i;
	} else {
		for (unsigned long i = 0; i < iters; i++)
			sink += i;
	}
	pthread_barrier_wait(&bar);
	pthread_barrier_wait(&bar2);
	if (fd >= 0)
		close(fd);
	return NULL;
}

__attribute__((noinline)) static void nap(void)
{
	struct timespec ts = { 0, 300000000 };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static void *napper(void *a)
{
	(void)a;
	pthread_barrier_wait(&bar);
	nap();
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 2 ? atoi(argv[2]) : 0;
	pthread_attr_t at;

	if (argc > 1 && !strcmp(argv[1], "count")) {
		struct rlimit r;
		int k = 0;

		getrlimit(RLIMIT_NOFILE, &r);
		for (int fd = 0; fd < (int)r.rlim_cur; fd++)
			k += fcntl(fd, F_GETFD) >= 0;
		printf("%d\n", k);
		return 0;
	}
	pthread_attr_init(&at);
	pthread_attr_setstacksize(&at, 256 << 10);
	if (argc > 2 && !strcmp(argv[1], "threads")) {
		pthread_t *t = calloc((size_t)n, sizeof *t);

		if (argc > 3) {
			char *end;

			iters = strtoul(argv[3], &end, 10);
			if (!strcmp(end, "ms"))
				burn_ms = (long)iters;
		}
		pthread_barrier_init(&bar, NULL, (unsigned)n + 1);
		pthread_barrier_init(&bar2, NULL, (unsigned)n + 1);
		for (int i = 0; i < n; i++)
			if (pthread_create(&t[i], &at, holder, NULL)) {
				perror("pthread_create");
				return 1;
			}
		pthread_barrier_wait(&bar);
		/* Every thread is up and holds its file (and its events). */
		if (getenv("CP_FDLIMIT_PERF"))
			printf("perf events: %d\n", perf_events());
		pthread_barrier_wait(&bar2);
		for (int i = 0; i < n; i++)
			pthread_join(t[i], NULL);
	} else if (argc > 2 && !strcmp(argv[1], "short")) {
		pthread_barrier_init(&bar, NULL, 1);
		pthread_barrier_init(&bar2, NULL, 1);
		for (int i = 0; i < n; i++) {
			pthread_t t;

			if (pthread_create(&t, &at, holder, (void *)1)) {
				perror("pthread_create");
				return 1;
			}
			pthread_join(t, NULL);
		}
		printf("cpu %ld\n", burned / 1000000);
		return 0;
	} else if (argc > 2 && !strcmp(argv[1], "files")) {
		pthread_t t;
		int *fds = calloc((size_t)n, sizeof *fds);

		pthread_barrier_init(&bar, NULL, 2);
		if (pthread_create(&t, &at, napper, NULL)) {
			perror("pthread_create");
			return 1;
		}
		pthread_barrier_wait(&bar);
		for (int i = 0; i < n; i++)
			fds[i] = open_one();
		pthread_join(t, NULL);
		for (int i = 0; i < n; i++)
			if (fds[i] >= 0)
				close(fds[i]);
	} else {
		fprintf(stderr, "usage: cp_fdlimit threads N [ITERS] | short N | files N | count\n");
		return 2;
	}
	printf("%d EMFILE, %d other\n", emfile, other);
	return 0;
}
