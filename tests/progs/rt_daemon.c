/*
 * rt_daemon: a daemon's start.  The first process forks, prints the
 * child's pid and ends at once (it "detaches"); the child starts a
 * session of its own, gives up root (setuid to nobody, as nginx's
 * workers do), makes 100 allocations of 1000 bytes, sleeps 2 s and
 * ends.  As nobody it cannot write its profile where root's is.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void *volatile kept[100];

int main(void)
{
	pid_t p = fork();

	if (p < 0)
		return 1;
	if (p > 0) {
		printf("%d\n", (int)p);
		return 0;
	}
	setsid();
	if (setgid(65534) != 0 || setuid(65534) != 0)
		return 9;
	for (int i = 0; i < 100; i++)
		kept[i] = malloc(1000);
	sleep(2);
	return 0;
}
