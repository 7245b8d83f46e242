/*
 * collector.c - cfprof as the sampler's collector (sink.h): where a sample
 * goes (the paper's timer interrupt: "the interrupt handler just
 * increments the variable that current points to"), start-up, fork and
 * the save.
 *
 * Environment (set by `cfprof record`; doc/cfprof.1): the sampler's
 * CFPROF_EVENTS, CFPROF_RANDOM, CFPROF_OUT (default cfprof.data),
 * CFPROF_ROOT_PID, CFPROF_NO_PERF; and the tree's CFPROF_UNPROFILED
 * (tree.c).
 */
#include <link.h>

#include "format.h"
#include "hooks.h"
#include "keep.h"
#include "save.h"
#include "sink.h"
#include "state.h"
#include "tree.h"

/* Our own code (libcfprof's executable segment): a sample there is in
 * the hooks, not in the function they were called for. */
static uintptr_t own_lo, own_hi;

static void charge(uint32_t tid, int col, uint64_t hits, uintptr_t pc);

static int own_range(struct dl_phdr_info *info, size_t size, void *arg)
{
	uintptr_t a = (uintptr_t)charge;

	(void)size;
	(void)arg;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && a >= lo && a < lo + ph->p_memsz) {
			own_lo = lo;
			own_hi = lo + ph->p_memsz;
			return 1;
		}
	}
	return 0;
}

/*
 * A sample's hits go to the node current in thread tid (0: the calling
 * thread, in its signal handler or an interposed call).  Atomic: the
 * watcher charges blocked threads from its own thread (tree_current
 * reads their state safely).  A sample whose pc is in the hooks goes to
 * the thread's hooks node, a function of its own (__cyg_profile_func_
 * enter) under the root: charged to the current function, their cost
 * doubled the share of a caller of a small function called 30 million
 * times (bzip2's mainSimpleSort: 13.6% where its own code had 6.1%).
 */
static void charge(uint32_t tid, int col, uint64_t hits, uintptr_t pc)
{
	struct cf_thread *t = cf_me;
	struct cf_node *n;

	if (tid) {
		for (t = __atomic_load_n(&cf_threads, __ATOMIC_ACQUIRE); t && t->tid != tid; t = t->next)
			;
	}
	if (!t || t == &cf_dead)
		return;
	if (pc >= own_lo && pc < own_hi && t->hooks)
		n = t->hooks;
	else
		n = tree_current(t);
	if (n)
		__atomic_fetch_add(&n->hits[col], hits, __ATOMIC_RELAXED);
}

/* Counting may have begun already: at the first hook, when another
 * library's constructor ran before ours (tree_prepare).  Its nodes have
 * room for the resources asked; nres, those this machine samples, are
 * no more. */
static int start(int nres)
{
	dl_iterate_phdr(own_range, NULL);
	hooks_init();
	if (tree_prepare(1) < 0 || nres > cf_stride)
		return -1;
	cf_nres = nres;
	tree_keep_nres(nres);
	cfsave_keep();
	return 0;
}

static int fork_child(void)
{
	tree_zero();
	return 0;
}

static int save(const char *aside)
{
	/* A process the program exec'd that never ran an instrumented
	 * function (no thread has a record: made on its first hook) has
	 * nothing to write: make's shells and compilers wrote a file of no
	 * calls each, 302 for a make of 300 jobs.  The program's own process
	 * writes its file whatever it holds. */
	if (getpid() != cp.root_pid && !__atomic_load_n(&cf_threads, __ATOMIC_ACQUIRE)) {
		/* Nor the launcher, from the keep: the sh a forked child
		 * exec'd for gawk's pipe left a file of no calls, which
		 * `cfprof merge FILE FILE.*` refused (another program). */
		if (!aside)
			keep_saved(1);
		return 0;
	}
	/* Hooks go on counting in destructors that run later, in a tree
	 * that is no longer written; nothing stops them. */
	return cfsave_save(aside);
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
