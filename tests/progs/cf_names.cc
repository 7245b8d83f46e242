/*
 * cf_names.cc - C++ functions to name on cfprof record's --unprofiled
 * line as the views print them (tests/e2e/73-cf-cli.t): a function
 * template in a namespace, instantiated twice (short name
 * ns::pair_sum; in full, with commas, long ns::pair_sum<int, long>(int,
 * long)), an overload pair two(int, long) and two(double), and a method.
 * Each is called 1000 times from main; prints the sum.
 */
#include <cstdio>

namespace ns {
template <class A, class B> __attribute__((noinline)) long pair_sum(A a, B b)
{
	return (long)a + (long)b;
}
} // namespace ns

__attribute__((noinline)) long two(int a, long b)
{
	return a * b;
}

__attribute__((noinline)) long two(double a)
{
	return (long)(a * 2);
}

struct Counter {
	long n = 0;
	__attribute__((noinline)) void bump(long k) { n += k; }
};

int main()
{
	Counter c;
	long s = 0;

	for (int i = 0; i < 1000; i++) {
		s += ns::pair_sum<int, long>(i, 2L);
		s += ns::pair_sum<short, char>((short)i, 'a');
		s += two(i, 3L) + two(i * 0.5);
		c.bump(i);
	}
	printf("%ld\n", s + c.n);
	return 0;
}
