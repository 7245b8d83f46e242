/* cp_ldso_plug: a plugin whose destructor spends its time in the kernel
 * (1,500 reads of /dev/zero, made as raw system calls: their records'
 * stacks are in the plugin), for tests/progs/cp_ldso.c. */
#include <sys/syscall.h>

static char buf[1 << 16];

static long sc3(long n, long a, long b, long c)
{
	long r;

	__asm__ volatile("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
	return r;
}

int plug(int x)
{
	return x * 3 + 1;
}

__attribute__((destructor)) static void fini(void)
{
	long fd = sc3(SYS_open, (long)"/dev/zero", 0, 0);

	for (int i = 0; i < 1500; i++)
		sc3(SYS_read, fd, (long)buf, sizeof buf);
	sc3(SYS_close, fd, 0, 0);
}
