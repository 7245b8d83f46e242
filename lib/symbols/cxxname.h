/*
 * cxxname.h - C++ names people can read (issue 15): the short function
 * names every view prints by default, the type names of mprof's bin table,
 * and the type an allocating frame names.
 *
 * All of it works on the text libiberty's demangler prints (c++filt's
 * output), never on mangled names: a name this module cannot parse comes
 * back unchanged.  Strings returned are malloc'd (free them); NULL means
 * out of memory, or for cxxname_alloc_type no type.
 *
 * Function names (cxxname_simplify), as pprof prints them by default:
 *   - no return type, no parameter list, no template arguments anywhere in
 *     the name, no cv- or ref-qualifier, no [abi:...] tag, no GCC clone
 *     suffix ([clone .constprop.0], [clone .cold]);
 *       void std::vector<int, std::allocator<int> >::_M_realloc_insert<int const&>(
 *           __gnu_cxx::__normal_iterator<int*, std::vector<int> >, int const&)
 *       -> std::vector::_M_realloc_insert
 *   - an enclosing function of a local name loses its parameters too:
 *       Foo::lam() const::{lambda(int)#1}::operator()(int) const
 *       -> Foo::lam::{lambda#1}::operator()
 *     (a lambda keeps its number, which tells it from its siblings);
 *   - operators keep their symbol: operator<, operator<<, operator(),
 *     operator new, operator delete[], operator"" _km, and a conversion
 *     operator its type, itself without template arguments
 *     (Foo::operator std::vector);
 *   - (anonymous namespace) stays; the inline namespaces std::__cxx11 and
 *     std::__1 (libc++) go; std::basic_string<char, ...> is std::string
 *     (and the other std::basic_X<char> and <wchar_t> of <iosfwd>);
 *   - "non-virtual thunk to ", "guard variable for " and the demangler's
 *     other prefixes stay, before the simplified name.
 *
 * Type names (cxxname_type), for the bin table: template arguments stay
 * (they are what tells the types apart), simplified the same way inside,
 * with the arguments a program did not write left out: a trailing
 * std::allocator<...>, a trailing std::less<K>, std::hash<K>,
 * std::equal_to<K>, std::char_traits<K> or std::default_delete<K> where K
 * is the first argument, and libstdc++'s default lock policy; "> >" is
 * ">>".  std::_Rb_tree_node<std::pair<int const,
 * std::__cxx11::basic_string<char, std::char_traits<char>,
 * std::allocator<char> > > > is std::_Rb_tree_node<std::pair<int const,
 * std::string>>.
 */
#ifndef CXXNAME_H
#define CXXNAME_H

#include <stdint.h>

/* The short name of a demangled C++ function name (above). */
char *cxxname_simplify(const char *name);

/* The short name of a demangled C++ type (above). */
char *cxxname_type(const char *type);

/* How the size of the type cxxname_alloc_type names is best learnt. */
enum cxxname_size {
	CXXNAME_SIZE_RETURN, /* the frame returns T*: its DWARF return type */
	CXXNAME_SIZE_TPARAM, /* T is the function's first template parameter */
	CXXNAME_SIZE_NAME,   /* T is a character type: cxxname_builtin_size */
};

/*
 * The type T whose storage a frame of this (demangled, full) name asks
 * for, as the demangler wrote it, or NULL:
 *   X<T, ...>::allocate(...)         X an allocator (its name holds
 *                                    "alloc": std::__new_allocator,
 *                                    __gnu_cxx::new_allocator,
 *                                    std::allocator, libc++'s)
 *   std::allocator_traits<X<T, ...> >::allocate(...)
 *   std::make_unique<T, ...>(...), std::make_unique_for_overwrite<T>
 *   std::basic_string<T, ...>::any member (its character buffer)
 * *how tells how to learn sizeof(T).
 */
char *cxxname_alloc_type(const char *name, enum cxxname_size *how);

/*
 * Whether a frame of this name (short or full) only passes an allocation
 * on: operator new and new[] of any overload, libc++'s
 * std::__libcpp_allocate and std::__libcpp_operator_new.  The frame that
 * asked for the block is the first one out of these.
 */
int cxxname_is_plumbing(const char *name);

/* sizeof a builtin type or a pointer on LP64 (char 1, int 4, long 8,
 * T* 8, ...), 0 for any other. */
uint64_t cxxname_builtin_size(const char *type);

#endif
