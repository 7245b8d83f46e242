/*
 * collector.c - cpprof as the sampler's collector (sink.h): every sample's
 * stack, walked by the sampler, is counted in the distinct-stack table
 * (table.c) and written at exit (save.c).
 */
#include "format.h"
#include "save.h"
#include "sink.h"
#include "table.h"

static int start(int nres)
{
	if (tab_init(nres) < 0)
		return -1;
	sv_keep();
	return 0;
}

const struct cp_sink cp_sink = {
	.name = "cpprof",
	.env = "CPPROF_",
	.out = "cpprof.data",
	.kind = FORMAT_KIND_CPPROF,
	.layout = TAB_KEEP_LAYOUT,
	.watcher = "cpprof-watch",
	.start = start,
	.stack = tab_add,
	.fork_child = tab_reset,
	.save = sv_save,
};
