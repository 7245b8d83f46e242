// Leaks through the C++ library, for mprof's partial call chains
// (tests/e2e/87-cxx-names.t).  Built -O2: push_back and map's operator[]
// are inlined library frames down to operator new.  parse_config and
// load_users each leak a Node whose vector fill_vec grew: 10 vectors of
// 100 ints (capacity 128: 512 bytes each) and 10 of 50 (capacity 64: 256
// bytes).  fill_map keeps 10 x 30 map nodes.
#include <map>
#include <string>
#include <vector>

struct Node {
	std::vector<int> v;
	std::map<int, long> m;
};

static std::vector<Node *> *all;
volatile int calls; // keeps every call a call (no tail call)

__attribute__((noinline)) void fill_vec(Node *n, int k)
{
	for (int i = 0; i < k; i++)
		n->v.push_back(i);
	calls++;
}

__attribute__((noinline)) void fill_map(Node *n, int k)
{
	for (int i = 0; i < k; i++)
		n->m[i] = i;
	calls++;
}

__attribute__((noinline)) void parse_config(void)
{
	Node *n = new Node;
	fill_vec(n, 100);
	fill_map(n, 30);
	calls++;
}

__attribute__((noinline)) void load_users(void)
{
	Node *n = new Node;
	fill_vec(n, 50);
	all->push_back(n);
	calls++;
}

int main()
{
	all = new std::vector<Node *>;
	for (int i = 0; i < 10; i++) {
		parse_config();
		load_users();
	}
	return 0;
}
