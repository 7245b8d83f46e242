/* cp_acflag: runs most of its time with EFLAGS.AC (alignment check) set,
 * as HotSpot's CPU-feature probe does for a few instructions, its own
 * accesses all aligned; prints a sum.  For 50-cp-cpu.t: a sample taken
 * there must not trap on an unaligned access of the handler's. */
#include <stdio.h>

static volatile unsigned long sink;

__attribute__((noinline)) static void aligned_work(void)
{
	__asm__ volatile("pushfq\n\torq $0x40000, (%%rsp)\n\tpopfq" ::: "cc", "memory");
	for (int i = 0; i < 200000; i++)
		sink += (unsigned long)i;
	__asm__ volatile("pushfq\n\tandq $-262145, (%%rsp)\n\tpopfq" ::: "cc", "memory");
}

int main(void)
{
	for (int k = 0; k < 2000; k++)
		aligned_work();
	printf("%lu\n", sink);
	return 0;
}
