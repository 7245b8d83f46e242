/* cp_faults: touch_pages faults in 20480 fresh 4 KiB pages (no huge pages);
 * many_syscalls makes 20000 system calls; alternate calls call_a and
 * call_b in turn, 20000 times each, one system call each (a loop of two
 * calls, as tar's read and write); compute makes neither. */
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define PAGES 20480

static volatile uint64_t sink;

__attribute__((noinline)) static void touch_pages(void)
{
	char *p = mmap(NULL, PAGES * 4096L, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return;
	madvise(p, PAGES * 4096L, MADV_NOHUGEPAGE);
	for (long i = 0; i < PAGES; i++)
		p[i * 4096] = (char)i;
	sink += (uint64_t)p[4096];
}

__attribute__((noinline)) static void many_syscalls(void)
{
	for (int i = 0; i < 20000; i++)
		sink += (uint64_t)syscall(SYS_getppid);
}

__attribute__((noinline)) static void call_a(void)
{
	sink += (uint64_t)syscall(SYS_getppid);
}

__attribute__((noinline)) static void call_b(void)
{
	sink += (uint64_t)syscall(SYS_getuid);
}

__attribute__((noinline)) static void alternate(void)
{
	for (int i = 0; i < 20000; i++) {
		call_a();
		call_b();
	}
}

__attribute__((noinline)) static void compute(void)
{
	uint64_t x = 1;
	for (long i = 0; i < 50000000; i++)
		x = x * 6364136223846793005ull + 1;
	sink += x;
}

int main(void)
{
	touch_pages();
	many_syscalls();
	alternate();
	compute();
	printf("ok\n");
	return 0;
}
