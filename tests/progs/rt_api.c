/* rt_api.c - the mprof.1 API, called through weak references so the same
 * program runs preloaded or linked.  Sizes tell the phases apart.
 *   autosave N K: set_mprof_autosave(N) (N 0: leave it to MPROF_AUTOSAVE),
 *                 K allocations of 40 bytes, then the exit_group system
 *                 call (no _exit, which saves): only autosaves.
 *   stop:         5 x 41 bytes, mprof_stop(), 3 x 42 bytes, exit.
 *   restart FILE: 5 x 41 bytes, mprof_stop(), 3 x 42 bytes,
 *                 mprof_restart(FILE), 7 x 43 bytes, free the first 8
 *                 (unknown frees now), free 2 of the 43s, exit.
 *   restart-nostop FILE: 4 x 41 bytes, mprof_restart(FILE), 2 x 43 bytes,
 *                 free the 4 (unknown), exit. */
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "mprof.h"

#pragma weak set_mprof_autosave
#pragma weak mprof_stop
#pragma weak mprof_restart

static void *v[32];
static void *volatile sink;

static void grab(int from, int n, size_t size)
{
	for (int i = from; i < from + n; i++)
		v[i] = malloc(size);
}

int main(int argc, char **argv)
{
	if (!mprof_stop || !mprof_restart || !set_mprof_autosave)
		return 10; /* the monitor is not there */
	if (argc >= 4 && !strcmp(argv[1], "autosave")) {
		int n = atoi(argv[2]), k = atoi(argv[3]);
		if (n)
			set_mprof_autosave(n);
		for (int i = 0; i < k; i++)
			sink = malloc(40);
		syscall(SYS_exit_group, 0);
	}
	if (argc >= 2 && !strcmp(argv[1], "stop")) {
		grab(0, 5, 41);
		mprof_stop();
		grab(5, 3, 42);
		return 0;
	}
	if (argc >= 3 && !strcmp(argv[1], "restart")) {
		grab(0, 5, 41);
		mprof_stop();
		grab(5, 3, 42);
		mprof_restart(argv[2]);
		grab(8, 7, 43);
		for (int i = 0; i < 10; i++)
			free(v[i]);
		return 0;
	}
	if (argc >= 3 && !strcmp(argv[1], "restart-nostop")) {
		grab(0, 4, 41);
		mprof_restart(argv[2]);
		grab(4, 2, 43);
		for (int i = 0; i < 4; i++)
			free(v[i]);
		return 0;
	}
	return 11;
}
