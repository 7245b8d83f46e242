/*
 * unwind.h - call stack capture: the one interface between the monitor and
 * the unwinder, so the unwinder can be replaced (a caching .eh_frame
 * unwinder is planned) without touching anything else.
 */
#ifndef UNWIND_H
#define UNWIND_H

#include <stddef.h>
#include <stdint.h>

/* Name recorded in the data file (INFO "unwinder"). */
extern const char unwind_name[];

/*
 * Capture the calling thread's stack into frames[0..max-1], innermost first,
 * and return the depth.  f0->ret is the return address of the interposed
 * entry point (__builtin_return_address(0) in malloc, calloc, ...), so
 * frames[0] is the return address into the function that called the
 * allocator and none of the monitor's own frames appear.  When f0->sp is
 * known (the entry's CFA, with the caller's rbp that the entry saved), the
 * walk starts right there; otherwise it walks from its own registers and
 * skips frames up to the one whose return address is f0->ret, whatever the
 * optimiser inlined.
 * *flags gets FORMAT_STACK_TRUNCATED when outer frames did not fit (or the
 * walk could not find `ret`; then the stack is just [ret]).
 *
 * May call into the dynamic loader (dl_iterate_phdr); the caller holds the
 * monitor's recursion guard and no lock.
 */
struct unwind_frame0 {
	uint64_t ret;  /* return address of the entry point: frame 0's pc */
	uintptr_t sp;  /* the caller's sp once the entry returns (its CFA); 0: unknown */
	uintptr_t bp;  /* the caller's rbp (saved by the entry), if sp is known */
};
int unwind_capture(uint64_t *frames, int max, const struct unwind_frame0 *f0, uint32_t *flags,
		   uint64_t owner, uint64_t *value, uint32_t *hash);
/*
 * Remembered walks.  After a capture, unwind_memo_set(owner, value, frames,
 * depth) (value non-zero; frames/depth: the stack the capture returned, the
 * one value stands for) ties the caller's value to the stack just captured,
 * if the fast walk made it whole (a fallback or truncated capture is not
 * remembered; check mode also verifies that the walk is that stack).  A later
 * unwind_capture with the same owner (the caller's generation of values,
 * e.g. its profile epoch) whose walk would read the very same stack words
 * from the same frame 0 returns that stack's depth with *value set and
 * frames NOT filled; otherwise *value is 0 and frames are filled.  value
 * may be NULL (no remembering).  Per thread; never shared.  whole 0: only
 * tie value to the walk for the next capture's shared outer frames
 * (unwind_shared), and remember no whole walk: for a stack the caller met
 * for the first time, most of which never come back.
 */
void unwind_memo_set(uint64_t owner, uint64_t value, const uint64_t *frames, int depth, int whole);
/* The same, whole, for a second caller (the monitor's language stacks):
 * each entry point has one, which keeps it inlined in the other. */
void unwind_memo_keep(uint64_t owner, uint64_t value, const uint64_t *frames, int depth);
/*
 * After a capture of depth frames (filled, not truncated), whether its
 * outer frames are those of the stack a previous capture's value stands
 * for (the walk reused them): frames[*nnew..depth-1] are then the
 * outermost depth - *nnew frames of the stack that unwind_memo_set tied to
 * *value, for the same owner.  The caller can compare just the new frames.
 */
int unwind_shared(int depth, int *nnew, uint64_t *value);
/*
 * A capture with value != NULL may leave those shared frames unfilled
 * (frames[*nnew..depth-1]); unwind_fill(frames, depth) fills them, and must
 * be called before they are read and before the next capture (it does
 * nothing when they are there already).
 */
void unwind_fill(uint64_t *frames, int depth);
/*
 * Check mode (MPROF_UNWIND_CHECK, doc/runtime.md): whether it is on, and
 * the caller's verdict on a lookup it made from unwind_shared's frames
 * (same: the stack found is, frame for frame, the one captured), counted in
 * the summary and reported as a mismatch if not.
 */
int unwind_checking(void);
void unwind_check_shared(int same);
/*
 * The same without walking at all: the depth of the remembered stack whose
 * frame 0 returns to ret with stack pointer sp0 (the allocator entry
 * point's CFA), with *value set; -1 (and *value 0) when there is none,
 * it depends on frame 0's bp, or it no longer holds: then unwind_capture.
 */
int unwind_recall(const struct unwind_frame0 *f0, uint64_t owner, int max, uint64_t *value);
/*
 * *hash (if hash is not NULL and frames were filled) gets stackhash() of
 * the stack (stackhash.h), from the hashes of the outer part the walk
 * reused where it could: a deep stack is hashed in the cost of its new
 * frames.
 */

/*
 * Capture without the loader, locks or malloc, for a sampling profiler
 * (libcpprof).  The first three are called outside signal context:
 *
 * unwind_modules_refresh: snapshot the loaded objects (dl_iterate_phdr) and
 *   map the rule cache; at start and after every dlopen.  0 or -1.
 * unwind_dlclose_begin / _end: bracket the real dlclose (wait until no
 *   handler reads a module's unwind tables; then refresh and flush).
 * unwind_thread_init: this thread's stack bounds (bounds.c: no libc locks);
 *   in every thread before its first sample.  0 or -1.
 * unwind_thread_stack: those bounds, [*lo, *hi); 0, or -1 if unknown.
 *
 * unwind_capture_context (async-signal-safe): the stack of the thread a
 *   signal interrupted, from its ucontext_t: frames[0] is the interrupted
 *   pc (flags has FORMAT_STACK_PC_FIRST), then return addresses.  The walk
 *   follows the same CFI rules as unwind_capture; where they do not apply
 *   (signal frames, PLT entries, code with no unwind tables, a module loaded
 *   since the last refresh, a stack that is not the thread's), it stops and
 *   sets FORMAT_STACK_TRUNCATED.  Reads stay within the thread's stack.
 *
 * unwind_capture_copy (async-signal-safe): the same walk from registers
 *   (pc, sp and, if bp_known, bp) over a copy of len bytes of a stack taken
 *   at sp (another thread's, blocked in the kernel): no read leaves the copy.
 *
 * unwind_capture_here (async-signal-safe): the calling thread's stack, like
 *   unwind_capture (frames up to the one returning to `ret` skipped, frames
 *   are return addresses) but with the signal-safe walk: for code that may
 *   run inside the program's own signal handlers (an interposed read).
 */
int unwind_modules_refresh(void);
void unwind_dlclose_begin(void);
void unwind_dlclose_end(void);
int unwind_thread_init(void);
int unwind_thread_stack(uintptr_t *lo, uintptr_t *hi);
int unwind_capture_context(const void *ucontext, uint64_t *frames, int max, uint32_t *flags);
int unwind_capture_copy(uint64_t pc, uint64_t sp, uint64_t bp, int bp_known, const void *copy,
			size_t len, uint64_t *frames, int max, uint32_t *flags);
int unwind_capture_here(uint64_t *frames, int max, uint64_t ret, uint32_t *flags);

#endif
