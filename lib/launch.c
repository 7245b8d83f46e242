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
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return 0;
	n = read(fd, magic, sizeof(magic));
	close(fd);
	return n == 4 && memcmp(magic, "\177ELF", 4) == 0;
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

	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		snprintf(err, errlen, "fork: %s", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		char pidbuf[32];
		snprintf(pidbuf, sizeof(pidbuf), "%d", (int)getpid());
		setenv("LD_PRELOAD", preload, 1);
		setenv(l->out_env, outabs, 1);
		setenv(l->pid_env, pidbuf, 1);
		for (const char *const *e = l->env; e && e[0]; e += 2)
			setenv(e[0], e[1], 1);
		execvp(argv[0], argv);
		fprintf(stderr, "%s: %s: cannot run %s: %s\n", util_progname, l->what,
			argv[0], strerror(errno));
		_exit(127);
	}
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
		fprintf(stderr, "%s: %s: %s wrote no profile to %s (%s)\n", util_progname,
			l->what, argv[0], outabs,
			WIFSIGNALED(status) ? "it was killed by a signal"
					    : "statically linked, or it ended in _exit");
	if (WIFSIGNALED(status)) {
		signal(WTERMSIG(status), SIG_DFL);
		raise(WTERMSIG(status));
		return 128 + WTERMSIG(status);
	}
	return WEXITSTATUS(status);
}
