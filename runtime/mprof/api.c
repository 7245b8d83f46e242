/*
 * api.c - owns the public interface of include/mprof.h (mprof.1:
 * set_mprof_autosave, mprof_stop, mprof_restart), the only functions besides
 * the allocator entry points that the library exports.
 */
#include "mprof.h"

#include "monitor.h"

#define EXPORT __attribute__((visibility("default")))

EXPORT void set_mprof_autosave(int count)
{
	mon_set_autosave(count);
}

EXPORT void mprof_stop(void)
{
	mon_stop();
}

EXPORT void mprof_restart(const char *filename)
{
	mon_restart(filename);
}
