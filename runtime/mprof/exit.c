/*
 * exit.c - owns the monitor's _exit and _Exit: a program that ends with
 * them runs no destructor, so the monitor saves first (monitor_ctl.c's
 * mon_exit_now: unless a launcher's keep has the tables), then ends the
 * process as the real _exit does (exits.h).  Python's os._exit
 * (multiprocessing's workers), a forked child's _exit, a signal
 * handler's.  exit_group called directly (Go's runtime) and a signal's
 * death pass no function of ours: only a launcher's keep (keep.h) saves
 * those.
 */
#include "exits.h"
#include "monitor.h"

__attribute__((visibility("default"), noreturn)) void _exit(int status)
{
	static exits_fn *real;

	mon_exit_now(status);
	mon_guard = 1; /* what dlsym allocates is not the program's */
	exits_next("_exit", &real, status);
}

__attribute__((visibility("default"), noreturn)) void _Exit(int status)
{
	static exits_fn *real;

	mon_exit_now(status);
	mon_guard = 1;
	exits_next("_Exit", &real, status);
}
