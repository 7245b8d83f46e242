/*
 * rt_execs.c - program images that work, then exec (the profile of an
 * image saved as it execs: runtime/common/execs.c; test
 * tests/e2e/96-keep-exec.t).
 *
 *   rt_execs STAGE [STAGE...]
 *
 * Each STAGE is N:SIZE:MS[:how]: the image allocates N objects of SIZE
 * bytes (kept) in stage_alloc, spends MS milliseconds of CPU time in
 * burn, then execs this program (argv[0]) with the stages after its own;
 * the last ends.  how:
 *   kill   the image sends itself SIGKILL at its end
 *   fail   before its exec, an exec of ./notexec (executable, not a
 *          program: ENOEXEC), which fails; it prints the errno, then
 *          allocates N more of SIZE + 1 bytes and calls countdown again
 * Each stage calls countdown, a direct recursion 100 deep (101 calls).
 *   fork   the stages after this one run in a forked child (its pid
 *          printed), the first in the child's image, which the image
 *          waits for before its end
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void *volatile keep[4096];
static volatile unsigned long sink;

__attribute__((noinline)) static void stage_alloc(int n, int size)
{
	for (int i = 0; i < n && i < 4096; i++)
		keep[i] = malloc((size_t)size);
}

__attribute__((noinline)) static void countdown(int n)
{
	sink++;
	if (n > 0)
		countdown(n - 1);
	sink++;
}

static double cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

__attribute__((noinline)) static void burn(int ms)
{
	double end = cpu_ms() + ms;

	while (ms > 0 && cpu_ms() < end)
		for (int i = 0; i < 100000; i++)
			sink += (unsigned long)i * 7;
}

int main(int argc, char **argv)
{
	int n, size, ms;
	char how[16];

	for (;;) {
		how[0] = 0;
		if (argc < 2 || sscanf(argv[1], "%d:%d:%d:%15s", &n, &size, &ms, how) < 3) {
			fprintf(stderr, "usage: rt_execs N:SIZE:MS[:kill|fail|fork]...\n");
			return 2;
		}
		stage_alloc(n, size);
		countdown(100);
		burn(ms);
		if (!strcmp(how, "fail")) {
			char *none[] = { "./notexec", NULL };

			execv("./notexec", none);
			printf("exec failed: errno %d\n", errno);
			stage_alloc(n, size + 1);
			countdown(100);
		}
		if (argc <= 2)
			break;
		argv[1] = argv[0];
		if (!strcmp(how, "fork")) {
			pid_t pid = fork();
			int st;

			if (pid == 0) { /* the next stage, in this image */
				argv++;
				argc--;
				continue;
			}
			printf("child %d\n", (int)pid);
			fflush(stdout);
			waitpid(pid, &st, 0);
			break;
		}
		fflush(stdout);
		execv(argv[0], argv + 1);
		perror("execv");
		return 127;
	}
	if (!strcmp(how, "kill"))
		raise(SIGKILL);
	return 0;
}
