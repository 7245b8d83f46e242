/*
 * altstack.c - owns the sampler's alternate signal stacks (as_*): one per
 * sampled thread that has none of its own, mapped with a guard page as the
 * thread is set up, taken out of the kernel and unmapped as it ends; and
 * the program's view of its own alternate stacks, through an interposed
 * sigaltstack (altstack.h says what the program sees).
 *
 * Everything here runs in the thread it concerns (an alternate stack is a
 * per-thread setting), outside signal context, but for the interposed
 * sigaltstack, which a program may call from a handler: it touches only
 * this thread's TLS and makes the one system call.
 */
#include <dlfcn.h>
#include <signal.h>
#include <stdint.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "altstack.h"
#include "arena.h"
#include "state.h"

/*
 * What runs on the sampler's stack, from the top: the kernel's signal
 * frame (3.3 KiB here, with AVX-512 state in use; at most AT_MINSIGSTKSZ,
 * 11952 bytes on this CPU, with AMX), then the sampler's handler: at most
 * 3.3 KiB beyond the frame as measured (cpprof's walk when the rule cache
 * misses and an FDE is parsed; 1.2 KiB when it hits; cfprof's 0.1 KiB:
 * tests/progs/sig_alt.c, where the handler runs on the program's stack),
 * and AS_HANDLER gives it more than twice that.  Where Go adopted the stack as its
 * signal stack (in a thread cgo made), Go's handlers run on it too and
 * may interrupt the sampler's (only SIGPROF is blocked in it): another
 * frame, and the 32 KiB Go gives them on its own gsignal stacks.  Only
 * the top AS_HOT, what the sampler uses in practice (6.7 KiB at most), is
 * faulted in as the thread starts; the rest costs address space until
 * touched.
 */
#define AS_HANDLER   (8 << 10)
#define AS_GO	     (32 << 10)
#define AS_MIN_FRAME (4 << 10)
#define AS_HOT	     (8 << 10)

#ifndef SS_AUTODISARM
#define SS_AUTODISARM (1u << 31) /* Linux 4.7; glibc 2.36's headers lack it */
#endif

typedef int sigaltstack_fn(const stack_t *, stack_t *);
static sigaltstack_fn *real_sigaltstack;
static size_t as_page, as_size; /* the guard page; the stack */

struct as_thread {
	char *map;  /* guard page, then the stack; NULL: none of ours */
	int theirs; /* the program installed one of its own: the kernel has
		     * it, and the sampler's is kept aside until it is
		     * disabled again */
};
static __thread struct as_thread as_self __attribute__((tls_model("initial-exec")));

static int raw_sigaltstack(const stack_t *ss, stack_t *old)
{
	return (int)syscall(SYS_sigaltstack, ss, old);
}

void as_lookup(void)
{
	size_t frame = (size_t)getauxval(AT_MINSIGSTKSZ);

	if (!real_sigaltstack)
		real_sigaltstack = (sigaltstack_fn *)dlsym(RTLD_NEXT, "sigaltstack");
	if (!real_sigaltstack)
		real_sigaltstack = raw_sigaltstack;
	as_page = (size_t)sysconf(_SC_PAGESIZE);
	if (frame < AS_MIN_FRAME)
		frame = AS_MIN_FRAME;
	as_size = (2 * frame + AS_HANDLER + AS_GO + as_page - 1) & ~(as_page - 1);
}

static stack_t ours(void)
{
	stack_t ss = { .ss_sp = as_self.map + as_page, .ss_flags = 0, .ss_size = as_size };
	return ss;
}

int as_setup(void)
{
	stack_t cur, ss;

	if (!real_sigaltstack || real_sigaltstack(NULL, &cur) < 0)
		return -1;
	/* Mapped even where the program has a stack of its own: should it
	 * disable that one, ours takes its place. */
	if (!as_self.map) {
		char *m = mmap(NULL, as_page + as_size, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
		if (m == MAP_FAILED)
			return -1;
		/* An overflow faults on the guard page instead of writing
		 * over whatever is mapped below. */
		if (mprotect(m, as_page, PROT_NONE) < 0) {
			munmap(m, as_page + as_size);
			return -1;
		}
		/* The top, where the frame and the handler go, faulted in
		 * now: a first touch in the handler would be counted as one
		 * of the program's page faults. */
		arena_populate(m + as_page + as_size - AS_HOT, AS_HOT);
		as_self.map = m;
	}
	ss = ours();
	if (!(cur.ss_flags & SS_DISABLE)) {
		/* The program's (installed before this thread was set up,
		 * or inherited by a forked child), or ours still (a forked
		 * child): the handler runs on it. */
		as_self.theirs = cur.ss_sp != ss.ss_sp;
		return 0;
	}
	if (real_sigaltstack(&ss, NULL) < 0) {
		munmap(as_self.map, as_page + as_size);
		as_self.map = NULL;
		return -1;
	}
	as_self.theirs = 0;
	return 0;
}

void as_release(void)
{
	stack_t cur, off = { .ss_sp = NULL, .ss_flags = SS_DISABLE, .ss_size = 0 };
	char *m = as_self.map;

	if (!m || real_sigaltstack(NULL, &cur) < 0)
		return;
	/* Out of the kernel first: a signal that comes after (one of the
	 * sampler's, late, or the program's) runs on the thread's stack,
	 * never on pages about to be unmapped.  The kernel refuses while
	 * the thread runs on the stack: then it stays mapped. */
	if (!(cur.ss_flags & SS_DISABLE) && cur.ss_sp == m + as_page &&
	    ((cur.ss_flags & SS_ONSTACK) || real_sigaltstack(&off, NULL) < 0))
		return;
	as_self.map = NULL;
	as_self.theirs = 0;
	munmap(m, as_page + as_size);
}

/* SS_DISABLE, with nothing but SS_AUTODISARM beside it (the kernel's
 * test of a valid request). */
static int disables(const stack_t *ss)
{
	return (ss->ss_flags & ~SS_AUTODISARM) == SS_DISABLE;
}

CP_VIS int sigaltstack(const stack_t *ss, stack_t *old)
{
	stack_t none = { .ss_sp = NULL, .ss_flags = SS_DISABLE, .ss_size = 0 }, back;

	if (!real_sigaltstack)
		as_lookup();
	if (!as_self.map)
		return real_sigaltstack(ss, old);
	if (as_self.theirs) {
		/* The kernel holds the program's: it answers for it. */
		if (!ss || !disables(ss))
			return real_sigaltstack(ss, old);
		if (real_sigaltstack(ss, old) < 0)
			return -1;
		as_self.theirs = 0;
		/* Ours again, so the handler stays off small stacks.  Should
		 * the kernel refuse, the handler runs on the thread's. */
		back = ours();
		real_sigaltstack(&back, NULL);
		return 0;
	}
	/* The kernel holds ours; to the program, the thread has none.  A
	 * stack it installs replaces ours (the kernel checks the request);
	 * disabling none is nothing to do. */
	if (ss && !disables(ss)) {
		if (real_sigaltstack(ss, NULL) < 0)
			return -1;
		as_self.theirs = 1;
	}
	if (old)
		*old = none;
	return 0;
}
