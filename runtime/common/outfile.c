/*
 * outfile.c - owns the writing of a collector's data file (outfile_*):
 * its name for this process, the temporary file and the rename, and the
 * facts every file's INFO starts with.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h> /* rename(2) */
#include <string.h>
#include <unistd.h>

#include "execs.h"
#include "keep.h"
#include "newfile.h"
#include "outfile.h"

static char of_cmdline[1 << 15];

char *outfile_u64(char *buf, uint64_t v)
{
	char tmp[24];
	int n = 0, i = 0;

	do
		tmp[n++] = (char)('0' + v % 10);
	while ((v /= 10));
	while (n)
		buf[i++] = tmp[--n];
	buf[i] = 0;
	return buf;
}

/*
 * The command line and the executable, from /proc/self, read again at
 * each save (a program may rewrite its argv: postgres's workers name
 * themselves); where /proc/self cannot be read, what was read last (a
 * program that mounts a /proc of another pid namespace over its own,
 * unshare -fp --mount-proc: its file named no command, no executable,
 * and its own frames ??+0x38d2).
 */
const char *outfile_cmdline(void)
{
	static char buf[sizeof of_cmdline];
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	size_t n = 0;
	ssize_t k;

	if (fd < 0)
		return of_cmdline;
	while (n < sizeof buf - 1) {
		k = read(fd, buf + n, sizeof buf - 1 - n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		n += (size_t)k;
	}
	close(fd);
	while (n && buf[n - 1] == 0)
		n--;
	if (!n)
		return of_cmdline;
	buf[n] = 0;
	for (size_t i = 0; i < n; i++)
		if (!buf[i])
			buf[i] = ' ';
	memcpy(of_cmdline, buf, n + 1);
	return of_cmdline;
}

const char *outfile_exe(void)
{
	static char exe[PATH_MAX], buf[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);

	if (n > 0) {
		memcpy(exe, buf, (size_t)n);
		exe[n] = 0;
	}
	return exe;
}

static void fail(struct outfile *o, const char *path, int err)
{
	char msg[128] = ": ";

	/* A collector's file, not one aside, is its last save: under a
	 * launcher, the launcher writes it from the keep (writer.c's fail). */
	if (!o->aside && keep_watched()) {
		keep_save_failed(path, err);
		return;
	}
	strncat(msg, strerror(err), sizeof msg - 3);
	o->warn("cannot write ", path, msg);
}

void outfile_fsz_hold(struct outfile_fsz *h)
{
	sigset_t s, p;

	sigemptyset(&s);
	sigaddset(&s, SIGXFSZ);
	pthread_sigmask(SIG_BLOCK, &s, &h->old);
	h->was = sigpending(&p) == 0 && sigismember(&p, SIGXFSZ);
}

void outfile_fsz_release(struct outfile_fsz *h)
{
	static const struct timespec now = { 0, 0 };
	sigset_t s, p;

	sigemptyset(&s);
	sigaddset(&s, SIGXFSZ);
	if (!h->was && sigpending(&p) == 0 && sigismember(&p, SIGXFSZ))
		while (sigtimedwait(&s, NULL, &now) < 0 && errno == EINTR)
			;
	pthread_sigmask(SIG_SETMASK, &h->old, NULL);
}

void outfile_say(const char *s, size_t n)
{
	struct outfile_fsz h;

	outfile_fsz_hold(&h);
	while (n) {
		ssize_t k = write(2, s, n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		s += k;
		n -= (size_t)k;
	}
	outfile_fsz_release(&h);
}

int outfile_open(struct outfile *o, const char *base, pid_t root, const char *aside,
		 void (*warn)(const char *, const char *, const char *))
{
	char pid[24];

	o->warn = warn;
	o->fd = -1;
	o->aside = aside != NULL;
	outfile_u64(pid, (uint64_t)getpid());
	if (strlen(base) + 2 * strlen(pid) + (aside ? strlen(aside) : 0) + 8 > sizeof o->path) {
		fail(o, base, ENAMETOOLONG);
		return -1;
	}
	strcpy(o->path, base);
	if (getpid() != root) {
		strcat(o->path, ".");
		strcat(o->path, pid);
	}
	if (aside)
		strcat(o->path, aside);
	/* Exclusively, under a random name: never through a planted link. */
	outfile_fsz_hold(&o->fsz);
	o->fd = newfile_open(o->path, o->tmp, sizeof o->tmp);
	if (o->fd < 0) {
		outfile_fsz_release(&o->fsz);
		fail(o, o->path, -o->fd);
		o->fd = -1;
		return -1;
	}
	return 0;
}

int outfile_close(struct outfile *o, int rc)
{
	if (rc == 0 && !o->aside)
		keep_wrote(o->fd);
	if (close(o->fd) < 0 && rc == 0)
		rc = -errno;
	if (rc == 0 && rename(o->tmp, o->path) < 0)
		rc = -errno;
	outfile_fsz_release(&o->fsz);
	if (rc < 0) {
		unlink(o->tmp);
		fail(o, o->path, -rc);
		return -1;
	}
	/* Written at exit: the launcher's keep (keep.h) has nothing to do. */
	if (!o->aside)
		keep_saved(1);
	else
		execs_wrote(o->path);
	return 0;
}
