/*
 * hooks.c - owns the slow paths of the hooks gcc and clang call with
 * -finstrument-functions (__cyg_profile_func_enter/exit; their fast paths
 * are hooks_x86_64.S) and the interposed longjmp family and C++ catch.
 *
 * The paper's two operations (section 2), per thread: on entry the
 * function's call count is incremented and `current` set to it; on return
 * `current` goes back to the caller's.  The compiler inserts the hooks
 * before inlining, so inlined copies report too (section 4).  Counting is
 * per distinct logical path (tree.h): the count goes to the node of
 * (current path, function), found in a cache of children in the node on
 * top or in the thread's (hooks_x86_64.S); here, on a miss of both, in
 * the thread's table, where a new node is made.  A direct recursive call (the paper's case where
 * `current` need not change) pushes nothing: it counts a repeat of the
 * entry on top (cf_frame.reps), which its exit takes back.
 *
 * Calls the hooks do not see are healed by stack address (the hook's
 * stack pointer, the instrumented frame's own): a live caller's frame is
 * above its callees', so a logical frame below the frame now entering in
 * a slow path, or below the frame now leaving, is dead: its function left
 * without an exit hook (longjmp; a C++ throw compiled by clang, which runs
 * no exit hooks on that path).  longjmp, _longjmp, siglongjmp and
 * __longjmp_chk are interposed and pop exactly to the target's stack
 * pointer, and __cxa_begin_catch to the catching frame's; an exit hook
 * whose entry is not on top pops down to it.  A function entered on
 * another stack (a sigaltstack handler, a coroutine) pops nothing: its
 * frames nest under what was current.
 *
 * Signals: a handler running instrumented code may interrupt a hook.  The
 * slow paths park their thread (its top at the record's park entry,
 * which no call matches), and hooks that find it parked do nothing: the
 * handler's calls made in that window are not counted, and the table and
 * the stack stay whole; a handler that jumps out of a slow path ends it
 * (jumping_to).  The fast paths park nothing: an exit's one store leaves
 * a consistent stack; an entry's stores are ordered so that a handler
 * landing between them leaves an entry its exit still finds (push); a
 * cache entry is written in one store; the table is read (tree_find)
 * without parking, a handler only adding to it.
 *
 * Everything here is no_instrument_function (the runtime is not built with
 * -finstrument-functions, and must never be) and preserves errno.
 */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "hooks.h"
#include "tree.h"

#define CF_VIS __attribute__((visibility("default"), no_instrument_function))
#define CF_IN __attribute__((no_instrument_function))
#define barrier() __asm__ __volatile__("" ::: "memory")

/* Called by hooks_x86_64.S (sp: the hook's stack pointer at its entry). */
void cf_enter_miss(uintptr_t fn, uintptr_t site, uintptr_t sp);
void cf_exit_miss(uintptr_t fn, uintptr_t site, uintptr_t sp);

typedef void jump_fn(void *env, int val);
static jump_fn *real_longjmp, *real__longjmp, *real_siglongjmp, *real_longjmp_chk;
typedef void *begin_catch_fn(void *);
static begin_catch_fn *real_begin_catch;

/* Is a C++ runtime (libstdc++, libc++abi) loaded? */
CF_IN static int cxx_runtime(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	(void)arg;
	return info->dlpi_name &&
	       (strstr(info->dlpi_name, "libstdc++") || strstr(info->dlpi_name, "libc++abi"));
}

CF_IN void hooks_init(void)
{
	real_longjmp = (jump_fn *)dlsym(RTLD_NEXT, "longjmp");
	real__longjmp = (jump_fn *)dlsym(RTLD_NEXT, "_longjmp");
	real_siglongjmp = (jump_fn *)dlsym(RTLD_NEXT, "siglongjmp");
	real_longjmp_chk = (jump_fn *)dlsym(RTLD_NEXT, "__longjmp_chk");
	/* __cxa_begin_catch now if a C++ runtime is there: later, dlsym takes
	 * the loader's lock, which another thread may hold while it waits for
	 * the one catching.  Not when there is none: a failed dlsym malloc's
	 * its message, and the program's malloc may count itself.  A C++
	 * runtime dlopen'd later is looked up at its first catch. */
	if (dl_iterate_phdr(cxx_runtime, NULL))
		real_begin_catch = (begin_catch_fn *)dlsym(RTLD_NEXT, "__cxa_begin_catch");
}

/* An entry's stack pointer: longjmp marks an entry whose repeats it may
 * have cut short with bit 0 (an exit below it is then one of theirs:
 * exit_slow). */
CF_IN static inline uintptr_t fsp(const struct cf_frame *f)
{
	return f->sp & ~(uintptr_t)1;
}

/* Are a and b on the same stack (the thread's own, or both elsewhere)? */
CF_IN static inline int same_stack(const struct cf_thread *t, uintptr_t a, uintptr_t b)
{
	return (a - t->stack_lo < t->stack_hi - t->stack_lo) ==
	       (b - t->stack_lo < t->stack_hi - t->stack_lo);
}

/*
 * Park t, whose top is top, for the slow path of a hook whose stack
 * pointer is sp: hooks that run meanwhile (a signal handler's) take the
 * slow path too and do nothing; a sample charges what top has current.  A
 * handler landing before the store finds the stack as it was; after it,
 * parked with no lost entries: busy.
 */
CF_IN static inline void park(struct cf_thread *t, struct cf_frame *top, uintptr_t sp)
{
	t->park_node.target = top->node->target;
	t->ptop = top;
	t->park_sp = sp;
	barrier();
	__atomic_store_n(&cf_tls.top, &t->park, __ATOMIC_RELAXED);
	barrier();
	t->state = CF_BUSY;
	barrier();
}

/* The slow path's end: top is the top again.  With entries lost beyond
 * the stack (t->lost), it stays parked: every hook comes here. */
CF_IN static inline void unpark(struct cf_thread *t, struct cf_frame *top)
{
	if (t->lost) {
		t->ptop = top;
		t->park_node.target = top->node->target;
		barrier();
		t->state = CF_READY;
		return;
	}
	barrier();
	t->state = CF_READY;
	barrier();
	__atomic_store_n(&cf_tls.top, top, __ATOMIC_RELAXED);
}

/* The thread whose slow path this is, or NULL: hooks do nothing (no
 * record: idle, exited, out of memory; or parked by a slow path that
 * this hook interrupts).  *top: its top (the real one when entries are
 * lost beyond its stack). */
CF_IN static inline struct cf_thread *ready(struct cf_frame **top)
{
	struct cf_thread *t = cf_me;

	*top = cf_tls.top;
	if (!t || t == &cf_dead || *top == &cf_idle)
		return NULL;
	if (*top == &t->park) {
		if (t->state != CF_READY || !t->lost)
			return NULL; /* busy */
		*top = t->ptop;
	}
	return t;
}

/* Drop the entries above f (dead): their repeats go (tree.h: reps 0
 * above the top). */
CF_IN static struct cf_frame *drop_to(struct cf_frame *top, struct cf_frame *f)
{
	for (; top > f; top--)
		top->reps = 0;
	return f;
}

/* Pop the logical frames that a hook in the frame at sp proves dead:
 * those below it on the same stack. */
CF_IN static struct cf_frame *pop_below(struct cf_thread *t, struct cf_frame *top, uintptr_t sp)
{
	struct cf_frame *f = top;

	while (f > t->base && fsp(f) < sp && same_stack(t, fsp(f), sp))
		f--;
	return drop_to(top, f);
}

/*
 * Pop to a jump's target frame, whose stack pointer is sp: the frames below
 * it are dead.  If the top is then an entry with repeats (a direct
 * recursion) whose frame is above sp, the jump landed inside them and cut
 * some short, how many is not known: its count goes, and its sp is marked
 * so that the exits of the repeats still running are told from its own
 * (exit_slow).  At its own frame, the jump cut them all.
 */
CF_IN static struct cf_frame *pop_to(struct cf_thread *t, struct cf_frame *top, uintptr_t sp)
{
	struct cf_frame *f = top;

	/* Below the target on its stack, and every frame of another stack
	 * above them: a jump leaves those too (a handler that ran on an
	 * alternate signal stack, as one does that interrupts our sampler's
	 * handler: left on the stack, every later call was charged under
	 * it), and they are all newer than the target's frame. */
	while (f > t->base && (fsp(f) < sp || !same_stack(t, fsp(f), sp)))
		f--;
	top = drop_to(top, f);
	if (top > t->base && top->reps && same_stack(t, fsp(top), sp)) {
		if (fsp(top) > sp)
			top->sp |= 1;
		top->reps = 0;
	}
	return top;
}

/*
 * Push c above top, in a fast path (unparked), in the fast path's order
 * (hooks_x86_64.S): sp, the publication, the node.  A handler running
 * instrumented code may land before the publication and use the same
 * slot for its own entry: then the entry has the handler's sp, below this
 * frame's, with this frame's node, and this function's exit still finds
 * it (after_epilogue's rule).  After the publication, a handler's entries
 * go above it, and until the node is stored, it finds the one the entry
 * had before (tree.h: every usable entry has one).
 */
CF_IN static inline void push(struct cf_frame *top, struct cf_node *c, uintptr_t sp)
{
	top[1].sp = sp;
	barrier();
	__atomic_store_n(&cf_tls.top, top + 1, __ATOMIC_RELAXED);
	barrier();
	top[1].node = c;
}

/* A direct recursive call c from the entry top (x, its node): a repeat of
 * the entry, counted in x->rcalls; from now on the fast path's (x->self,
 * x->selffn: set once, c is the only such child of x's target). */
CF_IN static void repeat(struct cf_frame *top, struct cf_node *x, struct cf_node *c, uintptr_t fn)
{
	if (!x->selffn) {
		x->self = c;
		barrier();
		x->selffn = fn;
	}
	x->rcalls++;
	top->reps++;
}

/* Does c, called from the entry x, leave `current` as it is (a direct
 * recursion: the paper's "on recursive calls, current need not be
 * reset")? */
CF_IN static inline int is_repeat(const struct cf_node *x, const struct cf_node *c)
{
	return (c->flags & CF_SELF) && c->target == x->target;
}

/*
 * An entry the fast path could not make: fn is not in the cache of the
 * node on top, or the stack is full, or the thread is parked, idle or new.
 */
CF_IN __attribute__((noinline)) static void enter_slow(struct cf_thread *t, uintptr_t fn,
						       uintptr_t sp)
{
	struct cf_frame *top;
	struct cf_node *x, *c;
	int e = errno; /* mmap and /proc on the first call and growth */

	if (!cf_me && !tree_thread(sp))
		goto done;
	if (!(t = ready(&top)))
		goto done; /* a handler inside a hook, or an exited thread */
	park(t, top, sp);
	if (!t->lost)
		top = pop_below(t, top, sp);
	x = top->node;
	c = tree_child(t, x->target, fn);
	if (!c) {
		t->lost++; /* out of memory: not counted, its exit expected */
		goto out;
	}
	if (!t->lost && is_repeat(x, c)) {
		repeat(top, x, c, fn);
		goto out;
	}
	/* An unprofiled function (paper section 3) leaves current alone (its
	 * target is its caller): its time is its caller's, its count is not
	 * written; its entry is on the stack only to match its exit. */
	c->calls++;
	if (t->lost || (top >= cf_tls.limit && tree_frames_grow(t) < 0)) {
		/* Beyond CF_MAX_FRAMES: counted on the deepest path the stack
		 * holds (a recursion's own node: exact), not pushed; its exit
		 * is expected. */
		t->lost++;
		goto out;
	}
	tree_remember(x, fn, c);
	top[1].sp = sp;
	top[1].node = c;
	top++;
out:
	unpark(t, top);
done:
	errno = e;
}

/* Called by the fast path on a miss: the table before the slow path.  A
 * found node is remembered in the cache of the node on top. */
CF_IN void cf_enter_miss(uintptr_t fn, uintptr_t site, uintptr_t sp)
{
	struct cf_frame *top;
	struct cf_thread *t = ready(&top);
	struct cf_node *x, *c;

	(void)site;
	if (!t || t->lost || top >= cf_tls.limit)
		goto slow;
	x = top->node;
	c = tree_find(t, x->target, fn);
	if (!c)
		goto slow;
	if (is_repeat(x, c)) {
		repeat(top, x, c, fn);
		return;
	}
	tree_remember(x, fn, c);
	c->calls++;
	push(top, c, sp);
	return;
slow:
	enter_slow(t, fn, sp);
}

/* Is f, of fn's function, the entry of a frame that leaves with its
 * hook's frame at sp above f's: a function whose exit hook is jumped to
 * after its epilogue (void functions, by gcc and clang: sp is then its
 * return address's, just below its caller's frame), so sp lies above f's
 * entry and not above its caller's (or the caller is on another stack: a
 * signal handler's, a thread's start)? */
CF_IN static inline int after_epilogue(const struct cf_thread *t, const struct cf_frame *f,
				       uintptr_t sp)
{
	return sp > fsp(f) && (sp <= fsp(f - 1) || !same_stack(t, fsp(f), fsp(f - 1)));
}

/*
 * An exit whose entry is not on top, or not at its frame's sp.  Only the
 * entries at or below the leaving frame are candidates (the ones between
 * are its dead callees, left without their exits): the search never goes
 * further than the frame's own, so an exit costs what it pops.  First an
 * entry at exactly the frame's sp (a deeper one of the same recursive
 * function may sit above it: it is dead), or a repeat of it; then one it
 * left after its epilogue; then, the first entry above sp: the frame
 * shrunk by alloca, or the exit of one of that entry's repeats.  Else
 * fn's entry was never seen (entered before profiling began, or on
 * another stack): nothing is popped.
 */
CF_IN static struct cf_frame *exit_slow(struct cf_thread *t, struct cf_frame *top, uintptr_t fn,
					uintptr_t sp)
{
	struct cf_frame *f;

	for (f = top; f > t->base && (fsp(f) <= sp || !same_stack(t, fsp(f), sp)); f--)
		if (fsp(f) == sp && f->node->fn == fn)
			goto found;
	for (f = top; f > t->base && fsp(f) < sp && same_stack(t, fsp(f), sp); f--)
		if (f->node->fn == fn && after_epilogue(t, f, sp))
			return drop_to(top, f - 1);
	if (f > t->base && fsp(f) > sp) {
		if (f->reps && f->node->selffn == fn) {
			f->reps--;
			return drop_to(top, f);
		}
		if (f->sp & 1 && f->node->selffn == fn)
			return drop_to(top, f); /* a repeat a jump left running */
		if (f->node->fn == fn)
			return drop_to(top, f - 1);
	}
	return top;
found:
	if (f->reps && f->node->selffn == fn) {
		/* Its repeat's exit after the epilogue, at its frame. */
		f->reps--;
		return drop_to(top, f);
	}
	return drop_to(top, f - 1);
}

/* Called by the fast path for an exit that is not the top's repeat, at
 * the top's sp, or after the top's epilogue. */
CF_IN void cf_exit_miss(uintptr_t fn, uintptr_t site, uintptr_t sp)
{
	struct cf_frame *top;
	struct cf_thread *t = ready(&top);

	(void)site;
	if (!t)
		return;
	park(t, top, sp);
	if (t->lost) {
		t->lost--; /* the exit of a frame there was no room for */
		unpark(t, top);
		return;
	}
	unpark(t, exit_slow(t, top, fn, sp));
}

/* ---- longjmp: the target's stack pointer, from the jmp_buf ---- */

/*
 * glibc (x86-64) keeps rsp in __jmpbuf[6], mangled with the thread's
 * pointer guard (tcbhead_t.pointer_guard, %fs:0x30): xor, then rotate
 * left by 17.  Stable since glibc 2.4.
 */
CF_IN static uintptr_t jump_sp(const void *env)
{
	uintptr_t v = ((const uintptr_t *)env)[6], guard;

	__asm__("mov %%fs:0x30, %0" : "=r"(guard));
	v = v >> 17 | v << (64 - 17);
	return v ^ guard;
}

/* Pop to the frame whose stack pointer is sp (as a hook in it would see
 * it: less the hook's return address). */
CF_IN static void jumping_to(uintptr_t sp)
{
	struct cf_thread *t = cf_me;
	struct cf_frame *top;

	/* A signal handler that interrupted a hook's slow path jumps out of
	 * it, above the hook: that slow path never ends, its thread is no
	 * longer busy (what it did so far is whole: a node made is in the
	 * table or not, the stack is what it was when it parked). */
	if (t && t != &cf_dead && cf_tls.top == &t->park && (t->state != CF_READY || !t->lost) &&
	    sp > t->park_sp && same_stack(t, sp, t->park_sp)) {
		t->state = CF_READY;
		if (!t->lost)
			__atomic_store_n(&cf_tls.top, t->ptop, __ATOMIC_RELAXED);
	}
	if (!(t = ready(&top)))
		return;
	park(t, top, (uintptr_t)__builtin_dwarf_cfa());
	if (t->lost && sp > fsp(top) && same_stack(t, fsp(top), sp))
		t->lost = 0; /* the entries beyond the stack were below the target */
	if (!t->lost)
		top = pop_to(t, top, sp);
	unpark(t, top);
}

#define JUMP(name, real)                                                                   \
	CF_VIS __attribute__((noreturn)) void name(void *env, int val)                     \
	{                                                                                  \
		/* The frame that called setjmp stays: its entries have its sp. */         \
		jumping_to(jump_sp(env) - sizeof(void *));                                 \
		if (!real) /* glibc has all four: never */                                 \
			real = (jump_fn *)dlsym(RTLD_NEXT, #name);                         \
		real(env, val);                                                            \
		__builtin_trap(); /* real does not return */                              \
	}

JUMP(longjmp, real_longjmp)
JUMP(_longjmp, real__longjmp)
JUMP(siglongjmp, real_siglongjmp)
JUMP(__longjmp_chk, real_longjmp_chk)

/* ---- C++ catch: the handler's frame is the top ---- */

/*
 * A catch handler begins with __cxa_begin_catch, called from the catching
 * frame: the frames the exception left are dead.  clang runs no exit hooks
 * on the way, so without this the time of the handler and what follows,
 * until the next hook, went to the function that threw.
 */
CF_VIS void *__cxa_begin_catch(void *exc)
{
	jumping_to((uintptr_t)__builtin_dwarf_cfa() - sizeof(void *));
	/* Looked up at the first catch (libstdc++ is there), not at start: in a
	 * C program dlsym would fail, and dlerror's buffer is malloc'd (the
	 * program's malloc, which may be instrumented and count itself). */
	if (!real_begin_catch)
		real_begin_catch = (begin_catch_fn *)dlsym(RTLD_NEXT, "__cxa_begin_catch");
	return real_begin_catch(exc);
}
