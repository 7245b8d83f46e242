/* cp_kfaults: page faults the kernel takes for the program.  kfill()
 * reads /dev/zero into fresh anonymous memory, so every page is faulted
 * in by the kernel, in read's copy to the user; ufill() writes fresh
 * memory itself, faulting in user mode.  Each fills 32 MiB 8 times.
 * Prints each one's share of the thread's minor faults (getrusage
 * RUSAGE_THREAD around it). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#define LEN (32u << 20)

static long minflt(void)
{
	struct rusage ru;
	getrusage(RUSAGE_THREAD, &ru);
	return ru.ru_minflt;
}

__attribute__((noinline)) static void kfill(int fd)
{
	char *p = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return;
	for (size_t off = 0; off < LEN; off += 1u << 20)
		if (read(fd, p + off, 1u << 20) != 1 << 20)
			break;
	munmap(p, LEN);
}

__attribute__((noinline)) static void ufill(void)
{
	char *p = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return;
	for (size_t off = 0; off < LEN; off += 4096)
		p[off] = 1;
	munmap(p, LEN);
}

int main(void)
{
	long k = 0, u = 0, t0;
	int fd = open("/dev/zero", O_RDONLY);

	if (fd < 0)
		return 1;
	for (int i = 0; i < 8; i++) {
		t0 = minflt();
		kfill(fd);
		k += minflt() - t0;
		t0 = minflt();
		ufill();
		u += minflt() - t0;
	}
	printf("kfill %.4f\nufill %.4f\nfaults %ld\n", (double)k / (double)(k + u),
	       (double)u / (double)(k + u), k + u);
	return 0;
}
