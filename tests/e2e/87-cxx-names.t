# C++ names people can read (issue 15).  tests/progs/cxx_names.cc, built
# with g++ and with clang++ (-g -O0: the allocators' frames are real
# calls), fills a map, a list, vectors, an unordered_map, make_unique and
# make_shared blocks and a long string, with known counts, all kept at
# exit.  The bin table must name each block by the frame that allocated it
# (std::_Rb_tree_node<std::pair<int const, std::string>> at 72 bytes,
# Widget[10] at 10 * sizeof(Widget), ...), and leave the blocks of plain
# new[] and malloc unnamed; every view (mprof's tables, cpprof, cfprof,
# folded, pprof, HTML) prints short names by default, the two
# instantiations of make_n as one function, and the full names with
# --full-names.
. "$(dirname "$0")/../lib.sh"
plan 86
CPPROF=$B/bin/cpprof
CFPROF=$B/bin/cfprof
PPROF=$B/tools/pprof
cd "$T" || exit 1

# bin OUT SIZE ALLOCS TYPES NAME: bin SIZE of OUT holds ALLOCS allocations
# (all kept) and its types column is TYPES (an ERE).
bin() {
	like "$1" "^ +$2 +$3 +$(($2 * $3)) \\(..\\) +0 +$(($2 * $3)) \\(..\\)  $4\$" "$5"
}

for cxx in g++ clang++; do
	if ! command -v $cxx > /dev/null 2>&1 || ! $cxx -g -O0 -o names_$cxx "$TOP/tests/progs/cxx_names.cc"; then
		absent 12 "$cxx cannot build cxx_names.cc (scripts/install-deps.sh installs g++ and clang)"
		continue
	fi
	"$MPROF" run -o $cxx.data ./names_$cxx > $cxx.out
	set -- $(sed -n 's/^sizeof Widget \([0-9]*\) Gadget \([0-9]*\) buckets \([0-9]*\)$/\1 \2 \3/p' $cxx.out)
	w=$1 g=$2 nb=$3
	out=$("$MPROF" -verbose ./names_$cxx $cxx.data)
	bin "$out" 72 100 'std::_Rb_tree_node<std::pair<int const, std::string>>' \
		"$cxx: 100 map nodes, std::_Rb_tree_node<std::pair<int const, std::string>>"
	bin "$out" 24 30 'std::_List_node<int>' "$cxx: 30 list nodes, std::_List_node<int>"
	bin "$out" 16 20 'std::__detail::_Hash_node<std::pair<int const, int>, false>' \
		"$cxx: 20 unordered_map nodes"
	bin "$out" $((8 * nb)) 1 "std::__detail::_Hash_node_base\\*\\[$nb\\]" \
		"$cxx: its bucket array, $nb pointers"
	bin "$out" $((10 * w)) 1 'Widget\[10\]' "$cxx: vector<Widget>::reserve(10): Widget[10] ($((10 * w)) bytes)"
	bin "$out" $w 5 'Widget' "$cxx: 5 make_unique<Widget>: Widget ($w bytes)"
	bin "$out" 40 1 'std::unique_ptr<Widget>\[5\]' "$cxx: the vector of 5 unique_ptrs"
	bin "$out" $((w + 16)) 7 'std::_Sp_counted_ptr_inplace<Widget>' \
		"$cxx: 7 make_shared<Widget>: std::_Sp_counted_ptr_inplace<Widget>"
	bin "$out" 112 1 'std::shared_ptr<Widget>\[7\]' "$cxx: the vector of 7 shared_ptrs"
	bin "$out" $g 4 'Gadget' "$cxx: 4 make_unique<Gadget> in a lambda: Gadget ($g bytes)"
	bin "$out" 101 1 'char\[101\]' "$cxx: a string of 100 characters: char[101]"
	bin "$out" 120 3 'a_rather_long_namespace_name::HolderOfThreeThings<Widget, \.\.\.>( \.\.\. \([0-9]+ more\))?' \
		"$cxx: a type whose name is longer than the column: cut after a template argument, its bracket closed"
	is "$(printf '%s\n' "$out" | grep -E '^ +(100 +3|200 +2|777 +1) ' | grep -cE '\)  $')" 3 \
		"$cxx: new int[25], new double[25] and malloc name no type"
done

# The views, by default: short names (g++'s program, as above).
out=$("$MPROF" -verbose ./names_g++ g++.data)
unlike "$out" 'std::__cxx11::basic_string<char, std::char_traits<char>' "no std::__cxx11::basic_string<char, std::char_traits<char>, ...> by default"
unlike "$(printf '%s\n' "$out" | sed '1,/MEMORY LEAKS/d')" '\(unsigned long\)|\(int\)|<int>' \
	"no parameter lists, no template arguments in function names"
like "$out" '^ +700 \(..\) +5 +700 \(..\) +main > make_n > operator new$' \
	"make_n<int> and make_n<double> are one make_n: one leak chain of 5 allocations"
like "$out" '^ +352 \(..\) +4 +352 \(..\) +main > main::\{lambda#1\}::operator\(\) > std::make_unique > operator new$' \
	"a lambda is {lambda#1}, make_unique<Gadget, long&>(long&) std::make_unique"
like "$out" '^ +[0-9]+ +[0-9]+ .* [0-9]+  operator new$' "operator new(unsigned long) is operator new"
like "$out" ' 1  \(anonymous namespace\)::scratch$' "(anonymous namespace) stays"
is "$(printf '%s\n' "$out" | grep -cE '^\[[0-9]+\] .* make_n \[[0-9]+\]$')" 1 "one call graph entry for make_n"
like "$out" '^\[[0-9]+\] .* 5\+0 +make_n \[[0-9]+\]$' "called 5 times (3 + 2)"
like "$out" '^ +72 +100 .*  std::_Rb_tree_node<std::pair<int const, std::string>>$' "bin 72 as above"

# --full-names (mprof takes -full-names too): as demangled.
out=$("$MPROF" -verbose --full-names ./names_g++ g++.data)
like "$out" '^ +120 +3 +360 .*  a_rather_long_namespace_name::HolderOfThreeThings<Widget, Gadget, std::unique_ptr<Widget, std::default_delete<Widget> > >' \
	"--full-names: a long type in full"
like "$out" '^ +72 +100 .*  std::_Rb_tree_node<std::pair<int const, std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > > >$' \
	"--full-names: bin 72's type in full"
like "$out" '^ +300 \(..\) +3 +300 \(..\) +main > int\* make_n<int>\(int\) > operator new\(unsigned long\)$' \
	"--full-names: make_n<int> apart, with its return type and parameters"
like "$out" '^ +400 \(..\) +2 +400 \(..\) +main > double\* make_n<double>\(int\) > operator new\(unsigned long\)$' \
	"--full-names: make_n<double> apart"
like "$out" ' 1  \(anonymous namespace\)::scratch\(unsigned long\)$' "--full-names: (anonymous namespace)::scratch(unsigned long)"
is "$("$MPROF" -verbose -full-names ./names_g++ g++.data)" "$out" "-full-names is --full-names"

# cpprof: short names; a name typed short or in full; --full-names and
# full-names on|off; a name with a space.
cp=$("$CPPROF" -c 'threshold 0; down make_n' ./names_g++ g++.data)
like "$cp" '^0\.[0-9]+ \(make_n\) \[700\]$' "cpprof: down make_n: 700 bytes under the merged make_n"
cp=$("$CPPROF" -c 'threshold 0; down int* make_n<int>(int)' ./names_g++ g++.data)
like "$cp" '^0\.[0-9]+ \(make_n\) \[700\]$' "cpprof: a full name typed finds its short function"
cp=$("$CPPROF" --full-names -c 'threshold 0; down make_n' ./names_g++ g++.data)
like "$cp" '^0\.[0-9]+ \(int\* make_n<int>\(int\)\) \[300\]$' "cpprof --full-names: a short name finds every instantiation (int)"
like "$cp" '^0\.[0-9]+ \(double\* make_n<double>\(int\)\) \[400\]$' "cpprof --full-names: ... and double"
cp=$("$CPPROF" -c 'threshold 0; full-names on; function; full-names off; function' ./names_g++ g++.data)
is "$(printf '%s\n' "$cp" | grep -cE ' std::vector<Widget, std::allocator<Widget> >::reserve\(unsigned long\) \[480\]$')/$(printf '%s\n' "$cp" | grep -cE ' std::vector::reserve \[')" \
	"1/1" "cpprof: full-names on, then off again"
cp=$("$CPPROF" -c 'threshold 0; root  operator   new ; up' ./names_g++ g++.data)
like "$cp" '^0\.[0-9]+ \(operator new\) \[[0-9]+\]$' "cpprof: root operator new (the rest of the line, one space)"

# cfprof: a program built with -finstrument-functions counts make_n's
# calls: 5 as one function, 3 and 2 with --full-names.
if g++ -g -O0 -finstrument-functions -o cf_names "$TOP/tests/progs/cxx_names.cc" &&
	"$CFPROF" record -o cf.data ./cf_names > /dev/null; then
	flat=$("$CFPROF" -p ./cf_names cf.data)
	is "$(printf '%s\n' "$flat" | awk '$5 == "make_n" && NF == 5 { print $3 }')" 5 "cfprof: make_n called 5 times"
	flat=$("$CFPROF" -p --full-names ./cf_names cf.data)
	is "$(printf '%s\n' "$flat" | awk '/ int\* make_n<int>\(int\)$/ { print $3 }')/$(printf '%s\n' "$flat" | awk '/ double\* make_n<double>\(int\)$/ { print $3 }')" \
		"3/2" "cfprof --full-names: make_n<int> 3 times, make_n<double> twice"
else
	fail "cfprof record"; fail "cfprof record"
fi

# Exports.
f=$("$MPROF" export --format folded --counter alloc_objects ./names_g++ g++.data)
like "$f" '^main;std::make_unique;operator new 8$' "folded: short names (5 Widgets and 3 Holders from one make_unique)"
# libstdc++'s constructor's allocation, under the loader's entry label
# _dl_start_user (untyped, sizeless: libc6-dbg's symbols), not an address.
like "$f" '^_dl_start_user;_dl_init;call_init;' "folded: the loader's _dl_start_user named (a label in code)"
f=$("$MPROF" export --format folded --counter alloc_objects --full-names ./names_g++ g++.data)
like "$f" '^main;std::__detail::_MakeUniq<Widget>::__single_object std::make_unique<Widget>\(\);operator new\(unsigned long\) 5$' \
	"folded --full-names: full names"
"$MPROF" export --format html -o r.html ./names_g++ g++.data
html=$(cat r.html)
like "$html" '"std::make_unique"' "html: short names"
unlike "$html" 'std::__cxx11::basic_string<char, std::char_traits<char>' "html: no full names, in the stacks or the tables"
like "$html" 'std::_Rb_tree_node\\u003cstd::pair\\u003cint const, std::string\\u003e\\u003e' \
	"html: the tables name the map's nodes (in JSON, < is \\u003c)"
if [ -x "$PPROF" ]; then
	"$MPROF" export --format pprof -o p.pb.gz ./names_g++ g++.data
	like "$("$PPROF" -traces p.pb.gz 2> /dev/null)" '^ +std::make_unique$' "pprof: the short name"
	like "$("$PPROF" -raw p.pb.gz 2> /dev/null)" ' std::make_unique [^ ]+ s=0\(_ZSt11make_uniqueI6WidgetJEE' \
		"pprof: system_name is the mangled symbol"
	like "$("$PPROF" -symbolize=demangle=full -traces p.pb.gz 2> /dev/null)" 'std::make_unique<Widget>\(\)$' \
		"pprof -symbolize=demangle=full: full names from the system names"
else
	absent 3 "no $PPROF (make check builds it)"
fi
# glibc's symbol table spells a symbol's version into its name
# (__libc_start_main@@GLIBC_2.34): the tables and exports print the name
# without it, as perf and heaptrack do; the pprof export's system name
# keeps it.
"$MPROF" run -o ver.data /usr/bin/python3 -c 'print(1)' > /dev/null 2>&1
is "$("$MPROF" ver.data | grep -c '@')/$("$MPROF" export --format folded ver.data | grep -c '@GLIBC')/$("$MPROF" -all-frames ver.data | grep -c '^\[[0-9]*\] .* __libc_start_main \[')" "0/0/1" \
	"versioned glibc symbols: named without the version (__libc_start_main in the call graph)"
# Debian's python3 is stripped: its main has no name.  The frames outer
# to it (_start, __libc_start_main) stayed in every chain and the call
# graph; now the function __libc_start_call_main calls is main, as in
# cpprof's views, and they drop (-all-frames keeps them).
is "$("$MPROF" ver.data | grep -c '__libc_start')/$("$MPROF" export --format folded ver.data | grep -c '__libc_start')" "0/0" \
	"a stripped program: the frames outer to its nameless main drop, as a named main's"

# Partial chains through the C++ library: at -O2 push_back is five
# inlined library frames down to operator new, and the leak table's five
# frames were those alone: "... > std::vector::_M_realloc_insert > ... >
# operator new", both callers' 7,808 bytes in one row.  The library's
# frames are shown and not counted: each caller has its own row, its
# bytes the program's known answer (tests/progs/cxx_chains.cc).
for cxx in g++ clang++; do
	if ! $cxx -g -O2 -o chains_$cxx "$TOP/tests/progs/cxx_chains.cc"; then
		absent 6 "$cxx cannot build cxx_chains.cc (scripts/install-deps.sh installs g++ and clang)"
		continue
	fi
	"$MPROF" run -o ch_$cxx.data ./chains_$cxx
	leaks=$("$MPROF" ch_$cxx.data | sed -n '/^--------- MEMORY LEAKS/,/^--------- HEAP PEAK/p')
	# row CHAIN: the kept bytes of the leak table's row whose path begins CHAIN.
	row() { printf '%s\n' "$leaks" | awk -v c="$1" 'index($0, "  " c " > ") || substr($0, length($0) - length(c) + 1) == c { print $1 }' | head -1; }
	is "$(row 'main > parse_config > fill_vec > std::vector::push_back [inline]')/$(row 'main > load_users > fill_vec > std::vector::push_back [inline]')" \
		"5120/2560" "$cxx -O2: each caller of push_back its own leak row (10 x 512 and 10 x 256 bytes)"
	is "$(row 'main > parse_config > fill_map > std::map::operator[] [inline]')" 14400 \
		"$cxx -O2: map's operator[], under the function that called it (300 x 48 bytes)"
	is "$(printf '%s\n' "$leaks" | grep -c '\.\.\. > std::')" 0 "$cxx -O2: no chain begins inside the library"
	# Five or more library frames in a row print as the first, "(N
	# more)" and the last: rows of 17 std::regex frames reached 1,022
	# characters.  -verbose prints them all.
	like "$leaks" '^ +5120 .* main > parse_config > fill_vec > std::vector::push_back \[inline\] > \(4 more\) > operator new$' \
		"$cxx -O2: push_back's library frames as push_back > (4 more) > operator new"
	like "$("$MPROF" -verbose ch_$cxx.data)" '^ +5120 .* > fill_vec > std::vector::push_back \[inline\] > std::vector::_M_realloc_insert( \[inline\])? > ' \
		"$cxx -O2: -verbose prints every library frame"
	peak=$("$MPROF" ch_$cxx.data | sed -n '/^--------- HEAP PEAK/,/^--------- DIRECT/p')
	like "$peak" '^ +5120 .* main > parse_config > fill_vec > std::vector::push_back \[inline\] > ' \
		"$cxx -O2: the peak table's chains the same"
done

# Rust: its standard crates' frames (alloc::, core::, std::, hashbrown::,
# <alloc::alloc::Global as core::alloc::Allocator>::grow) are the
# library's too.  Every leak chain was five of them, the program's
# functions cut off: "... > alloc::raw_vec::finish_grow > ... >
# alloc::alloc::realloc [inline]".
if command -v rustc > /dev/null 2>&1 && rustc -O -g -o rs_chains "$TOP/tests/progs/rs_chains.rs" 2> rustc.err; then
	"$MPROF" run -o rs.data ./rs_chains > rs.out
	leaks=$("$MPROF" rs.data | sed -n '/^--------- MEMORY LEAKS/,/^--------- HEAP PEAK/p')
	is "$(cat rs.out)" "1000 100 4096" "Rust: the program's output"
	# A chain begins where the thread's own code does, inside std's
	# __rust_begin_short_backtrace, as Rust's backtraces do: not at C's
	# main > std::rt::lang_start_internal > (10 more) > call_once.
	like "$leaks" '  rs_chains::main > rs_chains::build > rs_chains::fill > ' \
		"Rust: a Vec's growth under the functions that pushed (main > build > fill), from the program's main"
	# vec![7u8; n]: <u8 as alloc::vec::spec_from_elem::SpecFromElem>, a
	# trait of alloc's on a primitive type, is the library's too.
	like "$leaks" '  rs_chains::main > rs_chains::bytes > alloc::vec::from_elem( \[inline\])? > \([0-9]+ more\) > [^>]*$' \
		"Rust: vec![7u8; n] under bytes(), the library's frames folded"
	like "$leaks" '  rs_chains::main::\{\{closure\}\}( \[inline\])? > rs_chains::build > rs_chains::fill > ' \
		"Rust: a spawned thread's chain begins at its closure (not ... > start_thread > thread_start > ...)"
	unlike "$leaks" 'std::rt::lang_start_internal > .*rs_chains::|thread_start' \
		"Rust: no chain of the program's goes through the runtime's start"
	# The depth used up on the thread's first frame: no "..." above it.
	like "$("$MPROF" -depth 3 rs.data)" '[0-9]  rs_chains::main::\{\{closure\}\}( \[inline\])? > rs_chains::build > rs_chains::fill > ' \
		"Rust, -depth 3: the thread's chain, its three frames, no '...' above them"
	like "$("$MPROF" -all-frames rs.data | sed -n '/^--------- MEMORY LEAKS/,/^--------- HEAP PEAK/p')" \
		'__rust_begin_short_backtrace' \
		"Rust, -all-frames: the runtime's frames above the program's kept"
	# Rust's v0 mangling: <fn() as FnOnce<()>>::call_once and
	# __rust_begin_short_backtrace::<fn(), ()>.
	if rustc -O -g -C symbol-mangling-version=v0 -o rs_v0 "$TOP/tests/progs/rs_chains.rs" 2>> rustc.err; then
		"$MPROF" run -o v0.data ./rs_v0 > /dev/null
		l=$("$MPROF" v0.data | sed -n '/^--------- MEMORY LEAKS/,/^--------- HEAP PEAK/p')
		like "$l" '  rs_chains::main > rs_chains::build > rs_chains::fill > ' "Rust v0 names: main's chain from rs_chains::main"
		like "$l" '  rs_chains::main::\{closure#[0-9]+\}( \[inline\])? > rs_chains::build > rs_chains::fill > ' \
			"Rust v0 names: the thread's from its closure"
	else
		fail "rustc -C symbol-mangling-version=v0: $(tail -c 300 rustc.err)"
		fail "not run: no v0 build"
	fi
	# -O0 (cargo's debug build): catch_unwind's __rust_try, LLVM's, with no
	# DWARF and a codegen unit's file symbol, is the library's: not
	# rs_chains.1a2b-cgu.0:__rust_try (a review saw three such in a
	# program whose __rust_try were in three codegen units).
	if rustc -C opt-level=0 -g -o rs_O0 "$TOP/tests/progs/rs_chains.rs" 2>> rustc.err; then
		"$MPROF" run -o O0.data ./rs_O0 > /dev/null
		l=$("$MPROF" -verbose O0.data)
		like "$l" '> __rust_try > ' "Rust -O0: __rust_try by its name"
		unlike "$l" 'cgu\.[0-9]+:' "Rust -O0: no function named after a codegen unit"
	else
		fail "rustc -C opt-level=0: $(tail -c 300 rustc.err)"
		fail "not run: no -O0 build"
	fi
	# A Rust library called from C (built -O2: no __rust_ shim on any
	# stack): a Rust program all the same; its thread's chain begins at
	# its closure.
	cat > rslib.rs <<'REOF'
#[inline(never)]
fn build(n: u64) -> Vec<u64> {
    (0..n).collect()
}
#[no_mangle]
pub extern "C" fn rs_thread(n: u64) {
    std::thread::spawn(move || std::mem::forget(build(n))).join().unwrap();
}
REOF
	printf 'void rs_thread(unsigned long);\nint main(void) { rs_thread(500); return 0; }\n' > cmain.c
	if rustc --crate-type cdylib -O -g -o librsl.so rslib.rs 2>> rustc.err &&
		cc -g -o cmain cmain.c -L. -lrsl -Wl,-rpath,"$T"; then
		"$MPROF" run -o cd.data ./cmain
		like "$("$MPROF" cd.data)" '  rslib::rs_thread::\{\{closure\}\}( \[inline\])? > rslib::build' \
			"a Rust cdylib under a C main: its thread's chain from its closure"
	else
		fail "rustc --crate-type cdylib: $(tail -c 300 rustc.err)"
	fi
else
	fail "rustc cannot build rs_chains.rs (scripts/install-deps.sh installs Debian's rustc): $(head -c 300 rustc.err 2> /dev/null)"
	for i in 1 2 3 4 5 6 7 8 9 10 11; do fail "rustc missing"; done
fi
# A C++ program's own namespace named core or alloc is the program's:
# Rust's crates are the library's only in a Rust program.  (Its five
# frames in core:: were folded away as "(5 more)".)
cat > ns.cc <<'CEOF'
#include <cstdlib>
#include <cstring>
#define NI __attribute__((noinline))
namespace core {
NI void *make_buf(size_t n) { void *p = malloc(n); memset(p, 1, n); return p; }
NI void *parse_header(int i) { return make_buf(100 + i); }
NI void *parse_body(int i) { return parse_header(i); }
NI void *parse_doc(int i) { return parse_body(i); }
NI void *load_file(int i) { return parse_doc(i); }
}
namespace alloc { NI void *pool_get(int i) { return core::load_file(i); } }
void *keep[100];
int main() { for (int i = 0; i < 100; i++) keep[i] = alloc::pool_get(i); }
CEOF
g++ -O1 -g -fno-inline -fno-optimize-sibling-calls -o ns ns.cc || exit 1
"$MPROF" run -o ns.data ./ns
like "$("$MPROF" ns.data)" '^ +14950 .* \.\.\. > core::load_file > core::parse_doc > core::parse_body > core::parse_header > core::make_buf$' \
	"C++ namespaces core and alloc of the program's own: counted, not folded"
# Two chains that differ only inside a folded run print alike: one row
# (they were two rows alike, 100 and 200 bytes).
cat > dup.cc <<'CEOF'
#include <cstdlib>
#define NI __attribute__((noinline))
void *keep[64]; int nk;
NI void *leaf(size_t n) { return keep[nk++] = malloc(n); }
namespace std {
NI void *a5(size_t n) { return leaf(n); }
NI void *a4(size_t n) { return a5(n); }
NI void *a3(size_t n) { return a4(n); }
NI void *p(size_t n) { return a3(n); }
NI void *q(size_t n) { return a3(n); }
NI void *a1(int w) { return w ? p(100) : q(200); }
}
NI void x() { std::a1(0); std::a1(1); }
int main() { x(); }
CEOF
g++ -O1 -g -fno-inline -fno-optimize-sibling-calls -o dup dup.cc || exit 1
"$MPROF" run -o dup.data ./dup
is "$("$MPROF" dup.data | grep -c 'main > x > std::a1 > (3 more) > std::a5 > leaf$')/$("$MPROF" dup.data | grep -c '^ *300 (\*\*) *2 .*main > x > std::a1 > (3 more) > std::a5 > leaf$')" "2/2" \
	"chains alike once folded: one leak row and one peak row, 300 bytes in 2 objects"
done_testing
