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

static exits_fn *real_exit, *real_Exit;

void exit_lookup(void)
{
	exits_find("_exit", &real_exit);
	exits_find("_Exit", &real_Exit);
}

/*
 * What dlsym allocates is not the program's: the guard, but only when the
 * lookup is still to make (a process that ends before the configuration,
 * which made it).  Never otherwise: a vfork child (whose exec failed)
 * shares its parent's thread and so its thread-local guard, and a guard
 * left set there would have the thread record nothing more.
 */
static void guard_lookup(exits_fn **cache)
{
	if (!__atomic_load_n(cache, __ATOMIC_ACQUIRE))
		mon_guard = 1;
}

__attribute__((visibility("default"), noreturn)) void _exit(int status)
{
	mon_exit_now(status);
	guard_lookup(&real_exit);
	exits_next("_exit", &real_exit, status);
}

__attribute__((visibility("default"), noreturn)) void _Exit(int status)
{
	mon_exit_now(status);
	guard_lookup(&real_Exit);
	exits_next("_Exit", &real_Exit, status);
}
