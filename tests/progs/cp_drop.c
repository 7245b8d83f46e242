/*
 * cp_drop: a daemon that gives up root first thing (setuid to nobody),
 * then sleeps 0.5 s in napping() and burns 0.25 s of CPU in burn(); with
 * "threads", its four threads (made after the drop) sleep 0.3 s each.
 * After the drop the process is not dumpable: its /proc files are root's.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile uint64_t sink;

__attribute__((noinline)) static void napping(void)
{
	usleep(500000);
}

__attribute__((noinline)) static void burn(void)
{
	struct timespec a, b;
	uint64_t x = 1;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
	do {
		for (int i = 0; i < 10000; i++)
			x = x * 6364136223846793005ull + 1;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
	} while ((b.tv_sec - a.tv_sec) * 1000000000ll + (b.tv_nsec - a.tv_nsec) < 250000000);
	sink += x;
}

static void *worker(void *arg)
{
	usleep(300000);
	return arg;
}

int main(int argc, char **argv)
{
	if (setgid(65534) != 0 || setuid(65534) != 0)
		return 9;
	napping();
	burn();
	if (argc > 1 && !strcmp(argv[1], "threads")) {
		pthread_t t[4];
		for (int i = 0; i < 4; i++)
			pthread_create(&t[i], NULL, worker, NULL);
		for (int i = 0; i < 4; i++)
			pthread_join(t[i], NULL);
	}
	puts("done");
	return 0;
}
