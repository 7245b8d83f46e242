/*
 * rt_kids.c - forked children that end in several ways, for the keeps
 * they send their launcher (runtime/common/keep.c's child_keep; test
 * tests/e2e/96-keep-children.t).  The parent allocates 300 objects of 55
 * bytes, forks, and each child 1000 of 77 bytes before its end; a
 * grandchild 500 of 99.  Nothing is freed.  Prints each child's pid and
 * how its parent saw it end.
 *
 *   term    the child sends itself SIGTERM
 *   exit3   the child calls _exit(3)
 *   grand   the child forks a grandchild that sends itself SIGKILL, waits
 *           for it, and exits normally
 *   exec    the child execs this program as "exectarget", which makes the
 *           child's 1000 and sends itself SIGTERM (a shell's child that
 *           execs sort, killed by SIGPIPE)
 *   spawn   posix_spawn runs "exectarget" (glibc's exec there is its own,
 *           in a vfork child: no interposed function sees it)
 *   vfork   vfork, and the child execs "exectarget" (dash runs every
 *           command so)
 *   rawexec the child makes 500 of 99 bytes, then execs "exectarget" by
 *           the system call itself (Go's syscall.Exec)
 *   rawstop as rawexec, but the image exec'd ("exitingtarget") makes the
 *           1000 and returns 0; the launcher (the parent) is stopped
 *           from before the fork until the child has been reaped, so
 *           that it reads both keeps, and how the child ended, late
 */
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;
static void *volatile keep[2048];

__attribute__((noinline)) static void parent_work(void)
{
	for (int i = 0; i < 300; i++)
		keep[i] = malloc(55);
}

__attribute__((noinline)) static void child_work(void)
{
	for (int i = 0; i < 1000; i++)
		keep[i] = malloc(77);
}

__attribute__((noinline)) static void grandchild_work(void)
{
	for (int i = 0; i < 500; i++)
		keep[1000 + i] = malloc(99);
}

/* How pid ended, as "signal N" or "status N". */
static void report(const char *who, pid_t pid)
{
	int st;

	if (waitpid(pid, &st, 0) < 0)
		return;
	printf("%s %d %s %d\n", who, (int)pid, WIFSIGNALED(st) ? "signal" : "status",
	       WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
	fflush(stdout);
}

int main(int argc, char **argv)
{
	const char *how = argc > 1 ? argv[1] : "term";
	pid_t p;

	if (!strcmp(how, "exitingtarget")) {
		child_work();
		return 0;
	}
	if (!strcmp(how, "exectarget")) {
		child_work();
		kill(getpid(), SIGTERM);
		pause();
		return 1;
	}
	parent_work();
	fflush(stdout);
	if (!strcmp(how, "spawn")) {
		char *const args[] = { argv[0], "exectarget", NULL };

		if (posix_spawn(&p, argv[0], NULL, NULL, args, environ) != 0)
			return 1;
		report("child", p);
		return 0;
	}
	if (!strcmp(how, "vfork")) {
		if ((p = vfork()) == 0) {
			execl(argv[0], argv[0], "exectarget", (char *)NULL);
			_exit(127);
		}
		report("child", p);
		return 0;
	}
	if (!strcmp(how, "rawstop"))
		kill(getppid(), SIGSTOP);
	if ((p = fork()) == 0) {
		if (!strcmp(how, "rawexec") || !strcmp(how, "rawstop")) {
			char *const args[] = { argv[0], how[3] == 's' ? "exitingtarget" : "exectarget",
					       NULL };

			grandchild_work();
			syscall(SYS_execve, argv[0], args, environ);
			_exit(127);
		}
		if (!strcmp(how, "exec")) {
			execl(argv[0], argv[0], "exectarget", (char *)NULL);
			_exit(127);
		}
		child_work();
		if (!strcmp(how, "exit3"))
			_exit(3);
		if (!strcmp(how, "grand")) {
			pid_t g = fork();

			if (g == 0) {
				grandchild_work();
				kill(getpid(), SIGKILL);
				pause();
			}
			report("grandchild", g);
			exit(0);
		}
		kill(getpid(), SIGTERM);
		pause();
	}
	report("child", p);
	if (!strcmp(how, "rawstop"))
		kill(getppid(), SIGCONT);
	return 0;
}
