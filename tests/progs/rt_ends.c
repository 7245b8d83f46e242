/*
 * rt_ends.c - known work, then an end chosen by argv[1], for the keep's
 * tests (tests/e2e/96-keep.t): the profile must survive every end.
 *
 *   rt_ends HOW [spin]
 *     exit, _exit, exit_group, abort, segv, kill (SIGKILL to itself)
 *     wait          print "ready", then wait to be killed from outside
 *     threads-kill  4 threads make 250 objects of 64 bytes each (worker),
 *                   then SIGKILL
 *     fork-kill     a child makes 500 objects of 77 bytes and exits 0;
 *                   the parent then makes 300 of 55 bytes, then SIGKILL
 *     fork-race     60 forks (each child _exit(0)) while 3 threads start
 *                   threads: prints how many children did not exit 0
 *     vfork-fail    a vfork child's exec fails, it calls _exit(127); the
 *                   parent then makes 200 objects of 33 bytes, exit 0
 *     restart-kill  (mprof) 100 objects of 11 bytes, mprof_stop,
 *                   mprof_restart("other.data"), 200 of 22, SIGKILL
 *   spin: first 300 ms of CPU in spin_here (for cpprof)
 *
 * Always first: keep_a makes 1000 objects of 100 bytes (one_a, one call
 * each) and frees 400; keep_b makes 300 of 5000 bytes (one_b) and frees
 * none: 1570000 bytes kept of 1300 allocations.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* libmprof's, when it is there (mprof.h). */
void mprof_stop(void) __attribute__((weak));
void mprof_restart(const char *filename) __attribute__((weak));

static void *objs[1000];
static void *big[300];
static void *volatile sink;

__attribute__((noinline)) static void *one_a(void)
{
	return memset(malloc(100), 1, 100);
}

__attribute__((noinline)) static void *one_b(void)
{
	return memset(malloc(5000), 2, 5000);
}

__attribute__((noinline)) static void keep_a(void)
{
	for (int i = 0; i < 1000; i++)
		objs[i] = one_a();
	for (int i = 0; i < 400; i++)
		free(objs[i]);
}

__attribute__((noinline)) static void keep_b(void)
{
	for (int i = 0; i < 300; i++)
		big[i] = one_b();
}

__attribute__((noinline)) static void spin_here(void)
{
	struct timespec t0, t;
	volatile double x = 0;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
	do {
		for (int i = 0; i < 10000; i++)
			x += i * 0.5;
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < 300);
}

__attribute__((noinline)) static void *worker(void *arg)
{
	void **v = arg;

	for (int i = 0; i < 250; i++)
		v[i] = malloc(64);
	return NULL;
}

static void make(int n, size_t size)
{
	for (int i = 0; i < n; i++)
		sink = malloc(size);
}

static volatile int race_stop;

__attribute__((noinline)) static void *racer(void *arg)
{
	return arg;
}

/* Threads start while the main thread forks: each takes keep memory (a
 * thread's record, under cfprof) as the fork handler copies the keep. */
static void *spawner(void *arg)
{
	while (!race_stop) {
		pthread_t t;

		if (pthread_create(&t, NULL, racer, arg) == 0)
			pthread_join(t, NULL);
		usleep(1000);
	}
	return NULL;
}

static int fork_race(void)
{
	pthread_t s[3];
	int bad = 0;

	for (int i = 0; i < 3; i++)
		pthread_create(&s[i], NULL, spawner, NULL);
	for (int i = 0; i < 60; i++) {
		pid_t pid = fork();
		int st;

		if (pid == 0)
			_exit(0);
		waitpid(pid, &st, 0);
		bad += !(WIFEXITED(st) && WEXITSTATUS(st) == 0);
		usleep(2000);
	}
	race_stop = 1;
	for (int i = 0; i < 3; i++)
		pthread_join(s[i], NULL);
	return bad;
}

int main(int argc, char **argv)
{
	const char *how = argc > 1 ? argv[1] : "exit";
	volatile int *null = NULL;

	if (argc > 2 && !strcmp(argv[2], "spin"))
		spin_here();
	keep_a();
	keep_b();
	printf("allocated\n");
	fflush(stdout);
	if (!strcmp(how, "exit"))
		exit(3);
	if (!strcmp(how, "_exit"))
		_exit(4);
	if (!strcmp(how, "exit_group"))
		syscall(SYS_exit_group, 5);
	if (!strcmp(how, "abort"))
		abort();
	if (!strcmp(how, "segv"))
		return *null;
	if (!strcmp(how, "kill"))
		kill(getpid(), SIGKILL);
	if (!strcmp(how, "wait")) {
		printf("ready\n");
		fflush(stdout);
		for (;;)
			pause();
	}
	if (!strcmp(how, "threads-kill")) {
		static void *v[4][250];
		pthread_t t[4];

		for (int i = 0; i < 4; i++)
			pthread_create(&t[i], NULL, worker, v[i]);
		for (int i = 0; i < 4; i++)
			pthread_join(t[i], NULL);
		kill(getpid(), SIGKILL);
	}
	if (!strcmp(how, "fork-kill")) {
		pid_t pid = fork();

		if (pid == 0) {
			make(500, 77);
			exit(0);
		}
		waitpid(pid, NULL, 0);
		make(300, 55);
		kill(getpid(), SIGKILL);
	}
	if (!strcmp(how, "fork-race")) {
		printf("children crashed: %d\n", fork_race());
		exit(0);
	}
	if (!strcmp(how, "vfork-fail")) {
		char *const av[] = { "nonexistent", NULL };
		pid_t pid = vfork();

		if (pid == 0) {
			execv("/nonexistent/program", av);
			_exit(127);
		}
		waitpid(pid, NULL, 0);
		make(200, 33);
		exit(0);
	}
	if (!strcmp(how, "restart-kill") && mprof_stop && mprof_restart) {
		make(100, 11);
		mprof_stop();
		mprof_restart("other.data");
		make(200, 22);
		kill(getpid(), SIGKILL);
	}
	return 9;
}
