/*
 * cp_forkfds.c - a program with 20 threads forks, for 52-cp-threads.t:
 * the child prints how many perf event descriptors it holds (each sampled
 * thread of the parent had one; the child has one thread of its own).
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <dirent.h>

#define N 20
static pthread_barrier_t up, down;

static void *idle(void *a)
{
	(void)a;
	pthread_barrier_wait(&up);
	pthread_barrier_wait(&down);
	return NULL;
}

int main(void)
{
	pthread_t t[N];
	pid_t pid;
	int st;

	pthread_barrier_init(&up, NULL, N + 1);
	pthread_barrier_init(&down, NULL, N + 1);
	for (int i = 0; i < N; i++)
		pthread_create(&t[i], NULL, idle, NULL);
	pthread_barrier_wait(&up);
	pid = fork();
	if (pid == 0) {
		DIR *d = opendir("/proc/self/fd");
		struct dirent *e;
		char path[300], link[256];
		int n = 0;

		while (d && (e = readdir(d))) {
			ssize_t k;

			snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
			k = readlink(path, link, sizeof link - 1);
			if (k > 0) {
				link[k] = 0;
				n += strstr(link, "perf_event") != NULL;
			}
		}
		printf("child: %d perf events\n", n);
		fflush(stdout);
		_exit(0);
	}
	waitpid(pid, &st, 0);
	pthread_barrier_wait(&down);
	for (int i = 0; i < N; i++)
		pthread_join(t[i], NULL);
	return 0;
}
