/*
 * rt_deadlock.c - a cycle between a lock of the program's and a lock of
 * the monitor's, made with the public API only (issue 12, the watchdog).
 *
 * The main thread holds the loader's lock (inside a dl_iterate_phdr
 * callback) and calls set_mprof_autosave, which takes the monitor's save
 * lock; meanwhile the other thread is in mprof_stop, holding the save lock
 * while its save lists the loaded objects with dl_iterate_phdr, waiting for
 * the loader's lock.  Without a bound on the monitor's waits both wait
 * forever; with it, the monitor gives up, says so once and stops profiling,
 * and the program finishes as it would without the monitor.
 *
 * Allocates 10 blocks of 40 bytes before the cycle; prints "done".
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "mprof.h"

#pragma weak set_mprof_autosave
#pragma weak mprof_stop

static int in_callback;
static long stopper_tid;
static void *volatile keep[10]; /* kept: the profile shows them */

static void nap(long ms)
{
	struct timespec ts = { ms / 1000, ms % 1000 * 1000000 };
	while (nanosleep(&ts, &ts) != 0)
		;
}

static void *stopper(void *arg)
{
	(void)arg;
	__atomic_store_n(&stopper_tid, syscall(SYS_gettid), __ATOMIC_RELEASE);
	while (!__atomic_load_n(&in_callback, __ATOMIC_ACQUIRE))
		nap(1);
	if (mprof_stop)
		mprof_stop(); /* the save lock, then the loader's lock */
	return NULL;
}

/* Whether thread tid is blocked in futex (syscall 202): the loader's lock.
 * Read without stdio (no allocation here). */
static int in_futex(long tid)
{
	char path[64], buf[32] = "";
	int fd;

	snprintf(path, sizeof path, "/proc/self/task/%ld/syscall", tid);
	if ((fd = open(path, O_RDONLY)) < 0)
		return 0;
	if (read(fd, buf, sizeof buf - 1) < 0)
		buf[0] = 0;
	close(fd);
	return strncmp(buf, "202 ", 4) == 0;
}

static int callback(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)info, (void)size, (void)data;
	__atomic_store_n(&in_callback, 1, __ATOMIC_RELEASE);
	/* Until the stopper is in its save, waiting for the loader's lock
	 * (at most 30 s: a loaded machine may be slow, never that slow). */
	for (int i = 0; i < 3000 && !in_futex(__atomic_load_n(&stopper_tid, __ATOMIC_ACQUIRE)); i++)
		nap(10);
	if (set_mprof_autosave)
		set_mprof_autosave(0); /* the loader's lock, then the save lock */
	return 1;
}

int main(void)
{
	pthread_t t;

	for (int i = 0; i < 10; i++)
		keep[i] = malloc(40);
	if (pthread_create(&t, NULL, stopper, NULL) != 0)
		return 1;
	dl_iterate_phdr(callback, NULL);
	pthread_join(t, NULL);
	puts("done");
	return 0;
}
