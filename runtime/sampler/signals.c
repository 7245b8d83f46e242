/*
 * signals.c - owns the program's view of CP_SIG (sg_*): sigaction and
 * signal are interposed for that one signal, so a program that installs a
 * SIGPROF handler neither removes the sampler's nor receives its overflow
 * signals.  Its action is kept here, reported back to it by sigaction,
 * and carried out by sg_chain for every SIGPROF that is not an overflow of
 * one of the sampler's events (an ITIMER_PROF tick, a kill -PROF):
 * SIG_IGN ignores it, SIG_DFL terminates as the default would, a handler
 * is called with the program's mask (and reset after, for SA_RESETHAND)
 * on the alternate stack the sampler's handler runs on (altstack.h): the
 * program's own where the thread has one, so a handler that asked for
 * SA_ONSTACK runs there as it asked.  Other signals go straight to libc.
 *
 * And masks: sigprocmask and pthread_sigmask never block CP_SIG.  A
 * server blocks every signal in every thread (it takes them with sigwait
 * or a signalfd in one of its own): the overflow signals stayed pending
 * and not one sample came, and nothing said so.  The program's view is
 * kept instead (cp_self.sigview, inherited by the threads it makes): the
 * old masks it gets back hold CP_SIG as it set it, and a CP_SIG of its
 * own (an ITIMER_PROF tick) that comes while it believes it blocked waits
 * in sg_chain until it unblocks it (or unblocks signals by a system call
 * of its own: unblocked_since).  The sampler's own calls (and the
 * keep's, in the same library) are told apart by their return address,
 * and get the real functions.  What sigsuspend, ppoll, pselect and
 * epoll_pwait set for their wait is left as it is: the signals then are
 * the program's.  A thread that blocks CP_SIG by a system call of its own
 * (Go's runtime) is not sampled.
 *
 * glibc's own profil sets SIGPROF's action by its internal sigaction, not
 * the symbol: a program built with gcc -pg (its __monstartup, before
 * main) took the overflow signals into its histogram, and the sampler's
 * handler never ran again (gmon.out 90 times the run's time, and every
 * sample cpprof had on one stack).  profil's callers are interposed:
 * after each, the action it set becomes the program's, run for its
 * ITIMER_PROF ticks as any handler of its own, and the sampler's goes
 * back (sg_reclaim).
 */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/gmon.h>
#include <sys/profil.h>
#include <ucontext.h>
#include <unistd.h>

#include "signals.h"
#include "state.h"

typedef int sigaction_fn(int, const struct sigaction *, struct sigaction *);
static sigaction_fn *real_sigaction;
static sighandler_t (*real_signal)(int, sighandler_t);
static struct sigaction sg_user; /* the program's action for CP_SIG */
static void (*sg_handler)(int, siginfo_t *, void *); /* the sampler's */
static int sg_held;              /* the sampler's handler is installed */
typedef int mask_fn(int, const sigset_t *, sigset_t *);
static mask_fn *real_pthread_sigmask, *real_sigprocmask;
static uintptr_t self_lo, self_hi; /* this library's loaded segments */

/* This library's address range, from its program headers. */
static int self_range(struct dl_phdr_info *info, size_t size, void *base)
{
	(void)size;
	if ((void *)info->dlpi_addr != base)
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;

		if (ph->p_type != PT_LOAD)
			continue;
		if (!self_lo || lo < self_lo)
			self_lo = lo;
		if (hi > self_hi)
			self_hi = hi;
	}
	return 1;
}

static sigaction_fn *resolve(void)
{
	/* In the constructor (sg_install), as a rule: dlsym takes the loader's
	 * lock and is no call for a signal handler. */
	if (!real_sigaction)
		real_sigaction = (sigaction_fn *)dlsym(RTLD_NEXT, "sigaction");
	if (!real_signal)
		real_signal = (sighandler_t(*)(int, sighandler_t))dlsym(RTLD_NEXT, "signal");
	return real_sigaction;
}

void sg_lookup(void)
{
	Dl_info di;

	resolve();
	real_pthread_sigmask = (mask_fn *)dlsym(RTLD_NEXT, "pthread_sigmask");
	real_sigprocmask = (mask_fn *)dlsym(RTLD_NEXT, "sigprocmask");
	if (dladdr((void *)sg_lookup, &di) && di.dli_fbase)
		dl_iterate_phdr(self_range, di.dli_fbase);
}

/* The sampler's handler installed for CP_SIG; the action it replaces in
 * *old (NULL: not wanted). */
static int set_ours(void (*handler)(int, siginfo_t *, void *), struct sigaction *old)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = handler;
	/* On an alternate stack (altstack.h): never below a stack the
	 * handler interrupted, which may be a coroutine's 4 KiB or a
	 * goroutine's (Go requires SA_ONSTACK of every handler). */
	sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, CP_SIG);
	return real_sigaction(CP_SIG, &sa, old);
}

int sg_install(void (*handler)(int, siginfo_t *, void *))
{
	if (!resolve() || set_ours(handler, &sg_user) < 0)
		return -1;
	sg_handler = handler;
	__atomic_store_n(&sg_held, 1, __ATOMIC_RELEASE);
	return 0;
}

/* profil's handler, taken for the program's (sg_reclaim), or NULL; and
 * the program's action from before it. */
static void *sg_adopted;
static struct sigaction sg_before;

/*
 * After a call that may have set CP_SIG's action past sigaction's symbol
 * (glibc's profil): an action not the sampler's becomes the program's,
 * and the sampler's handler is installed again.  profil turned off puts
 * back the action it found, the sampler's: then the program's is again
 * the one it had before (unless it set another since): glibc's counter
 * left as the program's, a SIGPROF after moncontrol(0) wrote through its
 * histogram's NULL (SIGSEGV where bare SIGPROF's default ended it).
 */
static void sg_reclaim(void)
{
	struct sigaction cur;

	if (!__atomic_load_n(&sg_held, __ATOMIC_ACQUIRE) || !resolve() ||
	    real_sigaction(CP_SIG, NULL, &cur) < 0)
		return;
	if ((cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == sg_handler) {
		if (sg_adopted && (void *)sg_user.sa_sigaction == sg_adopted)
			sg_user = sg_before;
		sg_adopted = NULL;
		return;
	}
	if (!sg_adopted) /* not profil turned on again, on top of its own */
		sg_before = sg_user;
	sg_adopted = (void *)cur.sa_sigaction;
	/* The program's before the sampler's is back: a tick between the two
	 * gets profil's action either way. */
	sg_user = cur;
	set_ours(sg_handler, NULL);
}

void sg_release(void)
{
	struct sigaction ign;
	sigset_t s;

	if (!resolve() || !__atomic_exchange_n(&sg_held, 0, __ATOMIC_ACQ_REL))
		return;
	memset(&ign, 0, sizeof ign);
	ign.sa_handler = SIG_IGN;
	real_sigaction(CP_SIG, &ign, NULL);
	real_sigaction(CP_SIG, &sg_user, NULL);
	if (cp_self.sigview && real_pthread_sigmask) {
		/* Blocked, as far as this thread knows: blocked now. */
		sigemptyset(&s);
		sigaddset(&s, CP_SIG);
		real_pthread_sigmask(SIG_BLOCK, &s, NULL);
	}
}

/*
 * Whether a thread whose view of CP_SIG blocked is its creator's, and
 * which has set no mask through pthread_sigmask or sigprocmask since,
 * unblocked signals by a system call of its own: a signal blocked when
 * it was made is not in the mask the signal interrupted (uc's).  Then the
 * view is old, and CP_SIG is not blocked (else it would not have come).
 * Go's runtime sets each new thread's mask by the system call, and cgo
 * makes its threads with every signal blocked through pthread_sigmask:
 * the threads inherited a view of CP_SIG blocked for good, and a Go
 * program's own CPU profile (runtime/pprof) got 500 ms of 1.64 s under
 * cpprof record.  Only then: a mask also gets smaller unseen, and CP_SIG
 * still blocked as the program knows, at a handler's return (after a
 * pthread_sigmask in it), at siglongjmp (glibc's own sigprocmask), by a
 * system call that unblocks another signal (tests/e2e/56-cp-sigmask.t).
 * The glibc threads' signals (32, 33) are not the program's to block.
 */
static int unblocked_since(const void *uc)
{
	const sigset_t *now = uc ? &((const ucontext_t *)uc)->uc_sigmask : NULL;

	if (!now || !cp_self.sigreal_set || !cp_self.sigview_inherited)
		return 0;
	for (int s = 1; s < NSIG; s++)
		if (s != CP_SIG && (s < 32 || s > 33) && sigismember(&cp_self.sigreal, s) &&
		    !sigismember(now, s))
			return 1;
	return 0;
}

void sg_chain(int sig, siginfo_t *si, void *uc)
{
	struct sigaction a = sg_user;
	sigset_t old;

	if (a.sa_handler == SIG_IGN)
		return;
	if (cp_self.sigview && !unblocked_since(uc)) {
		/* Blocked, as far as the program knows: when it unblocks. */
		cp_self.sigpend = 1;
		return;
	}
	cp_self.sigview = 0;
	if (a.sa_handler == SIG_DFL) {
		/* Terminate, as the default action would: give the signal its
		 * default disposition and raise it; it is blocked until this
		 * handler returns, and then kills. */
		struct sigaction dfl;
		memset(&dfl, 0, sizeof dfl);
		dfl.sa_handler = SIG_DFL;
		__atomic_store_n(&sg_held, 0, __ATOMIC_RELEASE);
		resolve()(sig, &dfl, NULL);
		raise(sig);
		return;
	}
	if (a.sa_flags & SA_RESETHAND) {
		sg_user.sa_handler = SIG_DFL;
		sg_user.sa_flags &= ~SA_SIGINFO;
	}
	pthread_sigmask(SIG_BLOCK, &a.sa_mask, &old);
	{
		/* As the kernel runs a handler: CP_SIG blocked for it (unless
		 * SA_NODEFER), as its masks read; the view it had after. */
		struct cp_thread *t = &cp_self;
		int view = t->sigview;

		if (!(a.sa_flags & SA_NODEFER) || sigismember(&a.sa_mask, CP_SIG))
			t->sigview = 1;
		t->inchain++;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		if (a.sa_flags & SA_SIGINFO)
			a.sa_sigaction(sig, si, uc);
		else
			a.sa_handler(sig);
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		t->inchain--;
		t->sigview = view;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

CP_VIS int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	if (!resolve()) {
		errno = ENOSYS;
		return -1;
	}
	if (sig != CP_SIG || !__atomic_load_n(&sg_held, __ATOMIC_ACQUIRE))
		return real_sigaction(sig, act, old);
	if (old)
		*old = sg_user;
	if (act)
		sg_user = *act;
	return 0;
}

CP_VIS sighandler_t signal(int sig, sighandler_t h)
{
	struct sigaction a, old;

	if (sig != CP_SIG || !__atomic_load_n(&sg_held, __ATOMIC_ACQUIRE)) {
		resolve();
		return real_signal ? real_signal(sig, h) : SIG_ERR;
	}
	/* BSD semantics, as glibc's signal(): restart, no reset. */
	memset(&a, 0, sizeof a);
	a.sa_handler = h;
	a.sa_flags = SA_RESTART;
	sigemptyset(&a.sa_mask);
	sigaddset(&a.sa_mask, sig);
	old = sg_user;
	sg_user = a;
	return old.sa_handler;
}

/*
 * The program's mask change (how, set, old) through real (libc's
 * pthread_sigmask, or sigprocmask), CP_SIG left unblocked and its view
 * kept; from the caller at ret.  real's result.  sg_lookup runs first
 * thing in the constructor, before any code of the program.
 */
static int masked(mask_fn **realp, const char *name, int how, const sigset_t *set,
		  sigset_t *old, uintptr_t ret)
{
	struct cp_thread *t = &cp_self;
	mask_fn *real = *realp;
	sigset_t s;
	int was = t->sigview, now = was, rc;

	if (!real) {
		/* Before the constructor (another library's constructor, run
		 * first): looked up now, and the call passed on as it is. */
		real = *realp = (mask_fn *)dlsym(RTLD_NEXT, name);
		if (!real) {
			errno = ENOSYS;
			return -1;
		}
	}
	if (!__atomic_load_n(&sg_held, __ATOMIC_ACQUIRE) || (ret >= self_lo && ret < self_hi))
		return real(how, set, old);
	if (set) {
		s = *set;
		if (how == SIG_BLOCK || how == SIG_SETMASK) {
			now = sigismember(&s, CP_SIG) ? 1 : how == SIG_BLOCK ? was : 0;
			sigdelset(&s, CP_SIG);
		} else if (how == SIG_UNBLOCK && sigismember(&s, CP_SIG)) {
			now = 0;
		}
		/* In its handler, inside the sampler's: CP_SIG stays blocked
		 * (the sampler's handler must not run again under itself). */
		if (t->inchain && how == SIG_SETMASK)
			sigaddset(&s, CP_SIG);
		else if (t->inchain && how == SIG_UNBLOCK)
			sigdelset(&s, CP_SIG);
		set = &s;
	}
	rc = real(how, set, old);
	if (rc != 0)
		return rc;
	/* The real mask now, for sg_chain (the program's own system calls
	 * may change it later, unseen). */
	if (set) {
		int e = errno;

		t->sigreal_set = real(SIG_BLOCK, NULL, &t->sigreal) == 0;
		t->sigview_inherited = 0;
		errno = e;
	}
	/* The old mask as the program set it, whatever the real one holds. */
	if (old && was)
		sigaddset(old, CP_SIG);
	else if (old)
		sigdelset(old, CP_SIG);
	t->sigview = now;
	__atomic_signal_fence(__ATOMIC_SEQ_CST); /* sigpend is read after */
	if (!now && t->sigpend) {
		/* Its own CP_SIG came while it was blocked: now. */
		t->sigpend = 0;
		raise(CP_SIG);
	}
	return 0;
}

CP_VIS int pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
	return masked(&real_pthread_sigmask, "pthread_sigmask", how, set, old,
		      (uintptr_t)__builtin_return_address(0));
}

CP_VIS int sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
	return masked(&real_sigprocmask, "sigprocmask", how, set, old,
		      (uintptr_t)__builtin_return_address(0));
}

/*
 * profil and its callers in glibc's gmon (gcc -pg's start-up, and a
 * program's own moncontrol): the real one, then the sampler's handler
 * back (sg_reclaim).  Looked up at the call: none is a signal handler's.
 */
extern void moncontrol(int mode);
typedef void range_fn(unsigned long, unsigned long);
typedef void mode_fn(int);
typedef int profil_fn(unsigned short *, size_t, size_t, unsigned int);
typedef int sprofil_fn(struct prof *, int, struct timeval *, unsigned int);

static void *sg_next(void **real, const char *name)
{
	if (!*real)
		*real = dlsym(RTLD_NEXT, name);
	return *real;
}

CP_VIS void __monstartup(unsigned long lo, unsigned long hi)
{
	static void *real;
	range_fn *f = (range_fn *)sg_next(&real, "__monstartup");

	if (f)
		f(lo, hi);
	sg_reclaim();
}

CP_VIS void monstartup(unsigned long lo, unsigned long hi)
{
	static void *real;
	range_fn *f = (range_fn *)sg_next(&real, "monstartup");

	if (f)
		f(lo, hi);
	sg_reclaim();
}

CP_VIS void moncontrol(int mode)
{
	static void *real;
	mode_fn *f = (mode_fn *)sg_next(&real, "moncontrol");

	if (f)
		f(mode);
	sg_reclaim();
}

CP_VIS int profil(unsigned short *buf, size_t size, size_t offset, unsigned int scale)
{
	static void *real;
	profil_fn *f = (profil_fn *)sg_next(&real, "profil");
	int rc = -1, e = ENOSYS;

	if (f) {
		rc = f(buf, size, offset, scale);
		e = errno;
	}
	sg_reclaim();
	errno = e;
	return rc;
}

CP_VIS int sprofil(struct prof *p, int n, struct timeval *tv, unsigned int flags)
{
	static void *real;
	sprofil_fn *f = (sprofil_fn *)sg_next(&real, "sprofil");
	int rc = -1, e = ENOSYS;

	if (f) {
		rc = f(p, n, tv, flags);
		e = errno;
	}
	sg_reclaim();
	errno = e;
	return rc;
}
