// cxx_names.cc - a C++ program whose allocations go through the standard
// library's containers and smart pointers, with known counts, all kept at
// exit (tests/e2e/87-cxx-names.t): the bin table must name their blocks
// (map, list and unordered_map nodes, bucket arrays, vector buffers,
// make_unique's and make_shared's blocks, a string's characters) and the
// views must print short C++ names, full ones with --full-names.
#include <cstdio>
#include <cstdlib>
#include <list>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

struct Widget {
	long id;
	double v[5];
};

struct Gadget {
	long a[11];
	explicit Gadget(long n) { a[0] = n; }
};

// A type whose name does not fit the types column (clang's
// llvm::detail::AnalysisResultModel<...> made rows of 266 columns).
namespace a_rather_long_namespace_name {
template <class A, class B, class C> struct HolderOfThreeThings {
	long v[15];
};
} // namespace a_rather_long_namespace_name
using Holder = a_rather_long_namespace_name::HolderOfThreeThings<Widget, Gadget, std::unique_ptr<Widget>>;
static Holder *holders[3];

// Two instantiations of one template: one short name, two full ones.
template <class T> __attribute__((noinline)) T *make_n(int n)
{
	return new T[n];
}

namespace {
__attribute__((noinline)) char *scratch(size_t n)
{
	return static_cast<char *>(malloc(n));
}
} // namespace

int main()
{
	std::map<int, std::string> names;
	for (int i = 0; i < 100; i++)
		names[i] = "w";
	std::list<int> li;
	for (int i = 0; i < 30; i++)
		li.push_back(i);
	std::vector<Widget> vw;
	vw.reserve(10);
	for (int i = 0; i < 10; i++)
		vw.push_back(Widget{ i, {} });
	std::vector<std::unique_ptr<Widget>> ups;
	ups.reserve(5);
	for (int i = 0; i < 5; i++)
		ups.push_back(std::make_unique<Widget>());
	std::vector<std::shared_ptr<Widget>> sps;
	sps.reserve(7);
	for (int i = 0; i < 7; i++)
		sps.push_back(std::make_shared<Widget>());
	std::unordered_map<int, int> um;
	um.reserve(50);
	for (int i = 0; i < 20; i++)
		um[i] = i;
	std::string s(100, 'x');
	auto gadget = [](long n) { return std::make_unique<Gadget>(n); };
	std::vector<std::unique_ptr<Gadget>> gs;
	gs.reserve(4);
	for (int i = 0; i < 4; i++)
		gs.push_back(gadget(i));
	int *ints[3];
	double *doubles[2];
	for (int i = 0; i < 3; i++)
		ints[i] = make_n<int>(25);
	for (int i = 0; i < 2; i++)
		doubles[i] = make_n<double>(25);
	for (int i = 0; i < 3; i++)
		holders[i] = std::make_unique<Holder>().release();
	char *buf = scratch(777);
	printf("sizeof Widget %zu Gadget %zu buckets %zu\n", sizeof(Widget), sizeof(Gadget), um.bucket_count());
	printf("kept %d\n", ints[0] && doubles[0] && buf && s.size() == 100 && holders[2]);
	// exit, not return: the containers are never destroyed, all is kept.
	exit(0);
}
