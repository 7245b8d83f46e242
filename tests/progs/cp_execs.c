/* cp_execs: forks N children (default 300), each making 40 system calls
 * and then exec'ing /bin/true, as find -exec, xargs and a shell's loop
 * do; prints how many did not exit 0 ("bad 0") and exits 1 if any. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 300, bad = 0;

	for (int i = 0; i < n; i++) {
		int st = 0;
		pid_t p = fork();

		if (p == 0) {
			for (int k = 0; k < 40; k++)
				getppid();
			execl("/bin/true", "true", (char *)0);
			_exit(127);
		}
		if (p < 0 || waitpid(p, &st, 0) != p || st) {
			if (bad++ < 3)
				fprintf(stderr, "child %d: status %#x\n", i, st);
		}
	}
	printf("bad %d\n", bad);
	return bad != 0;
}
