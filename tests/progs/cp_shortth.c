/*
 * cp_shortth.c - 200 threads in turn (tests/e2e/53-cp-perf.t), each 200
 * times a getppid system call in do_call() and some arithmetic, then a
 * longer stretch of arithmetic before it ends: 40,000 calls in do_call.
 * Under -e cpu,syscalls the CPU clock's signals in that last stretch
 * find the calls' boundaries crossed; those hits are owed to a call's
 * return, which does not come before the thread ends.  Prints "ok".
 */
#include <pthread.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

static volatile double sink;
static volatile long calls;

__attribute__((noinline)) static void compute(long n)
{
	double x = 0;

	for (long i = 0; i < n; i++)
		x += (double)i * 0.5;
	sink = x;
}

__attribute__((noinline)) static void do_call(void)
{
	calls += syscall(SYS_getppid); /* not a tail call: do_call is a frame */
}

static void *worker(void *arg)
{
	for (int i = 0; i < 200; i++) {
		do_call();
		compute(5000);
	}
	compute(250000);
	return arg;
}

int main(void)
{
	for (int i = 0; i < 200; i++) {
		pthread_t t;

		if (pthread_create(&t, NULL, worker, NULL) != 0 || pthread_join(t, NULL) != 0)
			return 1;
	}
	puts("ok");
	return 0;
}
