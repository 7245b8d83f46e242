/*
 * cf_order.c - the call graph's rows by time: main calls small() 200,000
 * times (next to nothing each) and then big() 3 times (about 0.03 s of CPU
 * each), so big's row must come first among main's callees, as gprof and
 * mprof order them, not small's, which it met first
 * (tests/e2e/71-cf-time.t).
 */
#include <stdio.h>

static volatile unsigned long sink;

__attribute__((noinline)) static void small(unsigned long i)
{
	sink += i;
}

__attribute__((noinline)) static void big(void)
{
	for (unsigned long i = 0; i < 20000000; i++)
		sink += i;
}

int main(void)
{
	for (unsigned long i = 0; i < 200000; i++)
		small(i);
	for (int k = 0; k < 3; k++)
		big();
	printf("%lu\n", sink > 0 ? 1ul : 0ul);
	return 0;
}
