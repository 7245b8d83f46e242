/*
 * altstack.h - the sampler's alternate signal stacks (altstack.c): its
 * handler is installed with SA_ONSTACK and runs on one, never on the
 * stack it interrupted, which may be a coroutine's few KiB or a
 * goroutine's (Go aborts on a handler without SA_ONSTACK).  Each sampled
 * thread that has no alternate stack gets one of the sampler's; a thread
 * that has one (the program's) keeps it, and the handler runs there.
 *
 * sigaltstack is interposed so that the program sees and controls its
 * own alternate stacks as if the sampler had none: on a thread that holds
 * the sampler's, sigaltstack(NULL, &old) reports what the program itself
 * installed (SS_DISABLE, a null ss_sp and a size of 0 if nothing), a
 * stack the program installs replaces the sampler's in the kernel, and
 * when the program disables its own the sampler's is put back.  Go's
 * runtime makes its own system calls and so sees the sampler's stack: in
 * a thread it did not create itself (cgo's are made by pthread_create) it
 * adopts it as its signal stack, which is why AS_SIZE leaves room for
 * Go's handler.
 */
#ifndef CP_ALTSTACK_H
#define CP_ALTSTACK_H

/* Look up the real sigaltstack and size the stacks (the constructor, first
 * thing: dlsym takes the loader's lock, so never later). */
void as_lookup(void);
/*
 * Give the calling thread an alternate signal stack of the sampler's,
 * unless it has one of its own.  Outside signal context.  0, or -1: the
 * thread has none and must not be sampled (the handler would run on
 * whatever stack it interrupts).
 */
int as_setup(void);
/*
 * The calling thread is ending: take the sampler's stack out of the kernel
 * (signals from now on run on the thread's own stack, where a late one of
 * the sampler's is dropped) and only then unmap it.  Kept, never unmapped,
 * while the thread runs on it (a thread that ends inside a handler).
 */
void as_release(void);

#endif
