/*
 * cf_spawn.c - the program's processes that are not built with
 * -finstrument-functions (the shells and tools a make runs) write no
 * profile: main calls work 100 times, then runs `/bin/true` and
 * `/bin/echo x` through system() three times each (a shell, and the tool
 * it execs), then forks and execs `sh -c 'exit 0'` itself, as gawk's
 * `"cmd" | getline` does (a forked child's own keep, which the shell
 * takes over), and prints its count (tests/e2e/72-cf-robust.t).  With
 * "kill": each of those shells ends by SIGKILL instead, which no runtime
 * sees: the launcher writes no file from their keeps either.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile unsigned long sink;

__attribute__((noinline)) static void work(long i)
{
	sink += (unsigned long)i;
}

int main(int argc, char **argv)
{
	const char *sh = argc > 1 ? "kill -9 $$" : "exit 0";
	long n = 0;

	for (long i = 0; i < 100; i++, n++)
		work(i);
	for (int k = 0; k < 3; k++) {
		int r = argc > 1 ? system(sh) : 0;

		if (argc > 1 ? !WIFSIGNALED(r) || WTERMSIG(r) != 9
			     : system("/bin/true") != 0 || system("/bin/echo x > /dev/null") != 0)
			return 1;
	}
	pid_t c = fork();
	int st;

	if (c == 0) {
		execl("/bin/sh", "sh", "-c", sh, (char *)NULL);
		_exit(127);
	}
	if (c < 0 || waitpid(c, &st, 0) != c || st != (argc > 1 ? 9 : 0))
		return 1;
	printf("work %ld\n", n);
	return 0;
}
