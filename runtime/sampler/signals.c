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
 */
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <string.h>

#include "signals.h"
#include "state.h"

typedef int sigaction_fn(int, const struct sigaction *, struct sigaction *);
static sigaction_fn *real_sigaction;
static sighandler_t (*real_signal)(int, sighandler_t);
static struct sigaction sg_user; /* the program's action for CP_SIG */
static int sg_held;              /* the sampler's handler is installed */

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
	resolve();
}

int sg_install(void (*handler)(int, siginfo_t *, void *))
{
	struct sigaction sa;

	if (!resolve())
		return -1;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = handler;
	/* On an alternate stack (altstack.h): never below a stack the
	 * handler interrupted, which may be a coroutine's 4 KiB or a
	 * goroutine's (Go requires SA_ONSTACK of every handler). */
	sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, CP_SIG);
	if (real_sigaction(CP_SIG, &sa, &sg_user) < 0)
		return -1;
	__atomic_store_n(&sg_held, 1, __ATOMIC_RELEASE);
	return 0;
}

void sg_chain(int sig, siginfo_t *si, void *uc)
{
	struct sigaction a = sg_user;
	sigset_t old;

	if (a.sa_handler == SIG_IGN)
		return;
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
	if (a.sa_flags & SA_SIGINFO)
		a.sa_sigaction(sig, si, uc);
	else
		a.sa_handler(sig);
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
