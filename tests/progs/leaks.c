/* leaks.c - memory lost directly, lost indirectly, still reachable, and
 * libc's own stdout buffer, for tests/e2e/90-leaks.t, which compares
 * mprof's kept bytes with valgrind memcheck's "in use at exit":
 * 100 bytes lost, a list of 4 nodes of 48 lost (one directly, three
 * through it), 500 reachable from a global.  With an argument, a thread
 * is still blocked at exit (then libc's buffers are not released). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct node {
	struct node *next;
	char pad[40];
};
void *reachable;

static void lose_direct(void)
{
	char *p = malloc(100);
	memset(p, 1, 100);
}

static void lose_list(void)
{
	struct node *h = NULL;

	for (int i = 0; i < 4; i++) {
		struct node *n = malloc(sizeof *n);
		n->next = h;
		h = n;
	}
}

static void *sleeper(void *arg)
{
	for (;;)
		pause();
	return arg;
}

int main(int argc, char **argv)
{
	pthread_t t;

	lose_direct();
	lose_list();
	reachable = malloc(500);
	free(malloc(77));
	if (argc > 1 && pthread_create(&t, NULL, sleeper, NULL) != 0)
		return 1;
	printf("hello\n");
	return 0;
}
