/*
 * cf_verydeep.c - recursion 1500000 deep (beyond the logical stack's 1M
 * entries), twice, in a thread with a 1 GB stack; each level calls leaf
 * on the way back, and the thread calls leaf 1000 times after.  Prints
 * "name count".
 */
#include <pthread.h>
#include <stdio.h>

static long n_rec, n_leaf;

__attribute__((noinline)) int leaf(int x)
{
	n_leaf++;
	return x & 1;
}

__attribute__((noinline)) long rec(long d)
{
	n_rec++;
	long r = d ? rec(d - 1) + leaf(d) : 0;
	__asm__ volatile("");
	return r;
}

static void *thr(void *a)
{
	long s = rec(1500000);
	s += rec(1500000);
	for (int i = 0; i < 1000; i++)
		s += leaf(i);
	printf("sum %ld\nrec %ld\nleaf %ld\n", s, n_rec, n_leaf);
	return a;
}

int main(void)
{
	pthread_attr_t at;
	pthread_t t;

	pthread_attr_init(&at);
	pthread_attr_setstacksize(&at, 1024L << 20);
	if (pthread_create(&t, &at, thr, 0) != 0)
		return 1;
	pthread_join(t, 0);
	return 0;
}
