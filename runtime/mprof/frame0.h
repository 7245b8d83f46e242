/*
 * frame0.h - frame 0 as an interposed entry point finds it (unwind.h's
 * struct unwind_frame0), for the entry points of malloc.c and lisp.c.
 *
 * F0_SET records the return address, the caller's stack pointer once the
 * call returns, and the caller's rbp.  __builtin_frame_address(0) makes the
 * compiler give the entry point a frame pointer, so fp[0] is the saved rbp
 * and fp[1] the return address.  The unwinder starts there instead of
 * walking the monitor's own frames.  Use it in the exported function
 * itself (or code inlined into it), never in a helper it calls.
 */
#ifndef FRAME0_H
#define FRAME0_H

#include <stdint.h>

#include "unwind.h"

#define F0_DECL struct unwind_frame0 f0_
#define F0_SET                                                                       \
	do {                                                                         \
		const uintptr_t *fp_ = __builtin_frame_address(0);                   \
		f0_.ret = (uint64_t)(uintptr_t)__builtin_return_address(0);          \
		f0_.sp = (uintptr_t)(fp_ + 2);                                       \
		f0_.bp = fp_[0];                                                     \
	} while (0)

#endif
