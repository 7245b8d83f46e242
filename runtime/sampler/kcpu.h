/*
 * kcpu.h - a thread's CPU time in kernel mode, placed where it was spent
 * (kcpu.c): a second task-clock per thread, kernel mode only, sampled
 * into a ring with the user registers and a copy of the user stack, and
 * drained by the thread itself at its CPU-clock signals.
 */
#ifndef CP_KCPU_H
#define CP_KCPU_H

#include <stdint.h>

struct cp_thread;

/* For the calling thread t, its events open: its kernel-mode rings, for
 * its CPU clock if a perf task-clock and for its fault events, where it
 * can (quietly not: its kernel time is then credited as before, at the
 * next user-mode overflow, and its kernel-mode faults not counted). */
void kc_open(struct cp_thread *t);
/* Close t's ring and free its state (its own thread, or a fork child for
 * the threads that did not come along). */
void kc_close(struct cp_thread *t);
/* In t's handler, before its first system call: each kernel-mode sample
 * since the last, a hit on its stack, owed by the CPU clock. */
void kc_drain(struct cp_thread *t);
/* In t's handler, before its first system call: the CPU ring's records so
 * far are the program's, those after (the handler's calls before its
 * kc_drain) its own, passed over at kc_mark.  kc_drain then drains to
 * here, and kc_unpin lets the next drain go on to the end. */
void kc_pin(struct cp_thread *t);
void kc_unpin(struct cp_thread *t);
/* Of the CPU clock's `crossed` hits, those left for the interrupted stack
 * once what the kernel-mode samples took is paid. */
uint64_t kc_settle(struct cp_thread *t, uint64_t crossed);
/* With -e real, of the `real` hits pending for thread t, those its
 * kernel-mode records were worth before the watcher made them pending,
 * to the last record's stack; the rest, for the interrupted stack. */
uint64_t kc_settle_real(struct cp_thread *t, uint64_t real);
/* In t's handler, after its last system call: the samples so far are the
 * handler's own (its reads and ioctls), passed over at the next drain. */
void kc_mark(struct cp_thread *t);
/* Thread t ends (itself, not ready): the records its rings hold now are
 * the program's, those that come later the teardown's own (its system
 * calls).  Before any system call of the teardown's. */
void kc_hold(struct cp_thread *t);
/* Thread t ends (itself, not ready), its CPU clock having crossed
 * `crossed` boundaries since its last signal: those of its last records
 * (kc_hold, then kc_drain first). */
void kc_exit(struct cp_thread *t, uint64_t crossed);

/*
 * After an interposed call of the calling thread t (io.c), not in a
 * Python program: its rings drained if they hold records (kc_drain's
 * work, not only in its signals: a program that spends its time in
 * system calls has few signals, its ring filled, and the records the
 * kernel dropped went to the last it kept, another call's).
 */
void kc_call_drain(struct cp_thread *t);
/* In such a drain (kc_call_drain, kc_call_end): the sampler's signal
 * leaves every count to the next (they are cumulative). */
int kc_busy(const struct cp_thread *t);
/*
 * A Python program (no stack in its ring, kcpu.c): around an interposed
 * call of the calling thread t (io.c), with t->kc set.  kc_call_begin
 * before the real call: records before it are not the call's.  After it,
 * if kc_call_waiting, the call's stack (f[0..n), its Python frames) to
 * kc_call_end, which credits the records since begin to it.  Async-signal-
 * safe: the call may be made in the program's handlers, and the
 * sampler's signal may come in kc_call_end (it leaves the ring alone).
 */
void kc_call_begin(struct cp_thread *t);
int kc_call_waiting(struct cp_thread *t);
void kc_call_end(struct cp_thread *t, const uint64_t *f, int n, uint32_t flags);
/* The call is over (after kc_call_end, or in its place): from kc_call_begin
 * to here the sampler's signals leave the rings to the call. */
void kc_call_out(struct cp_thread *t);
/* In the sampler's handler, the thread interrupted at stack pointer sp:
 * above the caller's at kc_call_begin, the call was left without its end (a handler
 * of the program's that longjmp'd out of it), and is over. */
void kc_call_gone(struct cp_thread *t, uint64_t sp);
/* Whether the thread is in such a call: the sampler's signal reads
 * nothing (the next does). */
int kc_in_call(const struct cp_thread *t);

#endif
