/*
 * hooks_x86_64.S - owns the fast paths of the -finstrument-functions
 * hooks, __cyg_profile_func_enter and __cyg_profile_func_exit: a few
 * instructions a call when the callee's node is in the cache of the node
 * on top, and the exit's entry is on top (hooks.c has the slow paths,
 * tree.h the structures and their offsets).
 *
 * Assembly, not C, because every instruction counts here (issue 23: a
 * call costs at most 1.3 times the no-op hooks'; test 98 holds it): the
 * thread's state is one initial-exec TLS access (its GOT offset, then
 * %fs), the hook's own %rsp is the frame's stack pointer (no lea), a
 * repeat's exit is a subtraction and a branch, and nothing is spilled.
 * C would not promise the order of the stores either (hooks.c: push).
 *
 * enter(fn = %rdi, site = %rsi):
 *   X = top->node
 *   fn == X->selffn: a direct recursion: X->rcalls++, top->reps++
 *   (X's target stays current: nothing is pushed; the paper's "on
 *   recursive calls, current need not be reset")
 *   X's cache (the way of fn in its set), or else the thread's
 *   (cf_tls.pairs), has fn's child, and top is below the last usable entry:
 *   child->calls++, push {rsp, child}: rsp, the publication, the child
 *   (hooks.c: push says what a signal handler landing between sees)
 *   else cf_enter_miss(fn, site, rsp)
 *
 * exit(fn = %rdi, site = %rsi):
 *   top->reps-- if it had repeats: one of them leaves
 *   top->sp == rsp: the frame's own exit (or an inlined callee's, which
 *   shares it and leaves first): pop
 *   top->sp < rsp, top's function is fn and rsp is not above its caller's
 *   entry: the exit hook was jumped to after the function's epilogue
 *   (void functions): pop
 *   else cf_exit_miss(fn, site, rsp)
 *
 * Both preserve every register the ABI asks a call to preserve, and
 * errno (the slow paths save it where they make system calls).
 */
#include "tree.h"

	.text

	.globl	__cyg_profile_func_enter
	.type	__cyg_profile_func_enter, @function
	.p2align 4
__cyg_profile_func_enter:
	.cfi_startproc
	movq	cf_tls@gottpoff(%rip), %r8
	movq	%fs:(%r8), %rax			/* top */
	movq	CF_F_NODE(%rax), %rdx		/* X, the node entered last */
	cmpq	%rdi, CF_N_SELFFN(%rdx)
	je	.Lrepeat
	movl	%edi, %ecx
	andl	$CF_SET_MASK, %ecx		/* fn's set: twice that, in bytes */
	cmpq	%rdi, CF_N_WAY(%rdx,%rcx,2)
	jne	.Lway2
	movq	CF_N_WAY+8(%rdx,%rcx,2), %rcx	/* the child */
.Lpush:
	cmpq	%fs:8(%r8), %rax		/* below the last entry (limit) */
	jae	.Lenter_miss
	incq	CF_N_CALLS(%rcx)
	movq	%rsp, CF_F_SIZE+CF_F_SP(%rax)
	addq	$CF_F_SIZE, %rax
	movq	%rax, %fs:(%r8)			/* published */
	movq	%rcx, CF_F_NODE(%rax)
	ret
.Lrepeat:
	incq	CF_N_RCALLS(%rdx)
	incq	CF_F_REPS(%rax)
	ret
.Lway2:
	cmpq	%rdi, CF_N_WAY+16(%rdx,%rcx,2)
	jne	.Lpairs
	movq	CF_N_WAY+24(%rdx,%rcx,2), %rcx
	jmp	.Lpush
.Lpairs:
	/* The thread's cache: (X, child) at (X ^ fn) & CF_L2_MASK, the
	 * child's fn fn's. */
	movq	%rdx, %rcx
	xorq	%rdi, %rcx
	andl	$CF_L2_MASK, %ecx
	addq	%fs:16(%r8), %rcx
	cmpq	%rdx, (%rcx)
	jne	.Lenter_miss
	movq	8(%rcx), %rcx
	cmpq	%rdi, CF_N_FN(%rcx)
	jne	.Lenter_miss
	jmp	.Lpush
.Lenter_miss:
	movq	%rsp, %rdx
	jmp	cf_enter_miss
	.cfi_endproc
	.size	__cyg_profile_func_enter, .-__cyg_profile_func_enter

	.globl	__cyg_profile_func_exit
	.type	__cyg_profile_func_exit, @function
	.p2align 4
__cyg_profile_func_exit:
	.cfi_startproc
	movq	cf_tls@gottpoff(%rip), %r8
	movq	%fs:(%r8), %rax			/* top */
	/* One instruction tells a repeat's exit from the entry's own: a
	 * borrow means reps was 0.  In the two instructions it is -1 a
	 * handler's hooks only see an entry without repeats that their exit
	 * does not match (its sp is not theirs): their slow path leaves it. */
	subq	$1, CF_F_REPS(%rax)
	jc	.Lexit_entry
	ret
.Lexit_entry:
	movq	$0, CF_F_REPS(%rax)
	cmpq	%rsp, CF_F_SP(%rax)
	jne	.Lexit_other
	subq	$CF_F_SIZE, %fs:(%r8)		/* pop */
	ret
.Lexit_other:
	ja	.Lexit_miss			/* below the top's frame */
	movq	CF_F_NODE(%rax), %rdx
	cmpq	%rdi, CF_N_FN(%rdx)		/* no real function has fn 0: the */
	jne	.Lexit_miss			/* root's, idle's, park's entries */
	cmpq	%rsp, CF_F_SP-CF_F_SIZE(%rax)	/* the caller's entry at or above */
	jb	.Lexit_miss
	subq	$CF_F_SIZE, %fs:(%r8)		/* pop: after the epilogue */
	ret
.Lexit_miss:
	movq	%rsp, %rdx
	jmp	cf_exit_miss
	.cfi_endproc
	.size	__cyg_profile_func_exit, .-__cyg_profile_func_exit

	.section .note.GNU-stack, "", @progbits
