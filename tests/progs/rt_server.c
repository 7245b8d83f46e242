/*
 * rt_server.c - a program that runs on while profiles of it are taken
 * (tests/e2e/99-snapshot.t): grow_a keeps 1000 objects of 1000 bytes,
 * then it says "phase 1" and waits for the file "go"; grow_b keeps 2000
 * of 500 bytes, "phase 2", and it waits for "stop", then exits 0.
 * `rt_server title` first writes over its environment's strings, as a
 * server that sets its process title does (redis, nginx).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *v[3000];

__attribute__((noinline)) static void *grow_a(int i)
{
	return memset(malloc(1000), i, 1000);
}

__attribute__((noinline)) static void *grow_b(int i)
{
	return memset(malloc(500), i, 500);
}

static void wait_for(const char *name)
{
	while (access(name, F_OK) != 0)
		usleep(10000);
}

extern char **environ;

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "title"))
		for (char **e = environ; *e; e++)
			memset(*e, 0, strlen(*e));
	/* A server's own title, as nginx and postgres set theirs: written
	 * over its arguments (./server retitle: "srv: up"). */
	if (argc > 1 && !strcmp(argv[1], "retitle") && strlen(argv[0]) >= 7) {
		memset(argv[1], 0, strlen(argv[1]));
		memset(argv[0], 0, strlen(argv[0]));
		memcpy(argv[0], "srv: up", 7);
	}
	for (int i = 0; i < 1000; i++)
		v[i] = grow_a(i);
	printf("phase 1\n");
	fflush(stdout);
	wait_for("go");
	for (int i = 1000; i < 3000; i++)
		v[i] = grow_b(i);
	printf("phase 2\n");
	fflush(stdout);
	wait_for("stop");
	return 0;
}
