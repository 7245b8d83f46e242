/*
 * unload.c - owns the monitor's dlclose: before a library is unloaded,
 * the objects mapped are remembered (modules.h), so the profile written
 * later still lists it and its frames are symbolized.  ECL unloads a
 * Lisp program's compiled files (.fas) when it exits, before the monitor
 * writes the profile; a C program may unload its plugins.  The unloaded
 * objects' places are then held (modules_hold_*), so that a plugin loaded
 * again cannot come back half over its old place, unnamed.
 */
#include <dlfcn.h>

#include "modules.h"
#include "monitor.h"
#include "writer.h"

typedef int close_fn(void *);

__attribute__((visibility("default"))) int dlclose(void *handle)
{
	static close_fn *real;
	close_fn *f = __atomic_load_n(&real, __ATOMIC_ACQUIRE);
	int g = mon_guard, st, hold = 0, rc;

	if (!f) {
		mon_guard = 1; /* dlsym may allocate */
		f = (close_fn *)dlsym(RTLD_NEXT, "dlclose");
		mon_guard = g;
		if (!f)
			return -1;
		__atomic_store_n(&real, f, __ATOMIC_RELEASE);
	}
	st = __atomic_load_n(&mon.state, __ATOMIC_ACQUIRE);
	/* The save lock keeps the remembered list still while a save reads
	 * it; never waited for (a save may wait for the loader's lock, which
	 * a thread in dlopen holds): a library unloaded during a save keeps
	 * its frames as addresses. */
	if (!g && (mon_on(st) || st == MON_STOPPED) && writer_trylock() == 0) {
		mon_guard = 1;
		modules_remember();
		mon_guard = g;
		writer_unlock();
		/* Its place held after: a reload lands elsewhere (modules.h). */
		hold = modules_hold_begin();
	}
	rc = f(handle);
	modules_hold_end(hold);
	return rc;
}
