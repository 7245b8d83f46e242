/*
 * rt_mainexit.c - threads that start allocating after the main thread has
 * exited with pthread_exit (issue 12 review).  /proc/self/maps reads as
 * empty then; a thread's stack bounds must still be found (through
 * /proc/thread-self), or every capture of every later thread goes to the
 * slow unwinder (mprof) or the thread is not sampled at all (cpprof).
 *
 * A worker waits until main has gone, then allocates and frees 20000
 * blocks of 24 bytes, starts a second worker that burns about 0.3 s of
 * CPU in spin() and allocates 20000 more, and prints "done".
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static void *volatile sink;
static pid_t main_tid;

static __attribute__((noinline)) void churn(void)
{
	for (int i = 0; i < 20000; i++) {
		sink = malloc(24);
		free(sink);
	}
}

static __attribute__((noinline)) void spin(void)
{
	struct timespec a, b;
	volatile unsigned long x = 0;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
	do {
		for (int i = 0; i < 100000; i++)
			x += (unsigned long)i;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
	} while ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < 300000000L);
}

static void *second(void *arg)
{
	(void)arg;
	spin();
	churn();
	return NULL;
}

static void *first(void *arg)
{
	char path[64];
	struct timespec ts = { 0, 1000000 };
	pthread_t t;

	(void)arg;
	/* Until the main thread is a zombie: its /proc entry says so. */
	snprintf(path, sizeof path, "/proc/self/task/%d/stat", (int)main_tid);
	for (int i = 0; i < 10000; i++) {
		FILE *f = fopen(path, "r");
		char state = 0;
		if (!f)
			break;
		if (fscanf(f, "%*d (%*[^)]) %c", &state) != 1)
			state = 0;
		fclose(f);
		if (state == 'Z')
			break;
		nanosleep(&ts, NULL);
	}
	churn();
	if (pthread_create(&t, NULL, second, NULL) == 0)
		pthread_join(t, NULL);
	puts("done");
	fflush(stdout);
	return NULL;
}

int main(void)
{
	pthread_t t;

	main_tid = getpid();
	if (pthread_create(&t, NULL, first, NULL) != 0)
		return 1;
	pthread_detach(t);
	pthread_exit(NULL);
}
