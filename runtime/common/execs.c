/*
 * execs.c - owns the collectors' execve, execv, execvp, execvpe, execl,
 * execle, execlp, fexecve and execveat: each tells the keep (keep.h) the
 * image is going (keep_exec) before the real call and that it stays if
 * the call fails.  Without that, a program exec'd by the process a
 * launcher started, that no runtime of ours enters (a set-user-ID one, a
 * static one), would leave the old image's tables in the keep, and the
 * launcher would write them as its profile.  glibc's exec functions call
 * their system call directly, not each other: each is interposed.  A
 * system call made by hand (Go's syscall.Exec) passes none of these: the
 * launcher then writes what the old image left (doc/runtime.md).
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <unistd.h>

#include "execs.h"
#include "keep.h"

#define VIS __attribute__((visibility("default")))
/* Arguments of execl, execle, execlp at most (the kernel's limit on the
 * whole is ARG_MAX; a list this long is an error there too). */
#define EXECS_MAX_ARGS 65536

typedef int execve_fn(const char *, char *const[], char *const[]);
typedef int execv_fn(const char *, char *const[]);
typedef int fexecve_fn(int, char *const[], char *const[]);
typedef int execveat_fn(int, const char *, char *const[], char *const[], int);

/* The real functions, found when the library is loaded: a first call
 * may come in a vfork child or a signal handler, where dlsym (the
 * loader's lock, maybe malloc) has no business. */
enum { X_EXECVE, X_EXECV, X_EXECVP, X_EXECVPE, X_FEXECVE, X_EXECVEAT, X_N };
static const char *const x_name[X_N] = { "execve", "execv", "execvp",
					 "execvpe", "fexecve", "execveat" };
static void *x_real[X_N];

__attribute__((constructor)) void execs_init(void)
{
	for (int i = 0; i < X_N; i++)
		if (!__atomic_load_n(&x_real[i], __ATOMIC_ACQUIRE))
			__atomic_store_n(&x_real[i], dlsym(RTLD_NEXT, x_name[i]), __ATOMIC_RELEASE);
}

static void *next(int i)
{
	void *f = __atomic_load_n(&x_real[i], __ATOMIC_ACQUIRE);

	if (!f) { /* a call before the constructors ran */
		f = dlsym(RTLD_NEXT, x_name[i]);
		__atomic_store_n(&x_real[i], f, __ATOMIC_RELEASE);
	}
	return f;
}

/* The call failed (it returned): the image stays. */
static int failed(int rc)
{
	int e = errno;

	keep_exec_failed();
	errno = e;
	return rc;
}

#define NEXT(type, i)                                    \
	type *real_ = (type *)next(i);                   \
	if (!real_) {                                    \
		errno = ENOSYS;                          \
		return -1;                               \
	}

VIS int execve(const char *path, char *const argv[], char *const envp[])
{
	NEXT(execve_fn, X_EXECVE);
	keep_exec(path);
	return failed(real_(path, argv, envp));
}

VIS int execv(const char *path, char *const argv[])
{
	NEXT(execv_fn, X_EXECV);
	keep_exec(path);
	return failed(real_(path, argv));
}

VIS int execvp(const char *file, char *const argv[])
{
	NEXT(execv_fn, X_EXECVP);
	keep_exec(file);
	return failed(real_(file, argv));
}

VIS int execvpe(const char *file, char *const argv[], char *const envp[])
{
	NEXT(execve_fn, X_EXECVPE);
	keep_exec(file);
	return failed(real_(file, argv, envp));
}

VIS int fexecve(int fd, char *const argv[], char *const envp[])
{
	NEXT(fexecve_fn, X_FEXECVE);
	keep_exec("(a descriptor: fexecve)");
	return failed(real_(fd, argv, envp));
}

VIS int execveat(int dirfd, const char *path, char *const argv[], char *const envp[], int flags)
{
	NEXT(execveat_fn, X_EXECVEAT);
	keep_exec(path);
	return failed(real_(dirfd, path, argv, envp, flags));
}

/* The list of arg0, ... up to NULL, counted: n, or -1 (too many). */
static int count_args(va_list ap)
{
	int n = 0;

	while (va_arg(ap, char *))
		if (++n >= EXECS_MAX_ARGS)
			return -1;
	return n;
}

/* execl, execle, execlp: the list into an array on the stack (no
 * allocation: this may be a vfork child), then the vector call. */
#define LIST(argv, arg0, ap, n)                          \
	va_start(ap, arg0);                              \
	n = count_args(ap);                              \
	va_end(ap);                                      \
	if (n < 0) {                                     \
		errno = E2BIG;                           \
		return -1;                               \
	}                                                \
	char *argv[n + 2];                               \
	argv[0] = (char *)arg0;                          \
	va_start(ap, arg0);                              \
	for (int i_ = 1; i_ <= n; i_++)                  \
		argv[i_] = va_arg(ap, char *);           \
	argv[n + 1] = NULL

VIS int execl(const char *path, const char *arg0, ...)
{
	const char *volatile a0 = arg0; /* glibc declares it nonnull; it may be NULL */
	va_list ap;
	int n;

	if (!a0) {
		char *none[] = { NULL };
		return execv(path, none);
	}
	LIST(argv, arg0, ap, n);
	va_end(ap);
	return execv(path, argv);
}

VIS int execlp(const char *file, const char *arg0, ...)
{
	const char *volatile a0 = arg0;
	va_list ap;
	int n;

	if (!a0) {
		char *none[] = { NULL };
		return execvp(file, none);
	}
	LIST(argv, arg0, ap, n);
	va_end(ap);
	return execvp(file, argv);
}

VIS int execle(const char *path, const char *arg0, ...)
{
	const char *volatile a0 = arg0;
	va_list ap;
	char *const *envp;
	int n;

	if (!a0) {
		va_start(ap, arg0);
		envp = va_arg(ap, char *const *);
		va_end(ap);
		char *none[] = { NULL };
		return execve(path, none, envp);
	}
	LIST(argv, arg0, ap, n);
	(void)va_arg(ap, char *); /* the NULL that ends the list */
	envp = va_arg(ap, char *const *);
	va_end(ap);
	return execve(path, argv, envp);
}
