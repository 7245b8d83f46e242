/*
 * launch.c - run a program with a profiler library preloaded (launch.h).
 */
#include "launch.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

int launch_is_elf(const char *path)
{
	char magic[4];
	const char *why;
	int fd = util_open_file(path, &why); /* a FIFO must not block us */
	ssize_t n;

	if (fd < 0)
		return 0;
	n = read(fd, magic, sizeof(magic));
	close(fd);
	return n == 4 && memcmp(magic, "\177ELF", 4) == 0;
}

/* 1 if path is a regular file, opened to be sure (no FIFO, no device). */
static int regular(const char *path, const char **why)
{
	int fd = util_open_file(path, why);

	if (fd < 0)
		return 0;
	close(fd);
	return 1;
}

static int copy_path(char *buf, size_t len, const char *a, const char *b, const char **why)
{
	if ((size_t)snprintf(buf, len, "%s%s%s", a, b ? "/" : "", b ? b : "") >= len) {
		*why = strerror(ENAMETOOLONG);
		return -1;
	}
	return 0;
}

int launch_find_exe(const char *name, const char *recorded, char *buf, size_t len,
		    const char **why)
{
	const char *path = getenv("PATH"), *slash;
	struct stat st;

	/* A bare name is a file here only if it is a regular one: a
	 * directory of that name must not hide the program (git/, say). */
	if (strchr(name, '/') || (stat(name, &st) == 0 && S_ISREG(st.st_mode))) {
		if (!regular(name, why))
			return -1;
		return copy_path(buf, len, name, NULL, why);
	}
	*why = strerror(ENOENT);
	slash = recorded ? strrchr(recorded, '/') : NULL;
	if (slash && strcmp(slash + 1, name) == 0 && regular(recorded, why))
		return copy_path(buf, len, recorded, NULL, why);
	/* As execvp: an empty PATH entry is the current directory; unset,
	 * the default search path. */
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (const char *p = path;; p++) {
		const char *end = strchrnul(p, ':');
		char dir[PATH_MAX];

		if ((size_t)(end - p) < sizeof(dir)) {
			memcpy(dir, p, (size_t)(end - p));
			dir[end - p] = 0;
			if (copy_path(buf, len, dir[0] ? dir : ".", name, why) == 0 &&
			    access(buf, X_OK) == 0 && regular(buf, why))
				return 0;
		}
		if (!*end)
			break;
		p = end;
	}
	*why = strerror(ENOENT);
	return -1;
}

void launch_operands(const char *const args[], int nargs, const char **exe, const char **data)
{
	char path[PATH_MAX];
	const char *why;

	if (nargs == 2) {
		*exe = args[0];
		*data = args[1];
	} else if (nargs == 1) {
		if (launch_find_exe(args[0], NULL, path, sizeof(path), &why) == 0 && launch_is_elf(path))
			*exe = args[0];
		else
			*data = args[0];
	}
}

/* $lib_env, else ../lib/lib_name beside this program (build and install
 * trees alike). */
static int find_lib(const struct launch *l, char *buf, size_t len, char *err, size_t errlen)
{
	const char *env = getenv(l->lib_env);
	char self[PATH_MAX];
	ssize_t n;
	char *slash;

	if (env && *env) {
		snprintf(buf, len, "%s", env);
		return 0;
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n < 0) {
		snprintf(err, errlen, "cannot find myself: /proc/self/exe: %s", strerror(errno));
		return -1;
	}
	self[n] = 0;
	slash = strrchr(self, '/');
	if (slash)
		*slash = 0;
	if ((size_t)snprintf(buf, len, "%s/../lib/%s", self, l->lib_name) >= len) {
		snprintf(err, errlen, "the path of %s is too long", l->lib_name);
		return -1;
	}
	return 0;
}

static int same_file_state(const struct stat *a, const struct stat *b)
{
	return a->st_ino == b->st_ino && a->st_mtim.tv_sec == b->st_mtim.tv_sec &&
	       a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

/* Whether environment entry e is NAME=... */
static int env_is(const char *e, const char *name)
{
	size_t n = strlen(name);

	return strncmp(e, name, n) == 0 && e[n] == '=';
}

/* "NAME=VALUE", or NULL: out of memory. */
static char *env_entry(const char *name, const char *value)
{
	size_t n = strlen(name) + strlen(value) + 2;
	char *s = malloc(n);

	if (s)
		snprintf(s, n, "%s=%s", name, value);
	return s;
}

/*
 * vfork and exec argv[0] (PATH searched) with envp: the child's pid, or -1
 * (errno).  The child writes only its pid's digits at pid_at (room made by
 * the caller) and, when the exec fails, *exec_errno; it never returns from
 * here.
 */
static __attribute__((noinline)) pid_t start(char *const argv[], char **envp, char *pid_at,
					     volatile int *exec_errno)
{
	pid_t pid = vfork();

	if (pid == 0) {
		char digits[24];
		int nd = 0, i = 0;
		unsigned long v = (unsigned long)getpid();

		do
			digits[nd++] = (char)('0' + v % 10);
		while ((v /= 10) && nd < (int)sizeof(digits));
		while (nd)
			pid_at[i++] = digits[--nd];
		pid_at[i] = 0;
		execvpe(argv[0], argv, envp);
		*exec_errno = errno;
		_exit(127);
	}
	return pid;
}

/*
 * Start argv[0] (searched in PATH) in *pid, with this environment where
 * LD_PRELOAD, the output and pid variables and l->env are replaced.  -1
 * with err when nothing could be tried; *pid = -1 when argv[0] could not
 * be run (said on stderr).
 *
 * vfork, not fork: a fork copies the page tables of this process, which
 * maps libdw and its dependencies, and that was half of what `mprof run`
 * added to a short program's run.  The child shares our memory until it
 * execs, so everything is made before: the environment, with room for the
 * pid, which only the child knows; the child then writes only that buffer
 * and the errno of a failed exec.
 */
static int spawn(const struct launch *l, char *const argv[], const char *preload,
		 const char *outabs, pid_t *pid, char *err, size_t errlen)
{
	extern char **environ;
	int exec_errno = 0, rc = -1;
	size_t n = 0, k = 0, kept = 0, nextra = 3;
	char **envp, *pidvar;

	for (char **e = environ; e && *e; e++)
		n++;
	for (const char *const *e = l->env; e && e[0]; e += 2)
		nextra++;
	envp = calloc(n + nextra + 1, sizeof(*envp));
	pidvar = env_entry(l->pid_env, "0000000000000000000000"); /* room for a pid */
	if (!envp || !pidvar) {
		snprintf(err, errlen, "out of memory");
		free(pidvar);
		goto done;
	}
	for (char **e = environ; e && *e; e++) {
		int drop = env_is(*e, "LD_PRELOAD") || env_is(*e, l->out_env) ||
			   env_is(*e, l->pid_env);
		for (const char *const *x = l->env; !drop && x && x[0]; x += 2)
			drop = env_is(*e, x[0]);
		if (!drop)
			envp[k++] = *e;
	}
	kept = k; /* envp[kept..k) are ours to free */
	envp[k++] = pidvar;
	envp[k++] = env_entry("LD_PRELOAD", preload);
	envp[k++] = env_entry(l->out_env, outabs);
	for (const char *const *x = l->env; x && x[0]; x += 2)
		envp[k++] = env_entry(x[0], x[1]);
	for (size_t i = kept; i < k; i++)
		if (!envp[i]) {
			snprintf(err, errlen, "out of memory");
			goto done;
		}
	fflush(NULL);
	*pid = start(argv, envp, pidvar + strlen(l->pid_env) + 1, &exec_errno);
	if (*pid < 0) {
		snprintf(err, errlen, "vfork: %s", strerror(errno));
		goto done;
	}
	if (exec_errno) {
		/* The child ended; it ran nothing. */
		waitpid(*pid, NULL, 0);
		errx_("%s: cannot run %s: %s", l->what, argv[0], strerror(exec_errno));
		*pid = -1;
	}
	rc = 0;
done:
	for (size_t i = kept; envp && i < k; i++)
		free(envp[i]);
	free(envp);
	return rc;
}

int launch_run(const struct launch *l, char *const argv[], char *err, size_t errlen)
{
	char lib[PATH_MAX], outabs[PATH_MAX], preload[2 * PATH_MAX + 2], cwd[PATH_MAX];
	const char *old = getenv("LD_PRELOAD");
	struct stat before, after;
	int status, had;
	pid_t pid;

	if (find_lib(l, lib, sizeof(lib), err, errlen) < 0)
		return -1;
	if (access(lib, R_OK) != 0) {
		snprintf(err, errlen, "cannot read the library %s: %s", lib, strerror(errno));
		return -1;
	}
	if (l->out[0] == '/' || !getcwd(cwd, sizeof(cwd)))
		cwd[0] = 0;
	if ((size_t)snprintf(outabs, sizeof(outabs), "%s%s%s", cwd, cwd[0] ? "/" : "", l->out) >=
	    sizeof(outabs)) {
		snprintf(err, errlen, "output file name too long: %s", l->out);
		return -1;
	}
	snprintf(preload, sizeof(preload), "%s%s%s", lib, old && *old ? ":" : "", old ? old : "");
	had = stat(outabs, &before) == 0;

	if (spawn(l, argv, preload, outabs, &pid, err, errlen) < 0)
		return -1;
	if (pid < 0)
		return 127; /* said why */
	/* The program owns the terminal's signals; we only wait for it. */
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			snprintf(err, errlen, "waitpid: %s", strerror(errno));
			return -1;
		}
	/* 127: it could not be run (said above), or says so itself. */
	if (!(WIFEXITED(status) && WEXITSTATUS(status) == 127) &&
	    (stat(outabs, &after) != 0 || (had && same_file_state(&before, &after))))
		errx_("%s: %s wrote no profile to %s (%s)", l->what, argv[0], outabs,
		      WIFSIGNALED(status) ? "it was killed by a signal"
					  : "statically linked, or it ended in _exit");
	if (WIFSIGNALED(status)) {
		signal(WTERMSIG(status), SIG_DFL);
		raise(WTERMSIG(status));
		return 128 + WTERMSIG(status);
	}
	return WEXITSTATUS(status);
}
