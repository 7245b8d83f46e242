/*
 * cf_deep.c - recursion 100000 frames deep, twice, in a thread with a
 * 64 MB stack; then the thread calls leaf 1000 times.  cfprof caps its
 * logical tree (deeper frames merge per function under the last level)
 * but its counts stay exact: down 2 x 100001 calls, leaf 1000 calls, all
 * from run (the logical stack is whole again once the recursion returned).
 * One "name value" per line (tests/e2e/72-cf-robust.t):
 *
 *   down 200002  down_from_run 2  leaf 1000  max_depth 100000  sum S
 *
 * and exits with status 3, which `cfprof record` must pass through.
 *
 * cf_deep kill: at the bottom of the second recursion, prints its counts
 * so far (down, down_from_run) and dies by SIGKILL, 200001 calls of down
 * running: the profile `cfprof record` writes from the keep has them.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#define DEPTH 100000

static long n_down, n_down_from_run, n_leaf, max_depth;
static volatile long sink;
static int kill_at_bottom;

__attribute__((noinline)) static long down(long depth)
{
	n_down++;
	if (depth > max_depth)
		max_depth = depth;
	if (depth == DEPTH) {
		if (kill_at_bottom && n_down_from_run == 2) {
			printf("down %ld\ndown_from_run %ld\n", n_down, n_down_from_run);
			fflush(stdout);
			raise(SIGKILL);
		}
		return 1;
	}
	long r = down(depth + 1) + (depth & 1);
	__asm__ volatile("" ::: "memory");
	return r;
}

__attribute__((noinline)) static void leaf(long i)
{
	n_leaf++;
	sink += i;
}

static void *run(void *arg)
{
	long r = 0;

	(void)arg;
	for (int k = 0; k < 2; k++) {
		n_down_from_run++;
		r += down(0);
	}
	for (long i = 0; i < 1000; i++)
		leaf(i);
	return (void *)r;
}

int main(int argc, char **argv)
{
	pthread_attr_t a;
	pthread_t t;
	void *r;

	(void)argv;
	kill_at_bottom = argc > 1;
	pthread_attr_init(&a);
	if (pthread_attr_setstacksize(&a, 64 << 20) != 0 ||
	    pthread_create(&t, &a, run, NULL) != 0 || pthread_join(t, &r) != 0)
		return 1;
	printf("down %ld\ndown_from_run %ld\nleaf %ld\nmax_depth %ld\nsum %ld\n", n_down,
	       n_down_from_run, n_leaf, max_depth, (long)r + sink);
	return 3;
}
