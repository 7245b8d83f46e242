/*
 * rt_gcclock.c - libgcc's unwinder allocating under its own lock (issue 12).
 *
 * A program that registers unwind tables with __register_frame_info (JIT
 * compilers do) makes libgcc's first unwind after that sort the registered
 * FDEs, with malloc, while it holds its object lock.  Here that unwind runs
 * on a makecontext stack, where the monitor's own walker cannot go (the
 * stack is not the thread's) and used to fall back to libgcc's
 * _Unwind_Backtrace, which waited for the lock its own caller held.
 *
 * The executable registers its own .eh_frame (found through
 * PT_GNU_EH_FRAME), so any libgcc has something to sort.  Prints the
 * number of frames libgcc saw on the coroutine (at least 2).
 */
#define _GNU_SOURCE
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>
#include <unwind.h>

extern void __register_frame_info(const void *begin, void *ob);
extern void *__deregister_frame_info(const void *begin);

static ucontext_t main_ctx, co_ctx;
static void *volatile object[16]; /* libgcc's struct object: 6 words */
static const unsigned char *eh_frame;
static int depth;

static int find_eh_frame(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size, (void)arg;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const unsigned char *hdr;
		if (info->dlpi_phdr[i].p_type != PT_GNU_EH_FRAME)
			continue;
		hdr = (const unsigned char *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
		if (hdr[0] != 1 || hdr[1] != 0x1b) /* version 1, eh_frame_ptr pcrel sdata4 */
			return 1;
		int32_t rel;
		memcpy(&rel, hdr + 4, 4);
		eh_frame = hdr + 4 + rel;
		return 1;
	}
	return 1; /* the executable is the first object */
}

static _Unwind_Reason_Code count(struct _Unwind_Context *ctx, void *arg)
{
	(void)ctx, (void)arg;
	depth++;
	return _URC_NO_REASON;
}

static void coroutine(void)
{
	_Unwind_Backtrace(count, NULL);
}

int main(void)
{
	size_t size = 256 * 1024;
	char *stack = malloc(size); /* (and linked with -lmprof, a reason to be) */

	if (!stack)
		return 1;
	dl_iterate_phdr(find_eh_frame, NULL);
	if (!eh_frame) {
		puts("no eh_frame");
		return 1;
	}
	__register_frame_info(eh_frame, (void *)object);
	getcontext(&co_ctx);
	co_ctx.uc_stack.ss_sp = stack;
	co_ctx.uc_stack.ss_size = size;
	co_ctx.uc_link = &main_ctx;
	makecontext(&co_ctx, coroutine, 0);
	swapcontext(&main_ctx, &co_ctx);
	__deregister_frame_info(eh_frame);
	printf("%s\n", depth >= 2 ? "unwound" : "not unwound");
	free(stack);
	return 0;
}
