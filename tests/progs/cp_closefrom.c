/*
 * cp_closefrom: a daemon's start.  A thread is made first (it gets its
 * events), then every descriptor from 3 up is closed, as a daemon does:
 * argv[1] says how (closefrom, close_range, or close one by one, and how
 * many of those closes succeeded is printed; sys_close_range and sys_close
 * the same through syscall(), as code older than glibc's wrappers does).  Then 700 descriptors are
 * opened (they take the numbers freed), burn() spends about 0.3 s of CPU,
 * the thread ends, and each of the 700 is written to: the profiler must
 * have closed none of them, nor let its events go.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define NOPEN 700

static volatile int go;
static volatile uint64_t sink;

static uint64_t cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + (uint64_t)ts.tv_nsec;
}

__attribute__((noinline)) static void burn(uint64_t ns)
{
	uint64_t end = cpu_ns() + ns, x = 1;
	do
		for (int i = 0; i < 10000; i++)
			x = x * 6364136223846793005ull + 1;
	while (cpu_ns() < end);
	sink += x;
}

static void *waiter(void *arg)
{
	while (!go)
		usleep(1000);
	return arg;
}

int main(int argc, char **argv)
{
	const char *how = argc > 1 ? argv[1] : "closefrom";
	int fds[NOPEN], n, bad = 0, closed = 0;
	pthread_t t;

	if (pthread_create(&t, NULL, waiter, NULL) != 0)
		return 1;
	usleep(20000);
	if (!strcmp(how, "closefrom")) {
		closefrom(3);
	} else if (!strcmp(how, "close_range")) {
		if (close_range(3, ~0u, 0) != 0)
			perror("close_range");
	} else if (!strcmp(how, "sys_close_range")) {
		if (syscall(SYS_close_range, 3, ~0u, 0) != 0)
			perror("close_range");
	} else if (!strcmp(how, "sys_close")) {
		for (int fd = 3; fd < 1024; fd++)
			closed += syscall(SYS_close, fd) == 0;
		printf("%d closed\n", closed);
	} else {
		for (int fd = 3; fd < 1024; fd++)
			closed += close(fd) == 0;
		printf("%d closed\n", closed);
	}
	for (n = 0; n < NOPEN; n++)
		if ((fds[n] = open("/dev/null", O_WRONLY | O_CLOEXEC)) < 0)
			break;
	burn(300000000);
	go = 1;
	pthread_join(t, NULL);
	for (int i = 0; i < n; i++)
		bad += write(fds[i], "x", 1) != 1;
	printf("opened %d, %d writes failed\n", n, bad);
	return 0;
}
