/* cp_threads: four threads burn 0.3 s of CPU each, in functions of their
 * own; the main thread burns 0.1 s.  Exits with status 3. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

static uint64_t cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + (uint64_t)ts.tv_nsec;
}

static volatile uint64_t sink;

__attribute__((noinline)) static void burn(uint64_t ns)
{
	uint64_t end = cpu_ns() + ns, x = 1;
	do
		for (int i = 0; i < 10000; i++)
			x = x * 6364136223846793005ull + 1;
	while (cpu_ns() < end);
	sink += x;
}

__attribute__((noinline)) static void *worker(void *arg)
{
	burn(300000000);
	return arg;
}

int main(void)
{
	pthread_t t[4];
	for (int i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	burn(100000000);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	printf("done\n");
	return 3;
}
