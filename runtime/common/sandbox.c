/*
 * sandbox.c - owns the collectors' prctl and syscall: a program about to
 * install a seccomp filter (prctl(PR_SET_SECCOMP), or the seccomp system
 * call through syscall(), as libseccomp makes it) tells the collector
 * first (sandbox_on's hook), while every system call is still allowed.
 *
 * A filter allows what the program needs and no more.  Under cpprof,
 * sshd's pre-authentication child (no signal handler of its own, so no
 * rt_sigreturn in its filter) was killed by SIGSYS at the first sample's
 * return, and every login failed; with -e real, its one thread killed,
 * the sampler's watcher kept the process alive, and each login hung.
 * So a collector stops there: it saves what it has (the file written now,
 * its system calls still allowed; a launcher's keep has it too), stops
 * recording and sampling, gives its signal back, and makes no system
 * call of its own at exit (sandbox_entered).  The profile covers the
 * process up to its sandbox.
 *
 * A filter installed by a raw system call instruction (Chromium's, Go's
 * runtime) is not seen.
 *
 * And close and close_range through syscall() are the program's close
 * and close_range (fds.c): a daemon's syscall(SYS_close_range, 3, ~0U, 0)
 * (code older than glibc's wrapper) closed the collectors' descriptors,
 * and cpprof sampled nothing after it, without a word.
 */
#include <errno.h>
#include <dlfcn.h>
#include <linux/seccomp.h>
#include <stdarg.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fds.h"
#include "sandbox.h"

#define VIS __attribute__((visibility("default")))

typedef int prctl_fn(int, unsigned long, unsigned long, unsigned long, unsigned long);
typedef long syscall_fn(long, long, long, long, long, long, long);
static prctl_fn *next_prctl;
static syscall_fn *next_syscall;
static void (*hook)(void);
static int entered;

__attribute__((constructor(101))) static void sandbox_init(void)
{
	next_prctl = (prctl_fn *)dlsym(RTLD_NEXT, "prctl");
	next_syscall = (syscall_fn *)dlsym(RTLD_NEXT, "syscall");
}

void sandbox_on(void (*fn)(void))
{
	hook = fn;
}

int sandbox_entered(void)
{
	return __atomic_load_n(&entered, __ATOMIC_ACQUIRE);
}

static void enter(void)
{
	if (__atomic_exchange_n(&entered, 1, __ATOMIC_ACQ_REL))
		return; /* a second filter: the collector stopped at the first */
	if (hook)
		hook();
}

/* The system call itself, where no next definition was found yet. */
static long raw(long n, long a1, long a2, long a3, long a4, long a5, long a6)
{
	register long r10 __asm__("r10") = a4, r8 __asm__("r8") = a5, r9 __asm__("r9") = a6;
	long r;

	__asm__ volatile("syscall"
			 : "=a"(r)
			 : "a"(n), "D"(a1), "S"(a2), "d"(a3), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	if (r < 0 && r > -4096) {
		errno = (int)-r;
		return -1;
	}
	return r;
}

long sandbox_syscall(long n, long a1, long a2, long a3)
{
	if (next_syscall)
		return next_syscall(n, a1, a2, a3, 0, 0, 0);
	return raw(n, a1, a2, a3, 0, 0, 0);
}

VIS int prctl(int option, ...)
{
	unsigned long a2, a3, a4, a5;
	va_list ap;

	va_start(ap, option);
	a2 = va_arg(ap, unsigned long);
	a3 = va_arg(ap, unsigned long);
	a4 = va_arg(ap, unsigned long);
	a5 = va_arg(ap, unsigned long);
	va_end(ap);
	if (option == PR_SET_SECCOMP && (a2 == SECCOMP_MODE_FILTER || a2 == SECCOMP_MODE_STRICT))
		enter();
	if (next_prctl)
		return next_prctl(option, a2, a3, a4, a5);
	return (int)raw(SYS_prctl, option, (long)a2, (long)a3, (long)a4, (long)a5, 0);
}

VIS long syscall(long n, ...)
{
	long a[6];
	va_list ap;

	va_start(ap, n);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if ((n == SYS_seccomp &&
	     (a[0] == SECCOMP_SET_MODE_FILTER || a[0] == SECCOMP_SET_MODE_STRICT)) ||
	    (n == SYS_prctl && a[0] == PR_SET_SECCOMP &&
	     (a[1] == SECCOMP_MODE_FILTER || a[1] == SECCOMP_MODE_STRICT)))
		enter();
	/* Passed on as the system call it is (not libc's close, which is
	 * a cancellation point): the collectors' own close their temporary
	 * descriptors this way. */
	if (n == SYS_close && fds_refused((int)a[0]))
		return -1;
	if (n == SYS_close_range)
		return fds_prog_close_range((unsigned int)a[0], (unsigned int)a[1], (int)a[2], 1);
	if (next_syscall)
		return next_syscall(n, a[0], a[1], a[2], a[3], a[4], a[5]);
	return raw(n, a[0], a[1], a[2], a[3], a[4], a[5]);
}
