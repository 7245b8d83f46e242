/*
 * cf_catch.cc - ten times: catcher calls thrower(100), which throws from
 * 100 frames down; catcher catches, then loops 30M times with no call.
 * Nearly all the time is catcher's own, after its catches.
 */
#include <stdexcept>

__attribute__((noinline)) void thrower(int d)
{
	if (d == 0)
		throw std::runtime_error("x");
	thrower(d - 1);
	__asm__ volatile("");
}

__attribute__((noinline)) int after(int x)
{
	return x + 1;
}

__attribute__((noinline)) void catcher()
{
	volatile unsigned long s = 0;
	for (int r = 0; r < 10; r++) {
		try {
			thrower(100);
		} catch (const std::exception &) {
		}
		for (long i = 0; i < 30000000; i++)
			s += i;
		after(r);
	}
}

int main()
{
	catcher();
}
