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
 * slow paths (a new node, a bigger stack, a resync) mark their thread busy
 * (cf_fast NULL), and hooks that find it busy do nothing: the handler's
 * calls made in that window are not counted, and the table and the stack
 * stay whole.  The fast paths mark nothing: a handler interrupting an
 * exit hook finds a consistent stack (its two stores in either order); one
 * interrupting an entry hook between its entry's stores and their
 * publication overwrites that entry with its own (same `prev`, a lower
 * sp), which the next hook above it pops as dead: the path heals within
 * a call.
 *
 * Everything here is no_instrument_function (the runtime is not built with
 * -finstrument-functions, and must never be) and preserves errno.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <unistd.h>

#include "hooks.h"
#include "tree.h"

#define CF_VIS __attribute__((visibility("default"), no_instrument_function))
#define CF_IN __attribute__((no_instrument_function))
#define barrier() __asm__ __volatile__("" ::: "memory")

typedef void jump_fn(void *env, int val);
static jump_fn *real_longjmp, *real__longjmp, *real_siglongjmp, *real_longjmp_chk;

CF_IN void hooks_init(void)
{
	real_longjmp = (jump_fn *)dlsym(RTLD_NEXT, "longjmp");
	real__longjmp = (jump_fn *)dlsym(RTLD_NEXT, "_longjmp");
	real_siglongjmp = (jump_fn *)dlsym(RTLD_NEXT, "siglongjmp");
	real_longjmp_chk = (jump_fn *)dlsym(RTLD_NEXT, "__longjmp_chk");
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

/* Mark t busy: hooks that run meanwhile (a signal handler's) do nothing. */
CF_IN static inline void busy(struct cf_thread *t)
{
	t->state = CF_BUSY;
	cf_fast = NULL;
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
	if (top >= t->limit) {
		t->lost++; /* beyond CF_MAX_FRAMES: its exit is expected */
		goto out;
	}
	c = cur->last->fn == fn ? cur->last : tree_child(t, cur, fn);
	if (!c) {
		t->lost++;
		goto out;
	}
	/* An unprofiled function (paper section 3) leaves current alone (its
	 * target is its caller): its time is its caller's, its count is not
	 * written; its entry is on the stack only to match its exit. */
	c->calls++;
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
			top[1].sp = sp;
			top[1].node = c;
			top[1].site = site;
			t->top = top + 1;
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
			top[1].sp = sp;
			top[1].node = c;
			top[1].site = site;
			t->top = top + 1;
			return;
		}
	}
	enter_slow(cf_me, fn, sp, site);
}

/*
 * Is f the entry of the frame leaving?  Its function and return address
 * (a function's hooks both pass its own), and sp: the frame's own (gcc
 * calls the exit hook before the epilogue), or its caller's (clang, in a
 * function that needs no frame after the call, jumps to the exit hook
 * after its epilogue).  A deeper entry of the same recursive function
 * left without its exit has the same function and site, but neither sp.
 */
CF_IN static inline int leaving(const struct cf_frame *f, uintptr_t fn, uintptr_t sp,
				uintptr_t site)
{
	return f->node->fn == fn && f->site == site && (f->sp == sp || f[-1].sp == sp);
}

CF_IN __attribute__((noinline)) static void exit_slow(struct cf_thread *t, uintptr_t fn,
						      uintptr_t sp, uintptr_t site)
{
	struct cf_frame *f;

	busy(t);
	if (t->lost) {
		t->lost--; /* the exit of a frame there was no room for */
		goto out;
	}
	/* Its entry under dead ones (left without their exits). */
	for (f = t->top; f > t->base; f--)
		if (leaving(f, fn, sp, site)) {
			t->top = f - 1;
			goto out;
		}
	/* Its frame shrank (alloca): its entry is the first above sp, the
	 * ones below being its dead callees.  Else fn's entry was never seen
	 * (entered before profiling began): nothing to pop. */
	for (f = t->top; f > t->base; f--)
		if (f->sp > sp && same_stack(t, f->sp, sp)) {
			if (f->node->fn == fn && f->site == site)
				t->top = f - 1;
			break;
		}
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
		 * waits on.  Else as leaving() says (clang's exits after the
		 * epilogue), or the slow path. */
		if (__builtin_expect((top->sp == sp && top->site == site) ||
					     leaving(top, fn, sp, site),
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
