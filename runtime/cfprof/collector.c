/*
 * collector.c - cfprof as the sampler's collector (sink.h): where a sample
 * goes (the paper's timer interrupt: "the interrupt handler just
 * increments the variable that current points to"), start-up, fork and
 * the save.
 *
 * Environment (set by `cfprof record`; doc/cfprof.1): the sampler's
 * CFPROF_EVENTS, CFPROF_RANDOM, CFPROF_OUT (default cfprof.data),
 * CFPROF_ROOT_PID, CFPROF_NO_PERF, and CFPROF_UNPROFILED: hexadecimal
 * link-time addresses of functions of the main program (comma-separated)
 * made unprofiled for this run.
 */
#include <link.h>
#include <stdlib.h>

#include "format.h"
#include "hooks.h"
#include "save.h"
#include "sink.h"
#include "state.h"
#include "tree.h"

/* A sample's hits go to the node current in thread tid (0: the calling
 * thread, in its signal handler or an interposed call).  Atomic: the
 * watcher charges blocked threads from its own thread. */
static void charge(uint32_t tid, int col, uint64_t hits)
{
	struct cf_thread *t = cf_me;
	struct cf_node *n;

	if (tid) {
		for (t = __atomic_load_n(&cf_threads, __ATOMIC_ACQUIRE); t && t->tid != tid; t = t->next)
			;
	}
	if (!t || t == &cf_dead)
		return;
	n = tree_current(t);
	if (n)
		__atomic_fetch_add(&n->hits[col], hits, __ATOMIC_RELAXED);
}

static int main_bias(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	*(uintptr_t *)arg = info->dlpi_addr;
	return 1; /* the first object is the main program */
}

static void read_unprofiled(void)
{
	const char *s = getenv("CFPROF_UNPROFILED");
	uintptr_t fn[CF_MAX_UNPROFILED], bias = 0;
	int n = 0;

	if (!s || !*s)
		return;
	dl_iterate_phdr(main_bias, &bias);
	while (*s && n < CF_MAX_UNPROFILED) {
		char *end;
		unsigned long long a = strtoull(s, &end, 16);
		if (end == s)
			break;
		fn[n++] = (uintptr_t)a + bias;
		s = *end == ',' ? end + 1 : end;
	}
	/* Sorted, for the binary search at node creation. */
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && fn[j - 1] > fn[j]; j--) {
			uintptr_t x = fn[j];
			fn[j] = fn[j - 1];
			fn[j - 1] = x;
		}
	tree_set_unprofiled(fn, n);
}

static int start(int nres)
{
	hooks_init();
	read_unprofiled();
	cf_nres = nres;
	tree_keep(nres);
	cfsave_keep();
	__atomic_store_n(&cf_on, 1, __ATOMIC_RELEASE);
	return 0;
}

static int fork_child(void)
{
	tree_zero();
	return 0;
}

static int save(void)
{
	/* Hooks go on counting in destructors that run later, in a tree
	 * that is no longer written; nothing stops them. */
	return cfsave_save();
}

const struct cp_sink cp_sink = {
	.name = "cfprof",
	.env = "CFPROF_",
	.out = "cfprof.data",
	.kind = FORMAT_KIND_CFPROF,
	.layout = CF_KEEP_LAYOUT,
	.watcher = "cfprof-watch",
	.start = start,
	.here = charge,
	.fork_child = fork_child,
	.thread_exit = tree_thread_exit,
	.save = save,
};
