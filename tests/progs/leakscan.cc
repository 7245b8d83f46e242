// leakscan.cc - C++ memory of every leak class at exit, for
// tests/e2e/91-leak-scan.t: objects reached only through the interior
// pointers memcheck's heuristics take for start pointers (an array of
// objects with destructors past its element count, newarray; a base class
// of an object with two, multipleinheritance), containers kept and lost.
//
//   still reachable  an array of 5 D from new[] (8 + 5 x 8 = 48), a C
//                    through its B part (40), a map of 3 nodes (3 x 48)
//                    and a std::string of 40 characters (41) under globals
//   definitely lost  an array of 3 D (32), a vector's own object (24)
//   indirectly lost  that vector's elements (10 x 4 = 40)
#include <map>
#include <string>
#include <vector>

struct D {
	long x = 1;
	~D() { x = 0; }
};
struct A {
	virtual ~A() {}
	long a = 1;
};
struct B {
	virtual ~B() {}
	long b = 2;
};
struct C : A, B {
	long c = 3;
};

D *arr;
B *base;
std::map<int, int> table;
std::string *text;

__attribute__((noinline)) static void keep()
{
	arr = new D[5];
	base = new C;
	for (int i = 0; i < 3; i++)
		table[i] = i;
	text = new std::string(40, 'x');
}

__attribute__((noinline)) static void lose()
{
	D *volatile d = new D[3];
	std::vector<int> *volatile v = new std::vector<int>(10);
	(void)d;
	(void)v;
}

int main()
{
	keep();
	lose();
	return 0;
}
