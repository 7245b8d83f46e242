/* cp_kernel [big|threads]: CPU time spent in the kernel, for its callers.
 *
 * Alternates two phases 40 times: kread() reads /dev/zero (the kernel
 * clears the buffer: nearly all of it kernel-mode time), spin() computes
 * in user mode; each for about 5 ms of CPU, in 64 KiB reads.  With "big",
 * 5 times for 40 ms each, in 1 MiB reads (each a few hundred us in the
 * kernel, the thread hardly ever in user mode).  Prints each phase's share of the thread's CPU time
 * (CLOCK_THREAD_CPUTIME_ID around it).
 *
 * "two": 20 rounds of kbig() then ksmall(), each one read of /dev/zero
 * into a buffer touched before (256 and 128 MiB: tens of ms in the
 * kernel, each call filling the kernel-mode ring); prints kbig's share of
 * the two's CPU time, and of their wall time (kbig_wall: on a loaded
 * machine a call's waits for a CPU are its real time too), and the share
 * of their wall time that was such waits (two_waited: wall less CPU).
 *
 * "threads": 100 threads, 10 at a time, each reading /dev/zero for 3 ms
 * of CPU, then exiting; prints the process's CPU time in ms (getrusage). */
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static volatile uint64_t sink;
static char buf[10][1 << 20];
static size_t len = 65536;

static uint64_t wall_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + (uint64_t)ts.tv_nsec;
}

static uint64_t cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + (uint64_t)ts.tv_nsec;
}

__attribute__((noinline)) static void kread(int fd, uint64_t ns, int b)
{
	uint64_t end = cpu_ns() + ns;
	do
		if (read(fd, buf[b], len) != (ssize_t)len)
			return;
	while (cpu_ns() < end);
}

__attribute__((noinline)) static void spin(uint64_t ns)
{
	uint64_t end = cpu_ns() + ns, x = 1;
	do
		for (int i = 0; i < 2000; i++)
			x = x * 6364136223846793005ull + 1;
	while (cpu_ns() < end);
	sink += x;
}

static char *two;

__attribute__((noinline)) static void kbig(int fd)
{
	if (read(fd, two, 256 << 20) < 0)
		sink++;
}

__attribute__((noinline)) static void ksmall(int fd)
{
	if (read(fd, two, 128 << 20) < 0)
		sink++;
}

static void *reader(void *arg)
{
	int fd = open("/dev/zero", O_RDONLY);

	if (fd >= 0) {
		kread(fd, 3000000, (int)(intptr_t)arg);
		close(fd);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	uint64_t k = 0, s = 0, t0;
	int fd = open("/dev/zero", O_RDONLY);

	if (fd < 0)
		return 1;
	if (argc > 1 && !strcmp(argv[1], "threads")) {
		struct rusage ru;
		for (int r = 0; r < 10; r++) {
			pthread_t t[10];
			for (int i = 0; i < 10; i++)
				if (pthread_create(&t[i], NULL, reader, (void *)(intptr_t)i) != 0)
					return 1;
			for (int i = 0; i < 10; i++)
				pthread_join(t[i], NULL);
		}
		getrusage(RUSAGE_SELF, &ru);
		printf("cpu_ms %.1f\n", (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
						(double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3);
		return 0;
	}
	if (argc > 1 && !strcmp(argv[1], "two")) {
		static char big[256 << 20];
		two = big;
		memset(two, 1, sizeof big);
		uint64_t kw = 0, sw = 0, w0;
		for (int i = 0; i < 20; i++) {
			t0 = cpu_ns();
			w0 = wall_ns();
			kbig(fd);
			k += cpu_ns() - t0;
			kw += wall_ns() - w0;
			t0 = cpu_ns();
			w0 = wall_ns();
			ksmall(fd);
			s += cpu_ns() - t0;
			sw += wall_ns() - w0;
		}
		printf("kbig %.4f\nkbig_wall %.4f\ntwo_waited %.4f\n", (double)k / (double)(k + s),
		       (double)kw / (double)(kw + sw),
		       kw + sw > k + s ? (double)(kw + sw - k - s) / (double)(kw + sw) : 0.0);
		return 0;
	}
	int rounds = 40;
	uint64_t phase = 5000000;
	if (argc > 1 && !strcmp(argv[1], "big")) {
		len = sizeof buf[0];
		rounds = 5;
		phase = 40000000;
	}
	for (int i = 0; i < rounds; i++) {
		t0 = cpu_ns();
		kread(fd, phase, 0);
		k += cpu_ns() - t0;
		t0 = cpu_ns();
		spin(phase);
		s += cpu_ns() - t0;
	}
	printf("kread %.4f\nspin %.4f\n", (double)k / (double)(k + s), (double)s / (double)(k + s));
	return 0;
}
