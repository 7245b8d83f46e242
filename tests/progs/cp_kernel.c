/* cp_kernel: CPU time spent in the kernel, for its callers.  Alternates
 * two phases 40 times: kread() reads 64 KiB blocks of /dev/zero (the
 * kernel clears the buffer: nearly all of it kernel-mode time), spin()
 * computes in user mode; each for about 5 ms of CPU.  Prints each phase's
 * share of the thread's CPU time (CLOCK_THREAD_CPUTIME_ID around it). */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static volatile uint64_t sink;
static char buf[65536];

static uint64_t cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + (uint64_t)ts.tv_nsec;
}

__attribute__((noinline)) static void kread(int fd, uint64_t ns)
{
	uint64_t end = cpu_ns() + ns;
	do
		if (read(fd, buf, sizeof buf) != (ssize_t)sizeof buf)
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

int main(void)
{
	uint64_t k = 0, s = 0, t0;
	int fd = open("/dev/zero", O_RDONLY);

	if (fd < 0)
		return 1;
	for (int i = 0; i < 40; i++) {
		t0 = cpu_ns();
		kread(fd, 5000000);
		k += cpu_ns() - t0;
		t0 = cpu_ns();
		spin(5000000);
		s += cpu_ns() - t0;
	}
	printf("kread %.4f\nspin %.4f\n", (double)k / (double)(k + s), (double)s / (double)(k + s));
	return 0;
}
