#!/bin/sh
# mkcorpus.sh BUILD_DIR: (re)write tests/fuzz/corpus/, the fuzz target's
# seeds and tests/e2e/58-fuzz.t's replay: the hostile files of issues 12 and 22,
# small (made by BUILD_DIR/tests/hostile), and real profiles (one with
# the leak classes).  Module
# paths name files every machine has: /proc/self/exe is the program
# reading the file (the fuzz target, with its DWARF).
set -eu
B=${1:?usage: mkcorpus.sh BUILD_DIR}
H=$B/tests/hostile
C=$(cd "$(dirname "$0")" && pwd)/corpus
mkdir -p "$C"
rm -f "$C"/*
"$H" dupmod "$C/dupmod" /proc/self/exe
"$H" overlap "$C/overlap" /proc/self/exe
"$H" samebias "$C/samebias" /proc/self/exe /usr/bin/true
"$H" modpath "$C/modpath-dev" /dev/zero
"$H" modpath "$C/modpath-dir" /tmp
"$H" modpath "$C/modpath-proc" /proc/self/mem
"$H" modpath "$C/modpath-self" /proc/self/exe
"$H" nostacks "$C/nostacks"
"$H" zeros "$C/zeros"
"$H" reorder "$C/reorder"
"$H" chain "$C/chain" 40
"$H" cpchain "$C/cpchain" 40
"$H" fan "$C/fan" 40
"$H" cpfan "$C/cpfan" 40
"$H" distinct "$C/distinct" 100
"$H" distinct "$C/distinct-gap" 40 0x8000000
"$H" mdistinct "$C/mdistinct" 40 0x8000000
"$H" ctrl "$C/ctrl"
"$H" ctrl "$C/ctrl-cf" cf
"$H" ctrlcounter "$C/ctrlcounter"
# Demangled names for lib/symbols/cxxname.c, which reads every input as one: a
# long function name, an allocating frame, operators, and the unbalanced
# conversion operators whose rescans once took seconds.
printf '%s' 'std::_Rb_tree_node<std::pair<int const, std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > > >* std::_Rb_tree<int, std::pair<int const, std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > >, std::_Select1st<std::pair<int const, std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > > >, std::less<int>, std::allocator<std::pair<int const, std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > > > >::_M_create_node<std::piecewise_construct_t const&, std::tuple<int&&>, std::tuple<> >(std::piecewise_construct_t const&, std::tuple<int&&>&&, std::tuple<>&&) const::{lambda(int)#1}::operator()<int>(int) const [clone .cold]' > "$C/cxx-function-name"
printf '%s' 'std::allocator_traits<std::allocator<std::_Sp_counted_ptr_inplace<Widget, std::allocator<void>, (__gnu_cxx::_Lock_policy)2> > >::allocate(std::allocator<std::_Sp_counted_ptr_inplace<Widget, std::allocator<void>, (__gnu_cxx::_Lock_policy)2> >&, unsigned long)' > "$C/cxx-alloc-frame"
printf '%s' 'Foo::operator std::__cxx11::basic_string<wchar_t, std::char_traits<wchar_t>, std::allocator<wchar_t> >() const; bool operator< <int>(Foo<int> const&); void (*pick<int>(int))(int); non-virtual thunk to (anonymous namespace)::Der::g(int) &&' > "$C/cxx-operators"
i=0
while [ $i -lt 40 ]; do printf '(operator a<[xxx'; i=$((i + 1)); done > "$C/cxx-operator-rescan"
# Real profiles: an allocation profile and a CPU profile of test programs.
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
top=$(cd "$(dirname "$0")/../.." && pwd)
cc -g -o "$T/fg" "$top/tests/progs/fg.c"
"$B/bin/mprof" run -o "$C/fg.mprof" "$T/fg" > /dev/null
# With the leak classes (mprof run --leaks).
"$B/bin/mprof" run --leaks -o "$C/fg-leaks.mprof" "$T/fg" > /dev/null
# Objects a program reported itself: categories in the stacks' flags.
cc -g -I"$top/include" -o "$T/pool" "$top/tests/progs/pool.c"
"$B/bin/mprof" run -o "$C/pool.mprof" "$T/pool" > /dev/null
cc -O2 -g -o "$T/phases" "$top/examples/phases.c"
"$B/bin/cpprof" record -e cpu:200us -o "$C/phases.cpprof" "$T/phases" > /dev/null
ls -l "$C"
