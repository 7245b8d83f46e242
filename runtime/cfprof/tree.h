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
 *
 * The hooks' fast paths are in hooks_x86_64.S, which knows the offsets
 * below (CF_N_*, CF_F_*: checked against the structures here).
 */
#ifndef CF_TREE_H
#define CF_TREE_H

/* For hooks_x86_64.S: struct cf_node's hot fields, struct cf_frame's. */
#define CF_N_SELFFN 0
#define CF_N_RCALLS 8
#define CF_N_CALLS  16
#define CF_N_FN     24
#define CF_N_WAY    48
#define CF_WAYS     8
#define CF_SET_MASK 0x30 /* (fn & CF_SET_MASK) * 2: the byte offset of fn's set */
#define CF_L2_MASK  0x3fff0 /* (X ^ fn) & CF_L2_MASK: the byte offset of
			     * (X, fn)'s entry in the thread's cache */
#define CF_F_SP     0
#define CF_F_NODE   8
#define CF_F_REPS   16
#define CF_F_SIZE   24

#ifndef __ASSEMBLER__

#include <stddef.h>
#include <stdint.h>

/* A logical path deeper than this is cut: deeper calls are counted in the
 * node (path at depth CF_MAX_TREE - 1, function), so call counts stay exact
 * and the file stays within the format's depth (FORMAT_MAX_DEPTH). */
#define CF_MAX_TREE 4000

/* A node's children are found on its list of them; past CF_NARROW, in the
 * thread's table (tree_find).  A new path's node then costs no look-up in
 * a table the size of the tree, a cache miss each (issue: a C++ test
 * suite under cfprof, millions of paths). */
#define CF_NARROW 8

/* CF_SELF: a direct recursive call (fn calling fn): its target is its
 * parent.  Such calls do not move `current`, so they push nothing: they
 * are counted as repeats of the caller's entry (cf_frame.reps). */
enum { CF_UNPROFILED = 1, CF_RECURSIVE = 2, CF_SELF = 4 };

/* One entry of a node's cache of children: the node of the call of fn
 * from here (fn 0: empty).  Written with one 16-byte store (a signal
 * handler reading it sees the old pair or the new).  The cache has 4 sets
 * of 2 entries, the set by fn's bits 4-5 (functions are 16-byte aligned),
 * the one found last first: a function whose callees take turns (an
 * interpreter's loop) finds them all, unless three share a set. */
struct cf_way {
	uintptr_t fn;
	struct cf_node *node;
};

struct cf_node {
	/* The hot part, read by every entry hook from the node on top. */
	uintptr_t selffn;        /* a function whose calls from here are
				  * direct recursion (self's fn), or 0 */
	uint64_t rcalls;         /* those calls: self's, counted here (one
				  * load fewer a call); the save adds them
				  * to self's calls */
	uint64_t calls;          /* entries into fn along this path (of a
				  * CF_SELF node: and the rcalls of the
				  * nodes whose self it is) */
	uintptr_t fn;            /* the hooks' this_fn; 0 for a thread's root */
	/* On fn's line: a walk up the path (is a new node recursive?) or
	 * along the children of a node (tree.c: kid_of) reads a line a node. */
	struct cf_node *parent;  /* the path without fn; NULL for the root */
	struct cf_node *sib;     /* its parent's child made before it */
	struct cf_way way[CF_WAYS]; /* children found from here (a cache:
				     * the thread's table has them all) */
	/* The rest. */
	struct cf_node *target;  /* what becomes current on entry: the node
				  * itself; for a recursive call, the node of
				  * the path's earlier fn; for an unprofiled
				  * function, its caller's (the parent) */
	struct cf_node *self;    /* the CF_SELF node of selffn */
	struct cf_node *kids;    /* its children, the newest first */
	uint64_t rsum;           /* the save: the rcalls that are its calls */
	uint32_t depth;          /* functions on the path */
	uint32_t flags;          /* CF_* */
	uint32_t out;            /* the save: index of its stack, or UINT32_MAX */
	uint32_t need;           /* the save: it or a descendant has counts */
	uint32_t nkids;          /* its children: past CF_NARROW, they are in
				  * the thread's table too */
	uint32_t pad;
	uint64_t hits[];         /* one per sampled resource (cf_nres; room
				  * for cf_stride) */
};

/*
 * One entry of the logical stack, 24 bytes.  sp is the hook's stack
 * pointer at its entry, which is the instrumented frame's own (less the
 * hook's return address): a live caller's is above (greater than) its
 * callees'.  A function inlined into its caller shares the caller's frame
 * and has an entry of its own with the same sp.  node is the node entered
 * (its fn is the function); `current`, what a sample charges, is
 * node->target: the paper's pointer is the top entry's, so leaving a
 * function is popping its entry.  reps counts the direct recursive calls
 * made on top of it that are still running (CF_SELF): their exits
 * decrement it, the entry's own exit pops it.  Entries above the top have
 * reps 0 (the stack's slow paths clear what they drop).
 */
struct cf_frame {
	uintptr_t sp;
	struct cf_node *node;
	uint64_t reps;
};

/*
 * The hooks' thread-local state, one initial-exec TLS access away: the top
 * entry and the last usable one.  The entries up to the last usable one
 * all have a node (the thread's root, until used), so that a signal
 * handler's hook that lands between an entry's publication and the store
 * of its node finds one (hooks_x86_64.S).  A thread whose hooks must do nothing
 * (no record yet, exited, out of memory) has top at cf_idle, whose node
 * no call matches, so that every hook takes the slow path; a thread in a
 * slow path (or beyond its stack's last entry) has top at its own
 * record's park entry, the same.
 */
struct cf_tls {
	struct cf_frame *top;
	struct cf_frame *limit;
	struct cf_pair *pairs;   /* the thread's cache of children */
};

/*
 * The thread's second cache of children, behind the nodes' own: 16384
 * entries, (X, fn)'s at (X ^ fn) & CF_L2_MASK, the node entered and the
 * child (whose fn tells whether it is fn's).  For the callees a node's
 * sets cannot hold at once: an interpreter's loop (jq_next has 43).
 * Written with one 16-byte store.
 */
struct cf_pair {
	struct cf_node *x;
	struct cf_node *child;
};
#define CF_PAIRS ((CF_L2_MASK >> 4) + 1)

enum { CF_IDLE, CF_READY, CF_BUSY, CF_DEAD };

struct cf_chunk;

struct cf_thread {
	int state;               /* CF_*: slow paths run only when READY */
	struct cf_tls *tls;      /* the thread's cf_tls (the watcher reads its
				  * top); NULL once the thread has exited */
	int reading;             /* the watcher is reading tls (tree_current) */
	struct cf_frame *base;   /* CF_MAX_FRAMES entries, reserved at once
				  * (touched as used) so they never move: the
				  * watcher may read them */
	struct cf_frame *ptop;   /* the top while parked */
	uintptr_t park_sp;       /* the stack pointer of the hook that parked */
	struct cf_frame park;    /* the top's stand-in in a slow path */
	uint64_t lost;           /* entries beyond CF_MAX_FRAMES not pushed */
	struct cf_pair *pairs;   /* its cache of children (cf_tls.pairs) */
	struct cf_node **slot;   /* (parent, fn) -> node for the children of
				  * parents with more than CF_NARROW, open
				  * addressing, made at the first such parent;
				  * the tables it outgrew stay mapped (a hook
				  * interrupted in a look-up may read one) */
	uint64_t mask, used;     /* the table's slots - 1, nodes in it */
	uint64_t nodes;          /* nodes made, but its root */
	struct cf_chunk *chunks, *chunk; /* oldest first; the one filling */
	struct cf_node *root;
	uint32_t tid;
	uintptr_t stack_lo, stack_hi; /* the thread's own stack (resync) */
	struct cf_thread *next;  /* the registry */
	struct cf_node *hooks;   /* the root's child for the time samples
				  * found in cfprof's own code (the hooks):
				  * fn is __cyg_profile_func_enter; NULL
				  * when it could not be made */
	struct cf_node park_node; /* park's node (no hits): its target is
				   * current; last (a flexible member) */
};

/* Node chunks, in the order nodes were made (a parent before its
 * children): the save walks them so.  Nodes are 16-byte aligned. */
struct cf_chunk {
	struct cf_chunk *next;
	uint64_t size, used;     /* bytes; used is published (release) */
	uint64_t ready;          /* bytes of mem populated (node_new) */
	char mem[];
};

/*
 * The trees' root in the keep (keep.h), what the launcher reads a dead
 * program's trees from (lib/run/salvage_cfprof.c): every thread's record and
 * node chunks are keep memory when there is a keep, and the registry's
 * head and the failure count are mirrored here.
 */
struct cf_keep {
	uint64_t threads; /* cf_threads */
	uint64_t failed;  /* cf_failed */
	int32_t nres;     /* cf_nres: the hits written */
	int32_t stride;   /* cf_stride: the hits a node has room for */
};
/* The layout's version: 2 has the children's cache and rcalls in the
 * node, 3 its list of children. */
#define CF_KEEP_LAYOUT                                                                       \
	(0x6366000000000000ull ^ 3ull << 48 ^ (uint64_t)sizeof(struct cf_node) << 8 ^             \
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
extern __thread struct cf_tls cf_tls __attribute__((tls_model("initial-exec")));
extern struct cf_thread cf_dead;
/* The top of a thread whose hooks do nothing, and its node (no function
 * matches it: fn 0 everywhere). */
extern struct cf_frame cf_idle;
extern struct cf_node cf_none;
extern struct cf_pair cf_no_pairs[CF_PAIRS]; /* an idle thread's (empty) */
extern uint64_t cf_failed; /* threads that could not be set up */

/* Set up the calling thread (first hook).  NULL when off or out of memory. */
/* More entries usable (cf_tls.limit further): 0, or -1 at CF_MAX_FRAMES. */
int tree_frames_grow(struct cf_thread *t);
struct cf_thread *tree_thread(uintptr_t sp);
/* The node for fn called where cur is current, made if new.  NULL when
 * out of memory.  The thread is parked (busy). */
struct cf_node *tree_child(struct cf_thread *t, struct cf_node *cur, uintptr_t fn);
/* The same, found only (NULL if not made yet): safe in a hook that a
 * signal handler's slow path may interrupt, unparked. */
struct cf_node *tree_find(const struct cf_thread *t, const struct cf_node *cur, uintptr_t fn);
/* Remember c as the child of x for fn (x's cache and the thread's). */
void tree_remember(struct cf_node *x, uintptr_t fn, struct cf_node *c);
/* The node a sample charges in t now (t's own thread, or the watcher). */
struct cf_node *tree_current(struct cf_thread *t);
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

_Static_assert(offsetof(struct cf_node, selffn) == CF_N_SELFFN, "hooks_x86_64.S");
_Static_assert(offsetof(struct cf_node, rcalls) == CF_N_RCALLS, "hooks_x86_64.S");
_Static_assert(offsetof(struct cf_node, calls) == CF_N_CALLS, "hooks_x86_64.S");
_Static_assert(offsetof(struct cf_node, fn) == CF_N_FN, "hooks_x86_64.S");
_Static_assert(offsetof(struct cf_node, way) == CF_N_WAY, "hooks_x86_64.S");
_Static_assert(sizeof(struct cf_way) * CF_WAYS == (CF_SET_MASK + 16) * 2, "hooks_x86_64.S");
_Static_assert(offsetof(struct cf_frame, sp) == CF_F_SP, "hooks_x86_64.S");
_Static_assert(offsetof(struct cf_frame, node) == CF_F_NODE, "hooks_x86_64.S");
_Static_assert(offsetof(struct cf_frame, reps) == CF_F_REPS, "hooks_x86_64.S");
_Static_assert(sizeof(struct cf_frame) == CF_F_SIZE, "hooks_x86_64.S");
_Static_assert(offsetof(struct cf_tls, limit) == 8, "hooks_x86_64.S");
_Static_assert(offsetof(struct cf_tls, pairs) == 16, "hooks_x86_64.S");
_Static_assert(sizeof(struct cf_pair) == 16, "hooks_x86_64.S");
_Static_assert(offsetof(struct cf_chunk, mem) % 16 == 0, "nodes are 16-byte aligned");

#endif /* __ASSEMBLER__ */
#endif
