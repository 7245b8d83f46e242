/*
 * rt_getattr.c - a program that asks for its own stack, as Rust's std, the
 * JVM and the Boehm GC do at start-up (issue 12).
 *
 * glibc's pthread_getattr_np takes the thread's lock and then allocates
 * (the main thread's also opens /proc/self/maps with fopen).  A monitor
 * that asked glibc for the stack bounds at its first capture in a thread
 * deadlocked right there.  Here each thread's first allocation happens
 * inside pthread_getattr_np: the main thread's and a new thread's.  Then
 * each allocates 7 blocks of 77 bytes in grow(), kept.
 *
 * Prints "main: stack of N KiB" style lines only as "ok" (sizes vary).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static void *volatile keep[14];

static int own_stack(void)
{
	pthread_attr_t a;
	void *addr;
	size_t size;
	int ok;

	if (pthread_getattr_np(pthread_self(), &a) != 0)
		return 0;
	ok = pthread_attr_getstack(&a, &addr, &size) == 0 && size > 0;
	pthread_attr_destroy(&a);
	return ok;
}

static __attribute__((noinline)) void grow(int from)
{
	for (int i = from; i < from + 7; i++)
		keep[i] = malloc(77);
}

static void *thread(void *arg)
{
	int *ok = arg;

	*ok = own_stack();
	grow(7);
	return NULL;
}

int main(void)
{
	pthread_t t;
	int main_ok = own_stack(), thread_ok = 0;

	if (pthread_create(&t, NULL, thread, &thread_ok) != 0)
		return 1;
	pthread_join(t, NULL);
	grow(0);
	printf("main %s\nthread %s\n", main_ok ? "ok" : "failed", thread_ok ? "ok" : "failed");
	return 0;
}
