/*
 * tree.h - cfprof's per-thread state: the logical call stack the
 * -finstrument-functions hooks keep, and the calling context tree they
 * count in (Appel, Duba & MacQueen: a call count per function and a
 * `current` pointer at what a timer interrupt increments; here per
 * distinct logical path, so the file holds paths with their exact counts).
 *
 * Recursion is folded as Hall & Goldberg canonicalize call paths: a call
 * of a function already on the path is counted in a node of its own (the
 * path and the function: the call edge), which has no children and is
 * never current; the function's node on the path becomes current again.
 * So the tree has a node per distinct path without repeated functions, a
 * few per program however deep its recursion, and every call count stays
 * exact (the recursive ones on their edges).
 *
 * Each thread owns its record: only the thread writes its stack and its
 * tree (no locks, no atomics on the hot path).  The sampler's signal
 * handler in the thread, and the watcher thread, only add hits to the
 * current node (atomically).  Records are never freed (the save at exit
 * reads every thread's tree); their nodes never move.
 */
#ifndef CF_TREE_H
#define CF_TREE_H

#include <stdint.h>

/* A logical path deeper than this is cut: deeper calls are counted in the
 * node (path at depth CF_MAX_TREE - 1, function), so call counts stay exact
 * and the file stays within the format's depth (FORMAT_MAX_DEPTH). */
#define CF_MAX_TREE 4000

/* CF_SELF: a direct recursive call (fn calling fn), whose target is its
 * parent: entering fn again from it is a copy of the top entry, with no
 * lookup (the lookup's loads are a chain each call would wait on). */
enum { CF_UNPROFILED = 1, CF_RECURSIVE = 2, CF_SELF = 4 };

struct cf_node {
	uintptr_t fn;            /* the hooks' this_fn; 0 for a thread's root */
	struct cf_node *target;  /* what becomes current on entry: the node
				  * itself; for a recursive call, the node of
				  * the path's earlier fn; for an unprofiled
				  * function, its caller's (the parent) */
	struct cf_node *parent;  /* the path without fn; NULL for the root */
	struct cf_node *last;    /* what the last lookup from here found
				  * (&cf_none before the first) */
	uint64_t calls;          /* entries into fn along this path */
	uint32_t depth;          /* functions on the path */
	uint32_t flags;          /* CF_UNPROFILED */
	uint32_t out;            /* the save: index of its stack, or UINT32_MAX */
	uint32_t need;           /* the save: it or a descendant has counts */
	uint64_t hits[];         /* one per sampled resource (cf_nres; room
				  * for cf_stride) */
};

/* One entry of the logical stack, 24 bytes: a deep recursion's entries
 * are written once a call each, and their size is what it costs (71000
 * entries of 40 bytes left the L2 cache: +10% on the paper's primes).
 * sp is the caller's stack pointer at the hook (the instrumented
 * function's frame): a live caller's is above (greater than) its
 * callees'.  site is the hook's call_site, the return address of that
 * frame: a function inlined into its caller shares the caller's frame and
 * its return address, so an entry with this frame's sp and another site is
 * a dead sibling.  node is the node entered (its fn is the function);
 * `current`, what a sample charges, is node->target: the paper's pointer
 * is the top entry's, so leaving a function is popping its entry. */
struct cf_frame {
	uintptr_t sp;
	struct cf_node *node;
	uintptr_t site;
};

enum { CF_IDLE, CF_READY, CF_BUSY, CF_DEAD };

struct cf_chunk;

struct cf_thread {
	/* the hot part: every hook reads these */
	int state;               /* CF_*: hooks run only when READY */
	struct cf_frame *top;    /* top entry (`current` is top->node);
				  * base[0] is a sentinel for the root */
	struct cf_frame *limit;  /* the last usable entry */
	/* the rest */
	struct cf_frame *base;   /* CF_MAX_FRAMES entries, reserved at once
				  * (touched as used) so they never move: the
				  * watcher may read them */
	uint64_t lost;           /* entries beyond CF_MAX_FRAMES not pushed */
	struct cf_node **slot;   /* (parent, fn) -> node, open addressing */
	uint64_t mask, used;
	struct cf_chunk *chunks, *chunk; /* oldest first; the one filling */
	struct cf_node *root;
	uint32_t tid;
	uintptr_t stack_lo, stack_hi; /* the thread's own stack (resync) */
	struct cf_thread *next;  /* the registry */
};

/* Node chunks, in the order nodes were made (a parent before its
 * children): the save walks them so. */
struct cf_chunk {
	struct cf_chunk *next;
	uint64_t size, used;     /* bytes; used is published (release) */
	char mem[];
};

/*
 * The trees' root in the keep (keep.h), what the launcher reads a dead
 * program's trees from (lib/salvage_cfprof.c): every thread's record and
 * node chunks are keep memory when there is a keep, and the registry's
 * head and the failure count are mirrored here.
 */
struct cf_keep {
	uint64_t threads; /* cf_threads */
	uint64_t failed;  /* cf_failed */
	int32_t nres;     /* cf_nres: the hits written */
	int32_t stride;   /* cf_stride: the hits a node has room for */
};
#define CF_KEEP_LAYOUT                                                                       \
	(0x6366000000000000ull ^ (uint64_t)sizeof(struct cf_node) << 8 ^                          \
	 (uint64_t)sizeof(struct cf_thread) << 20 ^ (uint64_t)sizeof(struct cf_chunk) << 32 ^      \
	 (uint64_t)sizeof(struct cf_keep) << 40)
/* The collector's start: the hits a file has (cf_nres), for the keep. */
void tree_keep_nres(int nres);

extern int cf_on;                   /* counting: set up (tree_prepare) */
extern int cf_nres;                 /* hits per node the save writes: the
				     * resources sampled (the collector's
				     * start), no more than cf_stride */
extern int cf_stride;               /* hits per node there is room for */
extern struct cf_thread *cf_threads; /* every thread's record, newest first */

/* The calling thread's record: made on its first hook; &cf_dead once the
 * thread has exited (or could not be set up). */
extern __thread struct cf_thread *cf_me __attribute__((tls_model("initial-exec")));
/* The same while the thread's state is CF_READY, else NULL: the one test
 * of the hooks' fast paths. */
extern __thread struct cf_thread *cf_fast __attribute__((tls_model("initial-exec")));
extern struct cf_thread cf_dead;
/* What `last` is before any lookup: a node no function matches. */
extern struct cf_node cf_none;
extern uint64_t cf_failed; /* threads that could not be set up */

/* Set up the calling thread (first hook).  NULL when off or out of memory. */
struct cf_thread *tree_thread(uintptr_t sp);
/* The node for fn called at cur (a cache miss); it becomes cur->last.
 * NULL when out of memory. */
struct cf_node *tree_child(struct cf_thread *t, struct cf_node *cur, uintptr_t fn);
/* The node a sample charges in t now. */
static inline struct cf_node *tree_current(const struct cf_thread *t)
{
	const struct cf_frame *top = __atomic_load_n(&t->top, __ATOMIC_RELAXED);
	const struct cf_node *n = top ? __atomic_load_n(&top->node, __ATOMIC_RELAXED) : NULL;
	return n ? n->target : NULL;
}
/* A forked child: every count back to zero, the trees and stacks kept. */
void tree_zero(void);
/* The calling thread is exiting: hooks stop, its stack is released. */
void tree_thread_exit(void);
/*
 * Fix, once, what every node is made with, and start counting (cf_on):
 * room for the hits of every resource CFPROF_EVENTS asks for (cf_stride:
 * the sampler drops some later if this machine cannot sample them), and
 * the functions CFPROF_UNPROFILED makes unprofiled.  Called by the first
 * hook of the process when it runs before the collector's start (in a
 * constructor of a library the loader ran before libcfprof's), and by
 * start.  No allocation, no lock: only getenv and dl_iterate_phdr.
 * 0, or -1 when another thread (or a handler interrupting this one) is
 * at it and wait is 0.
 */
#define CF_MAX_UNPROFILED 256
int tree_prepare(int wait);
/* Nodes in all (INFO). */
uint64_t tree_nodes(void);
/* Size of a node with cf_stride hits. */
static inline uint64_t tree_node_size(void)
{
	return (sizeof(struct cf_node) + (uint64_t)cf_stride * 8 + 15) & ~(uint64_t)15;
}

#endif
