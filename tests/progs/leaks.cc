// leaks.cc - C++ memory kept at exit beside libstdc++'s own (its
// exception emergency pool, 72 KiB allocated before main) and libc's
// stdout buffer, for tests/e2e/90-leaks.t: a W reachable from a global,
// its string and vector, and an array of 10 ints lost.
#include <iostream>
#include <string>
#include <vector>

struct W {
	std::string name;
	std::vector<int> v;
};
W *keep;

int main()
{
	keep = new W{ "a fairly long name that is not inline", std::vector<int>(100) };
	new int[10];
	std::cout << "hi " << keep->name << std::endl;
	return 0;
}
