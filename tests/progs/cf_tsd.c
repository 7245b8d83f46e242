/*
 * cf_tsd.c - 5000 short threads (50 at a time), each calling work() 10
 * times, with a pthread key destructor, dtor(), that runs instrumented
 * code after the thread's function has returned.  Prints "name count".
 */
#include <pthread.h>
#include <stdio.h>

static long n_work, n_dtor, n_helper;
static pthread_key_t key;

__attribute__((noinline)) void helper(int x)
{
	__atomic_fetch_add(&n_helper, 1, __ATOMIC_RELAXED);
	__asm__ volatile("" ::"r"(x));
}

__attribute__((noinline)) void work(int x)
{
	__atomic_fetch_add(&n_work, 1, __ATOMIC_RELAXED);
	helper(x);
}

__attribute__((noinline)) void dtor(void *p)
{
	__atomic_fetch_add(&n_dtor, 1, __ATOMIC_RELAXED);
	helper((int)(long)p);
}

static void *thr(void *a)
{
	pthread_setspecific(key, (void *)1);
	for (int i = 0; i < 10; i++)
		work(i);
	return a;
}

int main(void)
{
	pthread_key_create(&key, dtor);
	for (int r = 0; r < 100; r++) {
		pthread_t t[50];
		for (int i = 0; i < 50; i++)
			pthread_create(&t[i], 0, thr, 0);
		for (int i = 0; i < 50; i++)
			pthread_join(t[i], 0);
	}
	printf("work %ld\ndtor %ld\nhelper %ld\n", n_work, n_dtor, n_helper);
	return 0;
}
