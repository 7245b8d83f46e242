/* peak.c - the heap's peak (issue 15), in programs whose peak is known to
 * the byte.  No stdio: its buffer would be one more allocation.  The API
 * is called through weak references, so the program runs preloaded.
 *   (none)        main keeps 777 bytes; phase1: 100 x 1000 bytes, freed;
 *                 phase2: 3 x 50000 bytes, freed.  Peak 150777: phase2's
 *                 150000 in 3 objects, main's 777.
 *   realloc       main keeps 777; grow: 30000 bytes, realloc'd to 60000,
 *                 then to 10000, freed.  Peak 60777 (realloc is the old
 *                 block's free, then the new one's allocation).
 *   threads S     main keeps 777; a thread takes S bytes in 3 blocks and
 *                 holds them while main's phase takes 2 x 30000; then all
 *                 is freed.  Peak 60777 + 3 S.
 *   many          main keeps 777; 4 threads take 1000 x 100 bytes each and
 *                 hold them all at once, then free them.  Peak 400777.
 *   restart FILE  main keeps 777; phase2; mprof_restart(FILE); phase1.
 *                 FILE's peak: phase1's 100000 alone.
 *   fork          main keeps 777; phase2; fork: the child runs phase1 and
 *                 takes 200000 in main, the parent waits.  The parent's
 *                 peak 150777; the child's 200777 (it goes on from its
 *                 parent's profile, heap and peak). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mprof.h"

#pragma weak mprof_restart

static void *volatile keep;
static pthread_barrier_t held, done;
static size_t thread_size;

/* Allocations no optimiser drops: each is written. */
static void *take(size_t n)
{
	void *p = malloc(n);

	if (!p)
		abort();
	memset(p, 1, n);
	return p;
}

__attribute__((noinline)) static void phase1(void)
{
	void *p[100];

	for (int i = 0; i < 100; i++)
		p[i] = take(1000);
	for (int i = 0; i < 100; i++)
		free(p[i]);
}

__attribute__((noinline)) static void phase2(void)
{
	void *p[3];

	for (int i = 0; i < 3; i++)
		p[i] = take(50000);
	for (int i = 0; i < 3; i++)
		free(p[i]);
}

__attribute__((noinline)) static void grow(void)
{
	char *p = take(30000), *q;

	q = realloc(p, 60000);
	if (!q)
		abort();
	p = realloc(q, 10000);
	if (!p)
		abort();
	free(p);
}

/* The thread's blocks, held until main's phase is done. */
__attribute__((noinline)) static void *hold(void *arg)
{
	void *p[3];

	(void)arg;
	for (int i = 0; i < 3; i++)
		p[i] = take(thread_size);
	pthread_barrier_wait(&held);
	pthread_barrier_wait(&done);
	for (int i = 0; i < 3; i++)
		free(p[i]);
	return NULL;
}

__attribute__((noinline)) static void beside(void)
{
	void *p[2];

	for (int i = 0; i < 2; i++)
		p[i] = take(30000);
	for (int i = 0; i < 2; i++)
		free(p[i]);
}

/* One of many threads: 1000 small blocks, held until all have theirs. */
__attribute__((noinline)) static void *small(void *arg)
{
	void *p[1000];

	(void)arg;
	for (int i = 0; i < 1000; i++)
		p[i] = take(100);
	pthread_barrier_wait(&held);
	pthread_barrier_wait(&done);
	for (int i = 0; i < 1000; i++)
		free(p[i]);
	return NULL;
}

static int many(void)
{
	pthread_t t[4];

	pthread_barrier_init(&held, NULL, 5);
	pthread_barrier_init(&done, NULL, 5);
	for (int i = 0; i < 4; i++)
		if (pthread_create(&t[i], NULL, small, NULL) != 0)
			return 1;
	pthread_barrier_wait(&held);
	pthread_barrier_wait(&done);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	return 0;
}

static int threads(size_t size)
{
	pthread_t t;

	thread_size = size;
	pthread_barrier_init(&held, NULL, 2);
	pthread_barrier_init(&done, NULL, 2);
	if (pthread_create(&t, NULL, hold, NULL) != 0)
		return 1;
	pthread_barrier_wait(&held);
	beside();
	pthread_barrier_wait(&done);
	pthread_join(t, NULL);
	return 0;
}

int main(int argc, char **argv)
{
	keep = take(777);
	if (argc > 1 && !strcmp(argv[1], "realloc")) {
		grow();
	} else if (argc > 2 && !strcmp(argv[1], "threads")) {
		return threads((size_t)atol(argv[2]));
	} else if (argc > 1 && !strcmp(argv[1], "many")) {
		return many();
	} else if (argc > 2 && !strcmp(argv[1], "restart")) {
		if (!mprof_restart)
			return 10;
		phase2();
		mprof_restart(argv[2]);
		phase1();
	} else if (argc > 1 && !strcmp(argv[1], "fork")) {
		pid_t pid;
		int st;

		phase2();
		pid = fork();
		if (pid < 0)
			return 1;
		if (pid == 0) {
			phase1();
			keep = take(200000);
			exit(0); /* the monitor saves FILE.PID at exit */
		}
		waitpid(pid, &st, 0);
	} else {
		phase1();
		phase2();
	}
	return 0;
}
