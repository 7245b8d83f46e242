/*
 * unwind.c - owns stack capture (unwind_*), this version with libgcc's
 * _Unwind_Backtrace: slow (it interprets the CFI of every frame on every
 * call) but correct through code without frame pointers, libc's qsort
 * calling back into the program, PIE and shared objects.
 */
#include <unwind.h>

#include "format.h"
#include "unwind.h"

const char unwind_name[] = "libgcc _Unwind_Backtrace";

/* Frames of the monitor itself above `ret`; more means `ret` is not there. */
#define UNWIND_MAX_SKIP 64

struct unwind_walk {
	uint64_t *frames;
	uint64_t ret;
	int max, n, skipped, found, truncated;
};

static _Unwind_Reason_Code unwind_step(struct _Unwind_Context *ctx, void *arg)
{
	struct unwind_walk *w = arg;
	uint64_t ip = _Unwind_GetIP(ctx);

	if (!w->found) {
		if (ip != w->ret)
			return ++w->skipped > UNWIND_MAX_SKIP ? _URC_END_OF_STACK : _URC_NO_REASON;
		w->found = 1;
	}
	if (!ip)
		return _URC_END_OF_STACK;
	if (w->n == w->max) {
		w->truncated = 1;
		return _URC_END_OF_STACK;
	}
	w->frames[w->n++] = ip;
	return _URC_NO_REASON;
}

int unwind_capture(uint64_t *frames, int max, uint64_t ret, uint32_t *flags)
{
	struct unwind_walk w = { .frames = frames, .ret = ret, .max = max };

	*flags = 0;
	if (max < 1)
		return 0;
	_Unwind_Backtrace(unwind_step, &w);
	if (!w.found) {
		frames[0] = ret;
		*flags = FORMAT_STACK_TRUNCATED;
		return 1;
	}
	if (w.truncated)
		*flags = FORMAT_STACK_TRUNCATED;
	return w.n;
}
