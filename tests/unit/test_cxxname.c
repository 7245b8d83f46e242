/*
 * test_cxxname.c - lib/symbols/cxxname.c on names as libiberty's demangler (c++filt)
 * prints them, taken from real programs built with g++ 12 and clang 14 and
 * from libc++'s: function names, type names, the type an allocating frame
 * names, and the frames that only pass an allocation on.
 */
#include "symbols/cxxname.h"
#include "tap.h"

#include <stdlib.h>

static void simple(const char *full, const char *want)
{
	char *got = cxxname_simplify(full);
	is_str(got, want, "simplify %s", full);
	free(got);
}

static void type(const char *full, const char *want)
{
	char *got = cxxname_type(full);
	is_str(got, want, "type %s", full);
	free(got);
}

static void alloc(const char *frame, const char *want, enum cxxname_size want_how)
{
	enum cxxname_size how = (enum cxxname_size)-1;
	char *got = cxxname_alloc_type(frame, &how);
	if (!want) {
		ok(!got, "no type named by %s", frame);
	} else {
		is_str(got, want, "type named by %s", frame);
		is_int(how, want_how, "and how to size it");
	}
	free(got);
}

int main(void)
{
	/* Template arguments, parameters, return types. */
	simple("void std::vector<int, std::allocator<int> >::_M_realloc_insert<int const&>("
	       "__gnu_cxx::__normal_iterator<int*, std::vector<int, std::allocator<int> > >, int const&)",
	       "std::vector::_M_realloc_insert");
	simple("std::vector<int, std::allocator<int> >::push_back(int const&)", "std::vector::push_back");
	simple("std::__detail::_MakeUniq<Widget>::__single_object std::make_unique<Widget>()",
	       "std::make_unique");
	simple("std::shared_ptr<std::enable_if<!std::is_array<Widget>::value, Widget>::type> "
	       "std::make_shared<Widget>()",
	       "std::make_shared");
	simple("std::_Rb_tree_node<std::pair<int const, std::__cxx11::basic_string<char, std::char_traits<char>, "
	       "std::allocator<char> > > >* std::_Rb_tree<int, std::pair<int const, std::__cxx11::basic_string<"
	       "char, std::char_traits<char>, std::allocator<char> > >, std::_Select1st<std::pair<int const, "
	       "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > > >, "
	       "std::less<int>, std::allocator<std::pair<int const, std::__cxx11::basic_string<char, "
	       "std::char_traits<char>, std::allocator<char> > > > >::_M_create_node<std::piecewise_construct_t "
	       "const&, std::tuple<int&&>, std::tuple<> >(std::piecewise_construct_t const&, std::tuple<int&&>&&, "
	       "std::tuple<>&&)",
	       "std::_Rb_tree::_M_create_node");
	simple("int* std::__copy_move_a<false, int const*, int*>(int const*, int const*, int*)",
	       "std::__copy_move_a");
	simple("int& std::__get_helper<0ul, int&&>(std::_Tuple_impl<0ul, int&&>&)", "std::__get_helper");
	simple("decltype (({parm#1}.begin)()) bgn<std::vector<int, std::allocator<int> > >("
	       "std::vector<int, std::allocator<int> >&)",
	       "bgn");
	simple("void (*pick<int>(int))(int)", "pick");
	simple("Outer<int>::Inner<double>::baz(int (*) [3])", "Outer::Inner::baz");
	simple("call(void (*)(int), int (Foo::*)(int), int (&) [3])", "call");
	simple("Box<int, 4>::data()", "Box::data");
	simple("std::thread::_State_impl<std::thread::_Invoker<std::tuple<main::{lambda()#3}> > >::_M_run()",
	       "std::thread::_State_impl::_M_run");
	simple("std::function<int (int)>::operator()(int) const", "std::function::operator()");
	simple("std::_Function_handler<int (int), main::{lambda(int)#1}>::_M_invoke(std::_Any_data const&, "
	       "int&&)",
	       "std::_Function_handler::_M_invoke");
	simple("std::__shared_count<(__gnu_cxx::_Lock_policy)2>::__shared_count<Widget, std::allocator<void>>("
	       "Widget*&, std::_Sp_alloc_shared_tag<std::allocator<void> >)",
	       "std::__shared_count::__shared_count");
	/* Constructors, destructors, qualifiers, clones, ABI tags. */
	simple("Foo::Foo<double>(double)", "Foo::Foo");
	simple("Foo::~Foo()", "Foo::~Foo");
	simple("Foo::get() const &", "Foo::get");
	simple("Foo::get() &&", "Foo::get");
	simple("Foo::f(int) volatile noexcept", "Foo::f");
	simple("Foo::get() [clone .cold]", "Foo::get");
	simple("foo(int) [clone .isra.0] [clone .cold]", "foo");
	simple("foo(int) [clone .constprop.0]", "foo");
	simple("get_name[abi:cxx11]()", "get_name");
	simple("std::__1::allocator<Widget>::allocate[abi:v160006](unsigned long)", "std::allocator::allocate");
	/* Operators. */
	simple("operator new(unsigned long)", "operator new");
	simple("operator new(unsigned long, std::align_val_t)", "operator new");
	simple("operator new[](unsigned long, std::nothrow_t const&)", "operator new[]");
	simple("operator delete(void*, void*)", "operator delete");
	simple("operator delete[](void*)", "operator delete[]");
	simple("Foo::operator<(Foo const&) const", "Foo::operator<");
	simple("bool operator< <int>(std::vector<int, std::allocator<int> > const&, Foo const&)", "operator<");
	simple("Foo operator<< <int>(Foo, int)", "operator<<");
	simple("Foo operator>><double>(Foo, double)", "operator>>");
	simple("std::basic_ostream<char, std::char_traits<char> >& std::operator<< <std::char_traits<char> >("
	       "std::basic_ostream<char, std::char_traits<char> >&, char const*)",
	       "std::operator<<");
	simple("Foo::operator()(int) const", "Foo::operator()");
	simple("Foo::operator[](unsigned long)", "Foo::operator[]");
	simple("Foo::operator->() const", "Foo::operator->");
	simple("Foo::operator<=>(Foo const&) const", "Foo::operator<=>");
	simple("Foo::operator=(Foo const&)", "Foo::operator=");
	simple("__gnu_cxx::__normal_iterator<int*, std::vector<int, std::allocator<int> > >::difference_type "
	       "__gnu_cxx::operator-<int*, std::vector<int, std::allocator<int> > >(__gnu_cxx::__normal_iterator<"
	       "int*, std::vector<int, std::allocator<int> > > const&, __gnu_cxx::__normal_iterator<int*, "
	       "std::vector<int, std::allocator<int> > > const&)",
	       "__gnu_cxx::operator-");
	simple("bool __gnu_cxx::operator==<int*, std::vector<int> >(int* const&, int* const&)",
	       "__gnu_cxx::operator==");
	simple("__gnu_cxx::__ops::_Iter_less_iter::operator()<int*, int*>(int*, int*) const",
	       "__gnu_cxx::__ops::_Iter_less_iter::operator()");
	simple("operator\"\" _km(unsigned long long)", "operator\"\" _km");
	simple("Foo::operator int() const", "Foo::operator int");
	simple("Foo::operator char const*() const", "Foo::operator char const*");
	simple("Foo::operator std::vector<int, std::allocator<int> >() const", "Foo::operator std::vector");
	simple("Foo::operator std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >() "
	       "const",
	       "Foo::operator std::basic_string");
	/* Lambdas, local names, anonymous namespaces. */
	simple("main::{lambda(int)#1}::operator()(int) const", "main::{lambda#1}::operator()");
	simple("auto main::{lambda(auto:1)#2}::operator()<int>(int) const", "main::{lambda#2}::operator()");
	simple("Foo::lam() const::{lambda(int)#1}::operator()(int) const", "Foo::lam::{lambda#1}::operator()");
	simple("main::{lambda(int)#1} const& std::_Any_data::_M_access<main::{lambda(int)#1}>() const",
	       "std::_Any_data::_M_access");
	simple("localf(int)::Local::g()", "localf::Local::g");
	simple("localf(int)::counter", "localf::counter");
	simple("(anonymous namespace)::helper(int)", "(anonymous namespace)::helper");
	simple("(anonymous namespace)::Cache<int>::get(int) const", "(anonymous namespace)::Cache::get");
	simple("{unnamed type#1}::operator()() const", "{unnamed type#1}::operator()");
	/* The standard library's inline namespaces and std::string. */
	simple("std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >::_M_create("
	       "unsigned long&, unsigned long)",
	       "std::string::_M_create");
	simple("std::__cxx11::basic_string<wchar_t, std::char_traits<wchar_t>, std::allocator<wchar_t> >::"
	       "reserve(unsigned long)",
	       "std::wstring::reserve");
	simple("std::__cxx11::list<int, std::allocator<int> >::push_back(int const&)", "std::list::push_back");
	simple("std::__1::vector<int, std::__1::allocator<int> >::__append(unsigned long)",
	       "std::vector::__append");
	simple("std::basic_ostream<char, std::char_traits<char> >::flush()", "std::ostream::flush");
	/* Special names keep their prefix. */
	simple("non-virtual thunk to Der::g(int)", "non-virtual thunk to Der::g");
	simple("virtual thunk to Der::~Der()", "virtual thunk to Der::~Der");
	simple("guard variable for localf(int)::x", "guard variable for localf::x");
	simple("vtable for std::vector<int, std::allocator<int> >", "vtable for std::vector");
	simple("TLS wrapper function for tls_map", "TLS wrapper function for tls_map");
	/* Names that are not C++, or that do not parse, come back as they are. */
	simple("main", "main");
	simple("make_widget", "make_widget");
	simple("foo.constprop.0", "foo.constprop.0");
	simple("libfoo.so+0x1234", "libfoo.so+0x1234");
	simple("broken<int(", "broken<int(");
	simple("f(int))", "f(int))");
	/* Already simple: simplifying again changes nothing. */
	simple("std::vector::push_back", "std::vector::push_back");
	simple("main::{lambda#1}::operator()", "main::{lambda#1}::operator()");
	simple("operator new", "operator new");
	simple("Foo::operator std::vector", "Foo::operator std::vector");

	/* Types: arguments stay, defaults go. */
	type("std::_Rb_tree_node<std::pair<int const, std::__cxx11::basic_string<char, std::char_traits<char>, "
	     "std::allocator<char> > > >",
	     "std::_Rb_tree_node<std::pair<int const, std::string>>");
	type("std::_List_node<int>", "std::_List_node<int>");
	type("std::_Sp_counted_ptr_inplace<Widget, std::allocator<void>, (__gnu_cxx::_Lock_policy)2>",
	     "std::_Sp_counted_ptr_inplace<Widget>");
	type("std::__detail::_Hash_node<std::pair<int const, int>, false>",
	     "std::__detail::_Hash_node<std::pair<int const, int>, false>");
	type("std::__detail::_Hash_node_base*", "std::__detail::_Hash_node_base*");
	type("std::unique_ptr<Widget, std::default_delete<Widget> >", "std::unique_ptr<Widget>");
	type("std::vector<int, std::allocator<int> >", "std::vector<int>");
	type("std::map<int, std::vector<int, std::allocator<int> >, std::less<int>, std::allocator<std::pair<int "
	     "const, std::vector<int, std::allocator<int> > > > >",
	     "std::map<int, std::vector<int>>");
	type("std::unordered_map<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >, "
	     "int, std::hash<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > >, "
	     "std::equal_to<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > >, "
	     "std::allocator<std::pair<std::__cxx11::basic_string<char, std::char_traits<char>, "
	     "std::allocator<char> > const, int> > >",
	     "std::unordered_map<std::string, int>");
	type("std::set<int, std::greater<int>, std::allocator<int> >", "std::set<int, std::greater<int>>");
	type("std::map<int, int, std::less<int>, Arena<std::pair<int const, int> > >",
	     "std::map<int, int, std::less<int>, Arena<std::pair<int const, int>>>");
	type("std::__cxx11::basic_string<wchar_t, std::char_traits<wchar_t>, std::allocator<wchar_t> >",
	     "std::wstring");
	type("std::__1::basic_string<char, std::__1::char_traits<char>, std::__1::allocator<char> >", "std::string");
	type("std::basic_string<char, MyTraits, std::allocator<char> >", "std::basic_string<char, MyTraits>");
	type("std::__cxx11::basic_ostringstream<char, std::char_traits<char>, std::allocator<char> >",
	     "std::ostringstream");
	type("std::function<void (std::vector<int, std::allocator<int> > const&)>",
	     "std::function<void (std::vector<int> const&)>");
	type("std::_Rb_tree_node<std::pair<(anonymous namespace)::Key const, int> >",
	     "std::_Rb_tree_node<std::pair<(anonymous namespace)::Key const, int>>");
	type("std::_List_node<main::{lambda(int)#1}>", "std::_List_node<main::{lambda(int)#1}>");
	type("Widget []", "Widget[]");
	type("Widget", "Widget");
	type("char const*", "char const*");
	type("void (*)(int)", "void (*)(int)");

	/* The type an allocating frame names, and how to size it. */
	alloc("std::__new_allocator<std::_List_node<int> >::allocate(unsigned long, void const*)",
	      "std::_List_node<int>", CXXNAME_SIZE_RETURN);
	alloc("std::__new_allocator<std::_Rb_tree_node<std::pair<int const, std::__cxx11::basic_string<char, "
	      "std::char_traits<char>, std::allocator<char> > > > >::allocate(unsigned long, void const*)",
	      "std::_Rb_tree_node<std::pair<int const, std::__cxx11::basic_string<char, std::char_traits<char>, "
	      "std::allocator<char> > > >",
	      CXXNAME_SIZE_RETURN);
	alloc("__gnu_cxx::new_allocator<int>::allocate(unsigned long, void const*)", "int", CXXNAME_SIZE_RETURN);
	alloc("std::__new_allocator<std::__detail::_Hash_node_base*>::allocate(unsigned long, void const*)",
	      "std::__detail::_Hash_node_base*", CXXNAME_SIZE_RETURN);
	alloc("std::allocator_traits<std::allocator<Widget> >::allocate(std::allocator<Widget>&, unsigned long)",
	      "Widget", CXXNAME_SIZE_RETURN);
	alloc("std::__1::allocator<Widget>::allocate[abi:v160006](unsigned long)", "Widget",
	      CXXNAME_SIZE_RETURN);
	alloc("std::__1::allocator<std::__1::__shared_ptr_emplace<Widget, std::__1::allocator<Widget> > >::"
	      "allocate[abi:v160006](unsigned long)",
	      "std::__1::__shared_ptr_emplace<Widget, std::__1::allocator<Widget> >", CXXNAME_SIZE_RETURN);
	alloc("Arena<Node, 64ul>::allocate(unsigned long)", NULL, 0);
	alloc("PoolAlloc<Node>::allocate(unsigned long)", "Node", CXXNAME_SIZE_RETURN);
	alloc("FixedAlloc<64ul>::allocate(unsigned long)", NULL, 0);
	alloc("FlagAlloc<true, Node>::allocate(unsigned long)", NULL, 0);
	alloc("EnumAlloc<(Kind)2>::allocate(unsigned long)", NULL, 0);
	alloc("std::__detail::_MakeUniq<Widget>::__single_object std::make_unique<Widget>()", "Widget",
	      CXXNAME_SIZE_TPARAM);
	alloc("std::__detail::_MakeUniq<Widget>::__single_object std::make_unique<Widget, int&, char const (&) "
	      "[4]>(int&, char const (&) [4])",
	      "Widget", CXXNAME_SIZE_TPARAM);
	alloc("std::_MakeUniq<Widget []>::__array std::make_unique<Widget []>(unsigned long)", "Widget []",
	      CXXNAME_SIZE_TPARAM);
	alloc("std::__1::unique_ptr<Widget, std::__1::default_delete<Widget> > std::__1::make_unique[abi:v160006]"
	      "<Widget>()",
	      "Widget", CXXNAME_SIZE_TPARAM);
	alloc("std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >::_M_create("
	      "unsigned long&, unsigned long)",
	      "char", CXXNAME_SIZE_NAME);
	alloc("std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >::_M_construct("
	      "unsigned long, char)",
	      "char", CXXNAME_SIZE_NAME);
	alloc("std::vector<int, std::allocator<int> >::push_back(int const&)", NULL, 0);
	alloc("std::_Vector_base<Widget, std::allocator<Widget> >::_M_allocate(unsigned long)", NULL, 0);
	alloc("operator new(unsigned long)", NULL, 0);
	alloc("my_allocate", NULL, 0);
	alloc("allocate(unsigned long)", NULL, 0);

	/* Frames that pass an allocation on. */
	ok(cxxname_is_plumbing("operator new(unsigned long)"), "operator new passes allocations on");
	ok(cxxname_is_plumbing("operator new[](unsigned long)"), "operator new[] too");
	ok(cxxname_is_plumbing("operator new(unsigned long, std::align_val_t)"), "aligned operator new too");
	ok(cxxname_is_plumbing("operator new"), "and by its short name");
	ok(cxxname_is_plumbing("void* std::__1::__libcpp_operator_new[abi:v160006]<unsigned long>(unsigned long)"),
	   "libc++'s __libcpp_operator_new too");
	ok(cxxname_is_plumbing("std::__1::__libcpp_allocate[abi:v160006](unsigned long, unsigned long)"),
	   "libc++'s __libcpp_allocate too");
	ok(!cxxname_is_plumbing("std::__new_allocator<int>::allocate(unsigned long, void const*)"),
	   "an allocator asks for the block");
	ok(!cxxname_is_plumbing("Foo::operator new_thing()"), "not an operator new");
	ok(!cxxname_is_plumbing("malloc_wrapper"), "nor a C function");

	/* Sizes of builtin types. */
	is_int(cxxname_builtin_size("char"), 1, "char");
	is_int(cxxname_builtin_size("int"), 4, "int");
	is_int(cxxname_builtin_size("int const"), 4, "int const");
	is_int(cxxname_builtin_size("unsigned long"), 8, "unsigned long");
	is_int(cxxname_builtin_size("std::__detail::_Hash_node_base*"), 8, "a pointer");
	is_int(cxxname_builtin_size("Widget"), 0, "a class: unknown");
	return tap_done();
}
