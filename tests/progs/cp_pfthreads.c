/* cp_pfthreads N: N threads at once, each touching 8 MiB of fresh memory
 * (2,048 page faults in user mode), held together by a barrier so that
 * all of them hold their events at the same time.  Prints "done". */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

static pthread_barrier_t all;

static void *touch(void *arg)
{
	size_t len = 8u << 20;
	char *p;

	pthread_barrier_wait(&all);
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p != MAP_FAILED) {
		for (size_t i = 0; i < len; i += 4096)
			p[i] = 1;
		munmap(p, len);
	}
	pthread_barrier_wait(&all);
	return arg;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 110;
	pthread_t *t = calloc((size_t)n, sizeof *t);

	if (!t || n < 1 || pthread_barrier_init(&all, NULL, (unsigned)n) != 0)
		return 1;
	for (int i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, touch, NULL) != 0)
			return 1;
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	puts("done");
	return 0;
}
