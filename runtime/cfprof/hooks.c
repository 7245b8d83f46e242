/*
 * hooks.c - owns the hooks gcc and clang call with -finstrument-functions
 * (__cyg_profile_func_enter/exit) and the interposed longjmp family.
 *
 * The paper's two operations (section 2), per thread: on entry the
 * function's call count is incremented and `current` set to it; on return
 * `current` goes back to the caller's.  The compiler inserts the hooks
 * before inlining, so inlined copies report too (section 4).  Counting is
 * per distinct logical path (tree.h): the count goes to the node of
 * (current path, function), found through a one-entry cache per node, so
 * a hook costs a few loads and stores when the cache hits.
 *
 * Calls the hooks do not see are healed by stack address (the frame the
 * hook was called from, its CFA) and return address (the hooks' call_site,
 * the instrumented frame's own): a live caller's frame is above its
 * callees', so a logical frame below the frame now entering, or in that
 * frame with another return address (a sibling: a function inlined here
 * would share the frame's return address), is dead: its function left
 * without an exit hook (longjmp; a C++ throw compiled by clang, which runs
 * no exit hooks on that path).  longjmp, _longjmp, siglongjmp and
 * __longjmp_chk are interposed and pop exactly to the target's stack
 * pointer; an exit hook whose entry is not on top pops down to it.  A function entered on
 * another stack (a sigaltstack handler, a coroutine) pops nothing: its
 * frames nest under what was current.
 *
 * Signals: a handler running instrumented code may interrupt a hook.  The
 * slow paths (a new node, a resync) mark their thread busy (cf_fast NULL),
 * and hooks that find it busy do nothing: the handler's calls made in that
 * window are not counted, and the table and the stack stay whole.  The
 * fast paths mark nothing: an exit's one store leaves a consistent stack;
 * an entry checks, once its entry is published, that no handler used the
 * slot meanwhile (push()).
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

/* Are a and b on the same stack (the thread's own, or both elsewhere)? */
CF_IN static inline int same_stack(const struct cf_thread *t, uintptr_t a, uintptr_t b)
{
	return (a - t->stack_lo < t->stack_hi - t->stack_lo) ==
	       (b - t->stack_lo < t->stack_hi - t->stack_lo);
}

/* Pop the logical frames that a hook in the frame (sp, site) proves dead:
 * those below it, and one in the same frame with another return address
 * (a sibling called from the same caller, not a function inlined here). */
CF_IN static void pop_below(struct cf_thread *t, uintptr_t sp, uintptr_t site)
{
	struct cf_frame *top = t->top;

	while (top > t->base && (top->sp < sp || (top->sp == sp && top->site != site)) &&
	       same_stack(t, top->sp, sp))
		top--;
	t->top = top;
}

/* Pop the logical frames below sp only (longjmp's target frame stays). */
CF_IN static void pop_to(struct cf_thread *t, uintptr_t sp)
{
	struct cf_frame *top = t->top;

	while (top > t->base && top->sp < sp && same_stack(t, top->sp, sp))
		top--;
	t->top = top;
}

/*
 * Push an entry above top, in a fast path (no busy mark).  A handler
 * running instrumented code may land between the entry's stores and its
 * publication, and use the same slot for its own entry: the sp it leaves
 * there is not this frame's (the handler's frames are below it, or on
 * another stack), and the entry is written again.  Once published, a
 * handler's entries go above it.  Each store on its own (barriers): gcc
 * merges them into vector stores otherwise, at the cost of a spill.
 */
CF_IN static inline void push(struct cf_thread *t, struct cf_frame *top, struct cf_node *node,
			      uintptr_t sp, uintptr_t site)
{
	top[1].sp = sp;
	barrier();
	top[1].node = node;
	barrier();
	top[1].site = site;
	barrier();
	t->top = top + 1;
	barrier();
	if (__builtin_expect(top[1].sp != sp, 0)) {
		top[1].node = node;
		top[1].site = site;
		barrier();
		top[1].sp = sp;
	}
}

/* Mark t busy: hooks that run meanwhile (a signal handler's) do nothing. */
CF_IN static inline void busy(struct cf_thread *t)
{
	/* cf_fast first: a handler landing between the two stores must find
	 * the thread busy already, not run a slow path of its own. */
	cf_fast = NULL;
	barrier();
	t->state = CF_BUSY;
	barrier();
}

CF_IN static inline void ready(struct cf_thread *t)
{
	barrier();
	t->state = CF_READY;
	cf_fast = t;
}

CF_IN __attribute__((noinline)) static void enter_slow(struct cf_thread *t, uintptr_t fn,
						       uintptr_t sp, uintptr_t site)
{
	struct cf_node *cur, *c;
	struct cf_frame *top;
	int e = errno; /* mmap and /proc on the first call and growth */

	if (!t && !(t = tree_thread(sp)))
		goto done;
	if (t->state != CF_READY)
		goto done; /* a handler inside a hook, or an exited thread */
	busy(t);
	pop_below(t, sp, site);
	top = t->top;
	cur = top->node->target;
	c = cur->last->fn == fn ? cur->last : tree_child(t, cur, fn);
	if (!c) {
		t->lost++;
		goto out;
	}
	/* An unprofiled function (paper section 3) leaves current alone (its
	 * target is its caller): its time is its caller's, its count is not
	 * written; its entry is on the stack only to match its exit. */
	c->calls++;
	if (top >= t->limit) {
		/* Beyond CF_MAX_FRAMES: counted on the deepest path the stack
		 * holds (a recursion's own node: exact), not pushed; its exit
		 * is expected. */
		t->lost++;
		goto out;
	}
	top[1].sp = sp;
	top[1].node = c;
	top[1].site = site;
	t->top = top + 1;
out:
	ready(t);
done:
	errno = e;
}

CF_VIS void __cyg_profile_func_enter(void *this_fn, void *call_site)
{
	struct cf_thread *t = cf_fast;
	uintptr_t sp = (uintptr_t)__builtin_dwarf_cfa(), fn = (uintptr_t)this_fn;
	uintptr_t site = (uintptr_t)call_site;

	if (__builtin_expect(t != NULL, 1)) {
		struct cf_frame *top = t->top;
		struct cf_node *c = top->node;

		/* Direct recursion, made once here already: a copy of the
		 * top entry. */
		if (c->fn == fn && (c->flags & CF_SELF) && sp < top->sp && top < t->limit) {
			c->calls++;
			push(t, top, c, sp, site);
			return;
		}
		/* The cache hit, the frame below the caller's (or the
		 * caller's own: inlined into it), room on the stack.  No
		 * busy mark: a handler's hooks interrupting these stores
		 * leave at worst an entry of theirs in ours, which the next
		 * hook pops as dead (see above). */
		c = c->target->last;
		if (__builtin_expect(c->fn == fn &&
					     (sp < top->sp || (sp == top->sp && site == top->site)) &&
					     top < t->limit,
				     1)) {
			c->calls++;
			push(t, top, c, sp, site);
			return;
		}
	}
	enter_slow(cf_me, fn, sp, site);
}

/* Is f, of fn's function and return address, the entry of a frame that
 * leaves with its hook's frame at sp above f's: a function whose exit
 * hook is jumped to after its epilogue (clang, and gcc for a function that
 * restores saved registers first: sp is then its own CFA, or its caller's
 * frame), so sp lies above f's entry and not above its caller's (or the
 * caller is on another stack: a signal handler's, a thread's start)? */
CF_IN static inline int after_epilogue(const struct cf_thread *t, const struct cf_frame *f,
				       uintptr_t sp)
{
	return sp > f->sp && (sp <= f[-1].sp || !same_stack(t, f->sp, f[-1].sp));
}

CF_IN static inline int is(const struct cf_frame *f, uintptr_t fn, uintptr_t site)
{
	return f->node->fn == fn && f->site == site;
}

/*
 * An exit whose entry is not on top, or not at its frame's sp.  Only the
 * entries at or below the leaving frame are candidates (the ones between
 * are its dead callees, left without their exits): the search never goes
 * further than the frame's own, so an exit costs what it pops.  First an
 * entry at exactly the frame's sp (a deeper one of the same recursive
 * function and site may sit above it: it is dead); then one it left after
 * its epilogue; then, its frame shrunk by alloca, the first entry above
 * sp.  Else fn's entry was never seen (entered before profiling began, or
 * lost): nothing is popped.
 */
CF_IN __attribute__((noinline)) static void exit_slow(struct cf_thread *t, uintptr_t fn,
						      uintptr_t sp, uintptr_t site)
{
	struct cf_frame *f;

	busy(t);
	if (t->lost) {
		t->lost--; /* the exit of a frame there was no room for */
		goto out;
	}
	for (f = t->top; f > t->base && (f->sp <= sp || !same_stack(t, f->sp, sp)); f--)
		if (f->sp == sp && is(f, fn, site))
			goto pop;
	for (f = t->top; f > t->base && f->sp < sp && same_stack(t, f->sp, sp); f--)
		if (is(f, fn, site) && after_epilogue(t, f, sp))
			goto pop;
	if (f > t->base && f->sp > sp && is(f, fn, site))
		goto pop;
	goto out;
pop:
	t->top = f - 1;
out:
	ready(t);
}

CF_VIS void __cyg_profile_func_exit(void *this_fn, void *call_site)
{
	struct cf_thread *t = cf_fast;
	uintptr_t sp = (uintptr_t)__builtin_dwarf_cfa(), fn = (uintptr_t)this_fn;
	uintptr_t site = (uintptr_t)call_site;

	if (__builtin_expect(t != NULL, 1)) {
		struct cf_frame *top = t->top;

		/* The frame's own sp and return address: its entry (or that of
		 * a function inlined into it, which shares both and leaves
		 * first); no load of the node, which the next entry's lookup
		 * waits on.  Else an exit after the epilogue, or the slow
		 * path. */
		if (__builtin_expect((top->sp == sp && top->site == site) ||
					     (is(top, fn, site) && after_epilogue(t, top, sp)),
				     1)) {
			t->top = top - 1; /* never the sentinel: its sp is the top of memory */
			return;
		}
		exit_slow(t, fn, sp, site);
	}
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

CF_IN static void jumping(const void *env)
{
	struct cf_thread *t = cf_fast;

	if (!t)
		return;
	busy(t);
	/* The frame that called setjmp stays: its entries have its sp. */
	pop_to(t, jump_sp(env));
	ready(t);
}

#define JUMP(name, real)                                                                   \
	CF_VIS __attribute__((noreturn)) void name(void *env, int val)                     \
	{                                                                                  \
		jumping(env);                                                              \
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
	struct cf_thread *t = cf_fast;

	if (t) {
		busy(t);
		pop_to(t, (uintptr_t)__builtin_dwarf_cfa());
		ready(t);
	}
	/* Looked up at the first catch (libstdc++ is there), not at start: in a
	 * C program dlsym would fail, and dlerror's buffer is malloc'd (the
	 * program's malloc, which may be instrumented and count itself). */
	if (!real_begin_catch)
		real_begin_catch = (begin_catch_fn *)dlsym(RTLD_NEXT, "__cxa_begin_catch");
	return real_begin_catch(exc);
}
