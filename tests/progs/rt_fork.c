/* rt_fork.c - a forked child writes FILE.PID, the parent FILE:
 *   parent: 10 x 21 bytes, fork, waits, 3 x 23 bytes.
 *   child:  inherits the 10 x 21, allocates 5 x 22, frees 2 of the 21s,
 *           exits.  Prints its pid. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static void *volatile sink;

int main(void)
{
	void *v[10];
	int st;

	for (int i = 0; i < 10; i++)
		v[i] = malloc(21);
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		for (int i = 0; i < 5; i++)
			sink = malloc(22);
		free(v[0]);
		free(v[1]);
		exit(0);
	}
	if (waitpid(pid, &st, 0) != pid || st != 0)
		return 2;
	for (int i = 0; i < 3; i++)
		sink = malloc(23);
	printf("%d\n", (int)pid);
	return 0;
}
