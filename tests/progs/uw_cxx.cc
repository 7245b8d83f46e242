// uw_cxx.cc - C++ stacks for the unwinder comparison (20-uw-check.t):
// exception objects (__cxa_allocate_exception calls malloc), allocations in
// destructors run while an exception unwinds the stack, in catch blocks,
// across a rethrow, and in ordinary containers.
#include <stdexcept>
#include <string>
#include <vector>

static volatile unsigned long sink;

struct Guard {
	int k;
	explicit Guard(int k_) : k(k_) {}
	~Guard()
	{
		std::string s(64 + k, 'g'); // allocates while unwinding
		sink += s.size();
	}
};

__attribute__((noinline)) static void thrower(int depth)
{
	Guard g(depth);
	if (depth == 0)
		throw std::runtime_error(std::string(100, 'x'));
	thrower(depth - 1);
	sink += (unsigned long)g.k;
}

__attribute__((noinline)) static void rethrower(int depth)
{
	try {
		thrower(depth);
	} catch (std::exception &e) {
		std::vector<std::string> v(3, std::string(e.what()));
		sink += v.size();
		throw;
	}
}

int main()
{
	for (int i = 0; i < 20; i++) {
		try {
			rethrower(i % 7);
		} catch (const std::runtime_error &e) {
			std::string copy(e.what()); // allocates in the catch block
			sink += copy.size();
		}
	}
	std::vector<int> v;
	for (int i = 0; i < 100000; i++)
		v.push_back(i);
	return sink == 0;
}
