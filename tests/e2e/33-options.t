# Display options on real programs: -offsets, -lines, -depth, -terse,
# -noleaktable; libc callbacks (qsort) and shared libraries.  And --help
# after a verb: its usage on standard output, exit 0 (issue 22, item 8).
# Another tool's command (`mprof record ./x`, `cfprof list`) is said to
# be none, and a missing default data file says where one comes from.
. "$(dirname "$0")/../lib.sh"
plan 30
cc_prog "$T/qsortcb" qsortcb.c
"$MPROF" run -o "$T/q.data" "$T/qsortcb"; ok $? "qsort program runs"
out=$("$MPROF" "$T/q.data")
like "$out" '^ +1000 \(\*\*\) +1 +1000 \(74\) +\.\.\. > .* > cmp$' "leak inside a qsort comparator: a partial chain ending in cmp"
like "$out" '^ +\*\* +1336 .* +8  cmp$' "cmp allocated directly: 1336 bytes in 8 calls"
out=$("$MPROF" -depth 100 "$T/q.data")
like "$out" ' main > qsort(_r)? > .* > cmp$' "-depth 100: the whole chain from main, through libc's qsort"
is "$("$MPROF" --depth=100 "$T/q.data")" "$out" "--depth=100 as -depth 100 (it was an unknown option)"
out=$("$MPROF" -offsets "$T/q.data")
like "$out" 'cmp\+[0-9]+$' "-offsets: +n call-site offsets"
out=$("$MPROF" -lines "$T/q.data")
like "$out" 'cmp \(qsortcb.c:1[0-9]\)$' "-lines: file:line of the call"
out=$("$MPROF" -noleaktable "$T/q.data")
unlike "$out" 'MEMORY LEAKS' "-noleaktable"
out=$("$MPROF" --terse "$T/q.data")
like "$out" 'MEMORY LEAKS' "--terse accepted with two dashes"

cc -g -O0 -shared -fPIC -o "$T/libshlib.so" "$TOP/tests/progs/shlib.c"
cc -g -O0 -o "$T/shmain" "$TOP/tests/progs/shmain.c" -L"$T" -lshlib -Wl,-rpath,"$T"
"$MPROF" run -o "$T/s.data" "$T/shmain"; ok $? "shared-library program runs"
out=$("$MPROF" "$T/s.data")
like "$out" '^ +2400 \(\*\*\) +25 +2400 \(\*\*\) +main > shlib_make$' "allocations in a shared library resolve: 25 x 96 bytes kept"
like "$out" '^ +96 +25 +2400 \(\*\*\) +0 +2400 \(\*\*\)  shlib_node$' "bin 96 names the library's type shlib_node"
"$MPROF" "$T/shmain" "$T/s.data" >/dev/null 2>"$T/err"; ok $? "a.out given explicitly"

for v in run dump; do
	"$MPROF" $v --help > "$T/out" 2> "$T/err"
	is "$?/$(head -1 "$T/out" | awk '{ print $1, $2, $3 }')/$(wc -c < "$T/err")" "0/usage: mprof $v/0" \
		"mprof $v --help: the usage on standard output, exit 0"
done
CFPROF=$B/bin/cfprof CPPROF=$B/bin/cpprof
mkdir "$T/empty" && cd "$T/empty" || exit 1
"$MPROF" record "$T/qsortcb" > "$T/out" 2> "$T/err"
is "$?/$(cat "$T/err")/$(wc -c < "$T/out")" \
	"2/mprof: record: no such file, nor a command of mprof's (run, snapshot, dump, timeline, export, merge, diff)/0" \
	"mprof record PROG: not a command (it read record as the a.out)"
"$CFPROF" list > "$T/out" 2> "$T/err"
is "$?/$(cat "$T/err")" "2/cfprof: list: no such file, nor a command of cfprof's (record, export, merge, diff)" \
	"cfprof list: cpprof's command, not cfprof's"
"$MPROF" "$T/qsortcb" > "$T/out" 2> "$T/err"
is "$?/$(cat "$T/err")" "2/mprof: no mprof.data here: give the profile's file (mprof run PROG writes mprof.data)" \
	"no mprof.data: where one comes from"
"$CFPROF" > "$T/out" 2> "$T/err"
is "$?/$(cat "$T/err")" "2/cfprof: no cfprof.data here: give the profile's file (cfprof record PROG writes cfprof.data)" \
	"no cfprof.data: the same"
# -alloc-fn NAME (memcheck's --alloc-fn): an allocator wrapper's callers
# allocate.  Without it every byte is xmalloc's in the direct table (the
# paper's table of who calls the allocator), and the leak chains end in
# it.  Known answer (tests/progs/wrappers.c): parse 23,000 bytes kept,
# load 50,000.
cc -g -O0 -o "$T/wrappers" "$TOP/tests/progs/wrappers.c" || exit 1
"$MPROF" run -o "$T/w.data" "$T/wrappers" || exit 1
out=$("$MPROF" -alloc-fn xmalloc -alloc-fn xstrdup "$T/w.data" 2> "$T/err")
direct=$(printf '%s\n' "$out" | awk '/^--------- DIRECT/ { d = 1 } /^--------- ALLOCATION CALL/ { d = 0 } d && $1 ~ /^[0-9]+$/ && $NF ~ /^[a-z]/ { print $NF "=" $2 }' | sort | tr '\n' ' ')
is "$direct" "load=50000 parse=23000 " "-alloc-fn xmalloc -alloc-fn xstrdup: the direct table charges their callers"
like "$out" '^ +23000 \([0-9 ]+\) +1010 +23000 \([0-9 ]+\) +main > parse$' "... the leak chains end at the caller"
is "$(cat "$T/err")" "" "... and nothing is said of a name the profile has"
is "$("$MPROF" export --format folded --alloc-fn xmalloc --alloc-fn xstrdup "$T/w.data" | sort | tr '\n' ' ')" \
	"main;load 50000 main;parse 23000 " "export --alloc-fn: the folded stacks end at the callers"
"$MPROF" -alloc-fn xmaloc "$T/w.data" > /dev/null 2> "$T/err"
is "$?/$(cat "$T/err")" "0/mprof: -alloc-fn: no stack has a caller of 'xmaloc': nothing changed" \
	"-alloc-fn with a name no stack has: said (a typo left the tables as they were)"
"$MPROF" -alloc-fn main "$T/w.data" > /dev/null 2> "$T/err"
is "$(cat "$T/err")" "mprof: -alloc-fn: no stack has a caller of 'main': nothing changed" \
	"-alloc-fn main (outermost, no caller): said, not silently nothing"
"$MPROF" diff -alloc-fn=xmalloc -alloc-fn nosuch "$T/w.data" "$T/w.data" > /dev/null 2> "$T/err"
is "$?/$(cat "$T/err")" "0/mprof: diff: -alloc-fn: no stack of either has a caller of 'nosuch': nothing changed" \
	"diff -alloc-fn=NAME taken; a name no stack has, said"
like "$("$MPROF" timeline -alloc-fn xmalloc -alloc-fn xstrdup "$T/w.data")" '  main > parse$' \
	"timeline -alloc-fn: its key's stacks end at the callers"
is "$("$MPROF" export --format folded --alloc-fn=xmalloc "$T/w.data" | sort | tr '\n' ' ')" \
	"main;load 50000 main;parse 8000 main;parse;xstrdup 15000 " "export --alloc-fn=NAME, one wrapper of two"
# A C++ wrapper by the name the tables print, with -full-names too.
cat > "$T/pool.cc" <<'CEOF'
#include <cstdlib>
namespace ns { struct Pool { __attribute__((noinline)) void *get(unsigned long n) { return malloc(n); } }; }
__attribute__((noinline)) void user(ns::Pool &p) { for (int i = 0; i < 10; i++) p.get(100); }
int main() { ns::Pool p; user(p); return 0; }
CEOF
g++ -O0 -g -o "$T/pool" "$T/pool.cc" && "$MPROF" run -o "$T/pool.data" "$T/pool" || exit 1
is "$("$MPROF" -alloc-fn ns::Pool::get "$T/pool.data" | awk '/^--------- DIRECT/ { d = 1 } d && $NF == "user" { print $2 }')/$("$MPROF" -full-names -alloc-fn ns::Pool::get "$T/pool.data" | awk '/^--------- DIRECT/ { d = 1 } d && $NF == "user(ns::Pool&)" { print $2 }')" \
	"1000/1000" "-alloc-fn ns::Pool::get: a C++ method by its short name, with -full-names too"
"$MPROF" export --format pprof --alloc-fn xmalloc -o "$T/w.pb.gz" "$T/w.data" 2> "$T/err"
like "$?/$(cat "$T/err")" "^2/mprof: export: --alloc-fn is for folded and html \(pprof: -prune_from" \
	"export --format pprof --alloc-fn: refused, pprof's own option named"
done_testing
