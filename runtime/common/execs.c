/*
 * execs.c - owns the collectors' execve, execv, execvp, execvpe, execl,
 * execle, execlp, fexecve and execveat: each has its collector save the
 * image's profile aside if it spent EXECS_SAVE_CPU_NS (rt_exec_save,
 * execs_aside: a shell's loop before `exec prog` was lost, replaced by
 * prog's profile), tells the keep (keep.h) the image is going
 * (keep_exec) before the real call, and, if the call fails, that it
 * stays (the file aside removed).  Without that, a program exec'd by the process a
 * launcher started, that no runtime of ours enters (a set-user-ID one, a
 * static one), would leave the old image's tables in the keep, and the
 * launcher would write them as its profile.  glibc's exec functions call
 * their system call directly, not each other: each is interposed.  A
 * system call made by hand (Go's syscall.Exec) passes none of these: a
 * new image with a runtime of ours takes the root's keep, or sends one of
 * its own (keep.c's image_keep); one without leaves the launcher what the
 * old image left (doc/runtime.md).
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <time.h>
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

/* The process's CPU time when this image began (a forked child's clock
 * starts at 0), and the images saved aside without a keep. */
static uint64_t image_cpu0;
static int image_saves;
/* The file saved aside for the exec under way (execs_wrote), and whether
 * its number came from the keep: both given back if the exec fails. */
static char aside_path[PATH_MAX + 64];
static int aside_keep;

static uint64_t cpu_now(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) < 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void image_forked(void)
{
	image_cpu0 = 0;
	image_saves = 0;
}

__attribute__((constructor)) void execs_init(void)
{
	static int once;

	for (int i = 0; i < X_N; i++)
		if (!__atomic_load_n(&x_real[i], __ATOMIC_ACQUIRE))
			__atomic_store_n(&x_real[i], dlsym(RTLD_NEXT, x_name[i]), __ATOMIC_RELEASE);
	if (!__atomic_exchange_n(&once, 1, __ATOMIC_ACQ_REL)) {
		int e = errno;

		image_cpu0 = cpu_now();
		pthread_atfork(NULL, NULL, image_forked);
		errno = e;
	}
}

/* n as decimal digits at p (cap bytes, n's digits fit). */
static void put_num(char *p, unsigned n)
{
	char d[12];
	int k = 0;

	do
		d[k++] = (char)('0' + n % 10);
	while ((n /= 10) && k < 11);
	while (k)
		*p++ = d[--k];
	*p = 0;
}

int execs_aside(const char *path, char *suffix, size_t scap, char *ended, size_t ecap)
{
	int e = errno, n;
	uint64_t now = cpu_now();

	aside_path[0] = 0;
	/* A path that cannot be run: the exec will fail (Python's execvp
	 * tries execv in every directory of PATH in turn). */
	if (now < image_cpu0 + EXECS_SAVE_CPU_NS || scap < 18 || ecap < 16 ||
	    (path && strchr(path, '/') && access(path, X_OK) != 0)) {
		errno = e;
		return 0;
	}
	errno = e;
	aside_keep = (n = keep_exec_number()) > 0;
	if (!aside_keep)
		n = ++image_saves;
	strcpy(suffix, ".exec");
	put_num(suffix + 5, (unsigned)n);
	strcpy(ended, "exec'd ");
	strncat(ended, path ? path : "?", ecap - 8);
	return 1;
}

void execs_wrote(const char *path)
{
	if (strlen(path) < sizeof aside_path)
		strcpy(aside_path, path);
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

/* The call failed (it returned): the image stays, and records on; the
 * file saved aside for it goes, and its number with it. */
static int failed(int rc)
{
	int e = errno;

	if (aside_path[0]) {
		unlink(aside_path);
		aside_path[0] = 0;
		if (aside_keep)
			keep_exec_number_back();
		else if (image_saves > 0)
			image_saves--;
	}
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
	rt_exec_save(path);
	keep_exec(path);
	return failed(real_(path, argv, envp));
}

VIS int execv(const char *path, char *const argv[])
{
	NEXT(execv_fn, X_EXECV);
	rt_exec_save(path);
	keep_exec(path);
	return failed(real_(path, argv));
}

VIS int execvp(const char *file, char *const argv[])
{
	NEXT(execv_fn, X_EXECVP);
	rt_exec_save(file);
	keep_exec(file);
	return failed(real_(file, argv));
}

VIS int execvpe(const char *file, char *const argv[], char *const envp[])
{
	NEXT(execve_fn, X_EXECVPE);
	rt_exec_save(file);
	keep_exec(file);
	return failed(real_(file, argv, envp));
}

VIS int fexecve(int fd, char *const argv[], char *const envp[])
{
	NEXT(fexecve_fn, X_FEXECVE);
	rt_exec_save("(a descriptor: fexecve)");
	keep_exec("(a descriptor: fexecve)");
	return failed(real_(fd, argv, envp));
}

VIS int execveat(int dirfd, const char *path, char *const argv[], char *const envp[], int flags)
{
	NEXT(execveat_fn, X_EXECVEAT);
	rt_exec_save(path);
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
