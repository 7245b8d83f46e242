/*
 * unwind.h - call stack capture: the one interface between the monitor and
 * the unwinder, so the unwinder can be replaced (a caching .eh_frame
 * unwinder is planned) without touching anything else.
 */
#ifndef UNWIND_H
#define UNWIND_H

#include <stdint.h>

/* Name recorded in the data file (INFO "unwinder"). */
extern const char unwind_name[];

/*
 * Capture the calling thread's stack into frames[0..max-1], innermost first,
 * and return the depth.  `ret` is the return address of the interposed
 * entry point (__builtin_return_address(0) in malloc, calloc, ...): frames
 * are skipped up to the one whose return address is `ret`, so frames[0] is
 * the return address into the function that called the allocator and none
 * of the monitor's own frames appear, whatever the optimiser inlined.
 * *flags gets FORMAT_STACK_TRUNCATED when outer frames did not fit (or the
 * walk could not find `ret`; then the stack is just [ret]).
 *
 * May call into the dynamic loader (dl_iterate_phdr); the caller holds the
 * monitor's recursion guard and no lock.
 */
int unwind_capture(uint64_t *frames, int max, uint64_t ret, uint32_t *flags);

#endif
