/*
 * cf_fork.c - a forked child's calls are the child's: main calls
 * parent_work 1000 times, then spawn forks; the child calls child_work 2000
 * times from spawn, prints its pid and count and exits (through exit, so
 * its profile is written: FILE.PID); the parent calls parent_work 500 more
 * times, waits for the child, and prints its own count.  One "name value"
 * per line, the child's first (tests/e2e/72-cf-robust.t):
 *
 *   child_pid N  child_work 2000  parent_work 1500  child_status 0
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static long n_parent_work, n_child_work;
static volatile unsigned long sink;

__attribute__((noinline)) static void parent_work(long i)
{
	n_parent_work++;
	sink += (unsigned long)i;
}

__attribute__((noinline)) static void child_work(long i)
{
	n_child_work++;
	sink ^= (unsigned long)i;
}

__attribute__((noinline)) static pid_t spawn(void)
{
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		for (long i = 0; i < 2000; i++)
			child_work(i);
		printf("child_pid %ld\nchild_work %ld\n", (long)getpid(), n_child_work);
		exit(0);
	}
	return pid;
}

int main(void)
{
	pid_t pid;
	int st = 0;

	for (long i = 0; i < 1000; i++)
		parent_work(i);
	pid = spawn();
	if (pid < 0)
		return 1;
	for (long i = 0; i < 500; i++)
		parent_work(i);
	if (waitpid(pid, &st, 0) != pid)
		return 1;
	printf("parent_work %ld\nchild_status %d\n", n_parent_work,
	       WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	return 0;
}
