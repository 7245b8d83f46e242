/*
 * launch.c - run a program with a profiler library preloaded (launch.h).
 */
#include "run/keeper.h"
#include "format/keepfmt.h"
#include "run/launch.h"
#include "base/util.h"

#include <dirent.h>
#include <errno.h>
#include <gelf.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
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
	/* Found nowhere: a file of the name here that is not a regular one
	 * (a FIFO) says so, not "No such file or directory". */
	if (stat(name, &st) == 0 && !S_ISDIR(st.st_mode))
		regular(name, why);
	else
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
/*
 * Signals sent to the launcher are the program's: a supervisor that sends
 * SIGTERM to the pid it started, or `kill -HUP` from another terminal,
 * meant the program, and the launcher must live on to write the profile
 * (it died of them, leaving the program running and no profile).  A
 * signal a process sent is relayed; the kernel's (a terminal's ^C and
 * hang-up, sent to the whole foreground group) is not: the program got
 * it too.  A process that signals the whole group (timeout) reaches the
 * program twice at once, and a signal already pending is not queued
 * again: it gets one.  (sudo relays none from the program's own process
 * group: here that would drop a script's `kill $!` of its background
 * job, which shares the script's group.)
 */
static volatile sig_atomic_t relay_pid;

static void relay(int sig, siginfo_t *si, void *uc)
{
	int e = errno;
	pid_t pid = relay_pid;
	siginfo_t alive = { 0 };

	(void)uc;
	/* Only to our child, still running: not to a pid reused once it was
	 * reaped, nor from a process forked from us (keeper.c's linger). */
	if (pid > 0 && si->si_code <= 0 && si->si_pid != pid &&
	    waitid(P_PID, (id_t)pid, &alive, WEXITED | WNOHANG | WNOWAIT) == 0 && !alive.si_pid)
		kill(pid, sig);
	errno = e;
}

static const int relayed[] = { SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2, SIGALRM };
static sigset_t relay_mask_before; /* the program's mask: the child's before it execs */

/* Before the program starts: the signals above wait, held, until
 * relay_to; the child gives the mask back before it execs. */
static void relay_hold(void)
{
	sigset_t hold;

	sigemptyset(&hold);
	for (size_t i = 0; i < sizeof relayed / sizeof *relayed; i++)
		sigaddset(&hold, relayed[i]);
	sigprocmask(SIG_BLOCK, &hold, &relay_mask_before);
}

/* From now on, the signals above go to pid (pid <= 0: none started), and
 * those that came meanwhile go now.  The program's dispositions are its
 * own: a caught signal is the default again in the program it execs. */
static void relay_to(pid_t pid)
{
	struct sigaction sa;

	relay_pid = pid;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = relay;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; pid > 0 && i < sizeof relayed / sizeof *relayed; i++)
		sigaction(relayed[i], &sa, NULL);
	sigprocmask(SIG_SETMASK, &relay_mask_before, NULL);
}

static __attribute__((noinline)) pid_t start(char *const argv[], char **envp, char *pid_at,
					     const struct keeper *kp, volatile int *exec_errno)
{
	pid_t pid = vfork();

	if (pid == 0) {
		keeper_child(kp);
		char digits[24];
		int nd = 0, i = 0;
		unsigned long v = (unsigned long)getpid();

		do
			digits[nd++] = (char)('0' + v % 10);
		while ((v /= 10) && nd < (int)sizeof(digits));
		while (nd)
			pid_at[i++] = digits[--nd];
		pid_at[i] = 0;
		sigprocmask(SIG_SETMASK, &relay_mask_before, NULL);
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
 * be found, -2 when it could not be run (said on stderr).
 *
 * vfork, not fork: a fork copies the page tables of this process, which
 * maps libdw and its dependencies, and that was half of what `mprof run`
 * added to a short program's run.  The child shares our memory until it
 * execs, so everything is made before: the environment, with room for the
 * pid, which only the child knows; the child then writes only that buffer
 * and the errno of a failed exec.
 */
static int spawn(const struct launch *l, char *const argv[], const char *preload,
		 const char *outabs, const struct keeper *kp, pid_t *pid, char *err, size_t errlen)
{
	extern char **environ;
	int exec_errno = 0, rc = -1;
	size_t n = 0, k = 0, kept = 0, nextra = 4;
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
			   env_is(*e, l->pid_env) || (l->keep_env && env_is(*e, l->keep_env));
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
	if (l->keep_env && kp->fd >= 0)
		envp[k++] = env_entry(l->keep_env, kp->env);
	for (size_t i = kept; i < k; i++)
		if (!envp[i]) {
			snprintf(err, errlen, "out of memory");
			goto done;
		}
	fflush(NULL);
	*pid = start(argv, envp, pidvar + strlen(l->pid_env) + 1, kp, &exec_errno);
	if (*pid < 0) {
		snprintf(err, errlen, "vfork: %s", strerror(errno));
		goto done;
	}
	if (exec_errno) {
		/* The child ended; it ran nothing. */
		waitpid(*pid, NULL, 0);
		errx_("%s: cannot run %s: %s", l->what, argv[0], strerror(exec_errno));
		/* As shells say it: 127 not found, 126 found but not runnable
		 * (a directory, no execute permission). */
		*pid = exec_errno == ENOENT || exec_errno == ENOTDIR ? -1 : -2;
	}
	rc = 0;
done:
	for (size_t i = kept; envp && i < k; i++)
		free(envp[i]);
	free(envp);
	return rc;
}

/* Whether ELF e exports a definition of malloc (.dynsym): an allocator
 * linked into the program, which takes the calls the preload would. */
static int defines_malloc(Elf *e)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || !sh.sh_entsize ||
		    !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *name;

			if (!gelf_getsym(d, (int)i, &sym) || sym.st_shndx == SHN_UNDEF ||
			    GELF_ST_TYPE(sym.st_info) != STT_FUNC)
				continue;
			name = elf_strptr(e, sh.sh_link, sym.st_name);
			if (name && !strcmp(name, "malloc"))
				return 1;
		}
	}
	return 0;
}

/*
 * Why the program's runtime never started, for a program the loader runs
 * without the preload: statically linked (no PT_INTERP: no loader), or
 * run in secure-execution mode (set-user-ID or set-group-ID for someone
 * else, or file capabilities), where the loader ignores LD_PRELOAD.  A
 * script is judged by its interpreter.
 */
static const char *why_unloaded(const char *name, const struct launch *l, char *buf, size_t len)
{
	char path[PATH_MAX], line[PATH_MAX];
	const char *why;
	struct stat st;
	int fd, depth;
	ssize_t n;

	if (launch_find_exe(name, NULL, path, sizeof path, &why) < 0)
		goto plain;
	for (depth = 0; depth < 4; depth++) {
		if ((fd = util_open_file(path, &why)) < 0)
			goto plain;
		n = read(fd, line, sizeof line - 1);
		if (n > 2 && line[0] == '#' && line[1] == '!') {
			char *p = line + 2, *e;

			close(fd);
			line[n] = 0;
			while (*p == ' ' || *p == '\t')
				p++;
			e = p + strcspn(p, " \t\n");
			*e = 0;
			snprintf(path, sizeof path, "%s", p);
			continue;
		}
		break;
	}
	if (depth == 4)
		goto plain;
	if (fstat(fd, &st) == 0 &&
	    (((st.st_mode & S_ISUID) && st.st_uid != geteuid()) ||
	     ((st.st_mode & S_ISGID) && st.st_gid != getegid()))) {
		close(fd);
		snprintf(buf, len,
			 "%s is set-%s-ID: the loader runs it in secure-execution mode and ignores "
			 "LD_PRELOAD",
			 path, (st.st_mode & S_ISUID) && st.st_uid != geteuid() ? "user" : "group");
		return buf;
	}
	if (elf_version(EV_CURRENT) != EV_NONE) {
		Elf *e = elf_begin(fd, ELF_C_READ, NULL);
		size_t ph = 0;
		int interp = 0, elf = e && elf_kind(e) == ELF_K_ELF;

		if (elf && elf_getphdrnum(e, &ph) == 0)
			for (size_t i = 0; i < ph; i++) {
				GElf_Phdr p;
				if (gelf_getphdr(e, (int)i, &p) && p.p_type == PT_INTERP)
					interp = 1;
			}
		if (elf && interp && !strcmp(l->lib_name, "libmprof.so") && defines_malloc(e)) {
			elf_end(e);
			close(fd);
			snprintf(buf, len,
				 "%s defines malloc itself (an allocator linked into it): no allocation "
				 "reaches %s",
				 path, l->lib_name);
			return buf;
		}
		if (e)
			elf_end(e);
		if (elf && !interp) {
			close(fd);
			snprintf(buf, len, "%s is statically linked: no loader runs to preload %s%s",
				 path, l->lib_name,
				 strcmp(l->lib_name, "libmprof.so") ? ""
								    : " (link it with libmprof.a)");
			return buf;
		}
	}
	close(fd);
plain:
	snprintf(buf, len,
		 "its runtime never started: %s was not loaded (LD_PRELOAD removed from the "
		 "environment, or an exec into a program that does not load it)",
		 l->lib_name);
	return buf;
}

/* Whether the file at path was (re)written during the run by someone other
 * than the runtime whose keep says it last wrote (dev, ino): a program the
 * root exec'd, whose runtime had no keep. */
static int written_by_other(int had, const struct stat *before, const struct stat *after,
			    const struct keep_head *h)
{
	if (had && same_file_state(before, after))
		return 0;
	return !(h->saves && (uint64_t)after->st_dev == h->file_dev &&
		 (uint64_t)after->st_ino == h->file_ino);
}

/* Is name (in out's folder) the file of another process or image of the
 * run out is for: base.PID, base.execN, base.PID.execN? */
static int other_file(const char *name, const char *base)
{
	size_t n = strlen(base);
	const char *p;

	if (strncmp(name, base, n) != 0 || name[n] != '.')
		return 0;
	p = name + n + 1;
	if (*p >= '0' && *p <= '9') {
		p += strspn(p, "0123456789");
		if (!*p)
			return 1;
		if (*p++ != '.')
			return 0;
	}
	if (strncmp(p, "exec", 4) != 0 || !p[4])
		return 0;
	return strspn(p + 4, "0123456789") == strlen(p + 4);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * After the run: the files of other processes (forked children, images
 * before an exec) it wrote beside out, written since t0: how many, the
 * first few by name, and how to read them together.  A pyenv shim's run
 * left 40 with no word about them.  Only to a terminal: a script's or a
 * pipeline's stderr gets nothing but the program's.
 */
static void note_others(const struct launch *l, const char *outabs, const struct timespec *t0)
{
	char dir[PATH_MAX + 16], **names = NULL;
	const char *base = strrchr(outabs, '/') ? strrchr(outabs, '/') + 1 : outabs;
	/* Names as the user gave -o: with its folder, if it had one. */
	const char *given = strrchr(l->out, '/') ? strrchr(l->out, '/') + 1 : l->out;
	int dirlen = (int)(given - l->out);
	size_t n = 0, cap = 0;
	struct dirent *e;
	DIR *d;

	snprintf(dir, sizeof dir, "%.*s", base > outabs ? (int)(base - outabs) : 1,
		 base > outabs ? outabs : ".");
	if (!*base || !isatty(STDERR_FILENO) || !(d = opendir(dir)))
		return;
	while ((e = readdir(d))) {
		struct stat st;
		char path[PATH_MAX + NAME_MAX + 32];

		if (!other_file(e->d_name, base))
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) ||
		    st.st_mtim.tv_sec < t0->tv_sec ||
		    (st.st_mtim.tv_sec == t0->tv_sec && st.st_mtim.tv_nsec < t0->tv_nsec))
			continue;
		if (n == cap)
			names = xrealloc(names, (cap = cap ? 2 * cap : 16) * sizeof *names);
		names[n++] = xstrdup(e->d_name);
	}
	closedir(d);
	if (!n)
		return;
	qsort(names, n, sizeof *names, by_name);
	if (n == 1)
		errx_("%s: also wrote %.*s%s, the profile of another process of the run (a forked child, "
		      "or the image before an exec): '%s %.*s%s' reads it",
		      l->what, dirlen, l->out, names[0], util_progname, dirlen, l->out, names[0]);
	else
		errx_("%s: also wrote %zu profiles of other processes of the run (forked children, "
		      "images before an exec): %.*s%s, %.*s%s%s%s; '%s FILE' reads one, '%s merge' "
		      "joins those of one program",
		      l->what, n, dirlen, l->out, names[0], dirlen, l->out, names[1],
		      n > 2 ? ", " : "", n > 2 ? "..." : "", util_progname, util_progname);
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

int launch_run(const struct launch *l, char *const argv[], char *err, size_t errlen)
{
	char lib[PATH_MAX], outabs[PATH_MAX], preload[2 * PATH_MAX + 2], cwd[PATH_MAX];
	char why[4600];
	const char *old = getenv("LD_PRELOAD");
	struct stat before, after;
	struct keeper kp = { .fd = -1, .sock = -1, .sock_theirs = -1, .child_sock = -1 };
	struct keep_head h;
	struct timespec t0;
	int status, had, wrote, salvaged = 0, damaged;
	uint64_t oom;
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
	/* A file that cannot be written is said before the run, not after
	 * it (the whole program ran, then the save failed). */
	{
		char dir[PATH_MAX + 16];
		char *slash;

		snprintf(dir, sizeof dir, "%s", outabs);
		slash = strrchr(dir, '/');
		if (slash == dir)
			slash[1] = 0;
		else if (slash)
			*slash = 0;
		if (slash && access(dir, W_OK | X_OK) != 0) {
			snprintf(err, errlen, "cannot write %s: %s: %s", l->out, dir, strerror(errno));
			return -1;
		}
		if (stat(outabs, &before) == 0 && S_ISDIR(before.st_mode)) {
			snprintf(err, errlen, "cannot write %s: it is a directory (-o names the file)",
				 l->out);
			return -1;
		}
	}
	snprintf(preload, sizeof(preload), "%s%s%s", lib, old && *old ? ":" : "", old ? old : "");
	had = stat(outabs, &before) == 0;
	/* Read below whether or not there is a keep: none is state WAITING
	 * with no magic. */
	memset(&h, 0, sizeof h);
	/* No memfd (an old kernel, a sandbox): the run goes on, and a
	 * program that dies loses its profile as it did before the keep. */
	if (l->keep_env && keeper_make(&kp) < 0)
		kp.fd = -1;
	oom = keeper_oom_kills();
	/* The clock file times are stamped by: a file written after this is
	 * not older. */
	clock_gettime(CLOCK_REALTIME_COARSE, &t0);

	relay_hold();
	if (spawn(l, argv, preload, outabs, &kp, &pid, err, errlen) < 0) {
		relay_to(0);
		keeper_close(&kp);
		return -1;
	}
	relay_to(pid);
	if (pid < 0) {
		keeper_close(&kp);
		return pid == -2 ? 126 : 127; /* said why */
	}
	if (keeper_wait(&kp, pid, &status, outabs, l->what) < 0) {
		snprintf(err, errlen, "waitpid: %s", strerror(errno));
		keeper_close(&kp);
		return -1;
	}
	wrote = stat(outabs, &after) == 0 && !(had && same_file_state(&before, &after));
	damaged = kp.fd >= 0 && keeper_head(&kp, &h) < 0;
	/* The runtime left its tables recording: the program ended without
	 * its save (a signal, _exit, exit_group).  Unless a program it exec'd
	 * wrote the file since, write it from the keep. */
	if (h.state == KEEP_RECORDING && h.pid == (int32_t)pid &&
	    !(wrote && written_by_other(had, &before, &after, &h))) {
		char ended[512];

		oom = keeper_oom_kills() > oom;
		keeper_ended(&h, status, (int)oom, ended, sizeof ended);
		salvaged = keeper_salvage(&kp, pid, status, (int)oom, outabs, &h, why, sizeof why);
		/* A death by a signal is news: the profile was saved all the
		 * same.  A program that ends with _exit or exit_group (every Go
		 * program) did what it meant to: its stderr stays its own. */
		if (salvaged > 0 && WIFSIGNALED(status))
			errx_("%s: %.*s ended without saving its profile (%s); written to %s from its keep",
			      l->what, h.exec[0] ? (int)strnlen(h.exec, sizeof h.exec) : (int)strlen(argv[0]),
			      h.exec[0] ? h.exec : argv[0], ended, outabs);
		else if (salvaged < 0)
			keeper_say_unwritten(l->what, argv[0], outabs, why);
		wrote = salvaged > 0;
	}
	keeper_close(&kp);
	/* 127: it could not be run (said above), or says so itself. */
	if (!wrote && salvaged == 0 && !(WIFEXITED(status) && WEXITSTATUS(status) == 127)) {
		const char *reason;

		if (damaged)
			reason = "its keep's header is damaged (a wild write in the program?)";
		else if (h.state == KEEP_VOID)
			reason = h.why[0] ? h.why : "its keep could not be used";
		else if (h.state == KEEP_SAVED)
			reason = "its runtime wrote it, and it is gone";
		else if (h.state == KEEP_EXECED) {
			char inner[4200];

			h.exec[sizeof h.exec - 1] = 0;
			snprintf(why, sizeof why, "it exec'd %s, which did not take its keep: %s", h.exec,
				 why_unloaded(h.exec, l, inner, sizeof inner));
			reason = why;
		}
		else if (h.state == KEEP_RECORDING)
			reason = "another process took its keep";
		else if (h.magic || !WIFSIGNALED(status))
			reason = why_unloaded(argv[0], l, why, sizeof why);
		else
			reason = "it was killed by a signal, and no keep could be made";
		errx_("%s: %s wrote no profile to %s (%s)", l->what, argv[0], outabs, reason);
	}
	note_others(l, outabs, &t0);
	if (WIFSIGNALED(status)) {
		signal(WTERMSIG(status), SIG_DFL);
		raise(WTERMSIG(status));
		return 128 + WTERMSIG(status);
	}
	return WEXITSTATUS(status);
}
