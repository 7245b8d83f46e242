# C's static functions of one name in two files are two functions: every
# view shows each after its file (one.c:load, two.c:load), as gdb and
# callgrind_annotate name them, where before their bytes, samples and
# calls were summed into one row.  tests/progs/c_statics.c, built as
# one.c, two.c and three.c: part_1 calls one.c's static load 5 times for
# 500 bytes, part_2 two.c's 20 times for 1000, part_3 three.c's external
# load 45 times for 1500; each file's inlined mk N + 1 times for 32 * N
# bytes; in files of one last part, a/util.c:load.  Told apart by DWARF (gcc's DWARF 4 and clang's DWARF 5), and
# without it by the symbol table (its local symbols' files); C only: C++
# names merge by design (87-cxx-names.t), and an external function is the
# one of its name (glibc's inline realpath and libc's).
. "$(dirname "$0")/../lib.sh"
plan 44
CPPROF=$B/bin/cpprof
CFPROF=$B/bin/cfprof
cd "$T" || exit 1

# build OUT FLAGS...: the program, its parts built as one.c and two.c.
build() {
	out=$1
	shift
	cp "$TOP/tests/progs/c_statics.c" one.c && cp one.c two.c && cp one.c three.c &&
		$CC "$@" -c -DPART=1 one.c -o one.o && $CC "$@" -c -DPART=2 two.c -o two.o &&
		$CC "$@" -c -DPART=3 three.c -o three.o &&
		$CC "$@" -DMAIN -o "$out" "$TOP/tests/progs/c_statics.c" one.o two.o three.o
}
CC=cc
build st -O2 -g || exit 1
"$MPROF" run -o st.data ./st || exit 1
out=$("$MPROF" ./st st.data)
like "$out" '^ +20000 \(..\) +20 +20000 \(..\) +main > part_2 > two\.c:load$' \
	"leaks: two.c's load keeps 20,000 bytes in 20 blocks"
like "$out" '^ +2500 \(..\) +5 +2500 \(..\) +main > part_1 > one\.c:load$' \
	"leaks: one.c's load keeps 2,500 bytes in 5 blocks, a row of its own"
direct=$(printf '%s\n' "$out" | sed -n '/DIRECT ALLOCATION/,/CALL GRAPH/p')
like "$direct" ' 20000 .* 20  two\.c:load$' "direct: two.c:load, 20,000 bytes in 20 calls"
like "$direct" ' 2500 .* 5  one\.c:load$' "direct: one.c:load, 2,500 bytes in 5 calls"
like "$direct" ' 192 .* 3  two\.c:mk$' "direct: the inlined two.c:mk (DWARF), 192 bytes in 3 calls"
like "$direct" ' 64 .* 2  one\.c:mk$' "direct: the inlined one.c:mk, 64 bytes in 2 calls"
unlike "$direct" '  (load|mk)$' "direct: no row of load or mk alone"
like "$out" 'main > part_2 > two\.c:load' "a function of a name of its own is shown plain (part_2, not two.c:part_2)"
is "$("$MPROF" export --format folded ./st st.data | sort | tr '\n' '|')" \
	'main;part_1;one.c:load 2500|main;part_1;one.c:mk 64|main;part_2;two.c:load 20000|main;part_2;two.c:mk 192|' \
	"folded export: each function after its file"

# A run that met only one.c's: one load in that profile, named plain.
"$MPROF" run -o one.data ./st 1 || exit 1
out1=$("$MPROF" ./st one.data)
like "$out1" '^ +2500 \(..\) +5 +2500 \(..\) +main > part_1 > load$' \
	"a run that met only one.c's load names it load"
# A diff's sides name a function alike: as the run of both, one.c:load.
d=$("$MPROF" diff ./st one.data st.data)
unlike "$d" 'one\.c:(load|mk)|[ >](load|mk)$' \
	"diff of that run and the run of both: one.c's load and mk are the same in both, no row"
like "$d" 'two\.c:load' "diff: two.c's load is new"

# A static load and the external one: the static one after its file, the
# external one is the program's load.
"$MPROF" run -o ext.data ./st 1 3 || exit 1
out3=$("$MPROF" ./st ext.data)
like "$out3" '^ +67500 \(..\) +45 +67500 \(..\) +main > part_3 > load$' \
	"three.c's external load: load, 67,500 bytes in 45 blocks"
like "$out3" '^ +2500 \(..\) +5 +2500 \(..\) +main > part_1 > one\.c:load$' \
	"beside it, one.c's static load: one.c:load"

# pprof's views name them as ours do.
PPROF=$B/tools/pprof
if [ -x "$PPROF" ]; then
	"$MPROF" export --format pprof -o st.pb.gz ./st st.data
	top=$("$PPROF" -top -sample_index=alloc_space st.pb.gz 2>&1)
	like "$top" ' two\.c:load$' "pprof -top: two.c:load"
	like "$top" ' one\.c:load$' "pprof -top: one.c:load"
else
	fail "pprof not built at $PPROF (make builds it from Debian's golang-github-google-pprof-dev)"
	fail "not run: no pprof"
fi

# -alloc-fn takes either: the name (both) or the name after its file.
like "$("$MPROF" -alloc-fn two.c:load ./st st.data)" '^ +2500 \(..\) +5 +2500 \(..\) +main > part_1 > one\.c:load$' \
	"-alloc-fn two.c:load leaves one.c's load"
like "$("$MPROF" -alloc-fn two.c:load ./st st.data)" '^ +20000 \(..\) +20 +20000 \(..\) +main > part_2$' \
	"-alloc-fn two.c:load: its caller part_2 allocates"
like "$("$MPROF" -alloc-fn load ./st st.data)" '^ +2500 \(..\) +5 +2500 \(..\) +main > part_1$' \
	"-alloc-fn load takes both"

# Files of one last part (a/util.c and b/util.c): as many more of their
# parts as tell them apart (a/util.c built in a/, b/util.c from above:
# DWARF's path of one is its compilation directory's).  Before, both
# were util.c: one row of load.
mkdir -p a b && cp "$TOP/tests/progs/c_statics.c" a/util.c && cp a/util.c b/util.c &&
	cp a/util.c three.c && (cd a && cc -O2 -g -c -DPART=1 util.c -o ../a.o) &&
	cc -O2 -g -c -DPART=2 b/util.c -o b.o && cc -O2 -g -c -DPART=3 three.c -o three.o &&
	cc -O2 -g -DMAIN -o sb "$TOP/tests/progs/c_statics.c" a.o b.o three.o || exit 1
"$MPROF" run -o sb.data ./sb || exit 1
direct=$("$MPROF" ./sb sb.data | sed -n '/DIRECT ALLOCATION/,/CALL GRAPH/p')
like "$direct" ' 20000 .* 20  b/util\.c:load$' "a/util.c and b/util.c: b/util.c:load, 20,000 bytes in 20 calls"
like "$direct" ' 2500 .* 5  a/util\.c:load$' "a/util.c:load, 2,500 bytes in 5 calls"
like "$direct" ' 64 .* 2  a/util\.c:mk$' "the inlined a/util.c:mk, 64 bytes in 2 calls"
like "$("$MPROF" -alloc-fn b/util.c:load ./sb sb.data)" '^ +20000 \(..\) +20 +20000 \(..\) +main > part_2$' \
	"-alloc-fn b/util.c:load: its caller part_2 allocates"
# A run that met a/util.c's alone names it load; in the diff, as the
# other side does.
"$MPROF" run -o sb1.data ./sb 1 || exit 1
d=$("$MPROF" diff ./sb sb1.data sb.data)
unlike "$d" 'a/util\.c:(load|mk)|[ >](load|mk)$' \
	"diff of that run and the run of both: a/util.c's load and mk unchanged, no row"
like "$d" ' b/util\.c:load$' "diff: b/util.c's load is new"
# Two runs that each tell a/util.c's load apart, from other functions:
# b/util.c's (a/util.c:load) and three.c's external load (util.c:load,
# the only static of the name).  The diff names it alike on both sides:
# it was shown removed and added.
"$MPROF" run -o sb13.data ./sb 1 3 || exit 1
unlike "$("$MPROF" diff ./sb sb.data sb13.data)" 'a/util\.c:(load|mk)$|[ >]util\.c:(load|mk)$' \
	"diff of runs that tell a/util.c's load apart from different functions: unchanged, no row"
# cpprof reads the mprof file: a function by any of its path's last parts.
like "$("$CPPROF" -c 'resource bytes; up a/util.c:load' ./sb sb.data)" '\(main part_1 a/util\.c:load\)' \
	"cpprof up a/util.c:load"
like "$("$CPPROF" -c "resource bytes; up $PWD/b/util.c:load" ./sb sb.data)" '\(main part_2 b/util\.c:load\)' \
	"cpprof up FULL-PATH:load: the function of that file"
# Two checkouts of one program, each with util.c and sub/util.c: named
# within their common directory (util.c, sub/util.c), not after the
# checkout's own directory (ckA/util.c, which the other lacks).
for ck in ckA ckB; do
	mkdir -p $ck/sub && cp "$TOP/tests/progs/c_statics.c" $ck/util.c && cp $ck/util.c $ck/sub/util.c &&
		(cd $ck && cc -O2 -g -c -DPART=1 util.c -o one.o && cc -O2 -g -c -DPART=2 sub/util.c -o two.o &&
			cc -O2 -g -c -DPART=3 -o three.o util.c &&
			cc -O2 -g -DMAIN -o prog "$TOP/tests/progs/c_statics.c" one.o two.o three.o &&
			"$MPROF" run -o ../$ck.data ./prog) || exit 1
done
is "$("$MPROF" export --format folded ckA/prog ckA.data | sort | tr '\n' '|')" \
	'main;part_1;util.c:load 2500|main;part_1;util.c:mk 64|main;part_2;sub/util.c:load 20000|main;part_2;sub/util.c:mk 192|' \
	"util.c and sub/util.c: util.c:load and sub/util.c:load"
is "$("$MPROF" diff ckA.data ckB.data | sed -n '/^--------- MEMORY LEAKS/,/^--------- DIRECT/p' | grep -c '^ *[+-][0-9]')" 0 \
	"diff of the two checkouts: no leak chain changed"
if [ -x "$PPROF" ]; then
	"$MPROF" export --format pprof -o sb.pb.gz ./sb sb.data
	like "$("$PPROF" -top -sample_index=alloc_space sb.pb.gz 2>&1)" ' b/util\.c:load$' "pprof -top: b/util.c:load"
else
	fail "pprof not built at $PPROF"
fi

# A header's static inline function is one, in files that found the
# header by two paths (src/../include/h.h, lib/../include/h.h).
mkdir -p include src lib && cat > include/h.h <<'CEOF'
#include <stdlib.h>
static inline void *hmk(size_t n) { void *p = malloc(n); if (p) *(char *)p = 1; return p; }
CEOF
printf '#include "h.h"\nvoid *fx(void) { return hmk(10); }\n' > src/x.c
printf '#include "h.h"\nvoid *fy(void) { return hmk(20); }\n' > lib/y.c
printf '#include <stdio.h>\nvoid *fx(void); void *fy(void);\nint main(void) { printf("%%p %%p\\n", fx(), fy()); return 0; }\n' > hm.c
(cd src && cc -O2 -g -I../include -c x.c) && (cd lib && cc -O2 -g -I../include -c y.c) &&
	cc -O2 -g -o hd hm.c src/x.o lib/y.o && "$MPROF" run -o hd.data ./hd > /dev/null || exit 1
is "$("$MPROF" export --format folded ./hd hd.data | sort | tr '\n' '|')" 'main;fx;hmk 10|main;fy;hmk 20|' \
	"a header's static inline function found by two paths: one hmk"

# No DWARF: the symbol table's files (STT_FILE) tell the two apart.
build nodbg -O2 || exit 1
"$MPROF" run -o nodbg.data ./nodbg || exit 1
out=$("$MPROF" ./nodbg nodbg.data)
like "$out" '^ +20000 \(..\) +20 +20000 \(..\) +main > part_2 > two\.c:load$' \
	"built without -g: two.c:load, by the symbol table"

# clang's DWARF 5: the file of a function defined in the CU's own file is
# file 0 (libdw's dwarf_decl_file gives none for it).
if command -v clang > /dev/null 2>&1; then
	CC=clang build stc -O2 -g || exit 1
	"$MPROF" run -o stc.data ./stc || exit 1
	f=$("$MPROF" export --format folded ./stc stc.data)
	like "$f" '^main;part_1;one\.c:mk 64$' "clang -g (DWARF 5): the inlined one.c:mk"
	like "$f" '^main;part_2;two\.c:load 20000$' "clang -g: two.c:load"
else
	fail "clang not found (scripts/install-deps.sh installs it)"
	fail "not run: no clang"
fi

# External functions are one: glibc's inline realpath (-D_FORTIFY_SOURCE,
# <stdlib.h>) is libc's realpath, not stdlib.h:realpath.
cat > rp.c <<'CEOF'
#include <stdio.h>
#include <stdlib.h>
int main(void)
{
	char *p = realpath(".", NULL);
	puts(p ? "ok" : "none");
	return 0;
}
CEOF
cc -O2 -g -D_FORTIFY_SOURCE=2 -o rp rp.c || exit 1
"$MPROF" run -o rp.data ./rp > /dev/null || exit 1
f=$("$MPROF" export --format folded ./rp rp.data)
like "$f" '^main;realpath;realpath;' "the fortified realpath: main > realpath [inline] > realpath, not named after files"

# C++: no name after its file; its template instances in two files (and
# their GCC clones) are one function.
for f in a b; do
	cat > $f.cc <<CEOF
#include <map>
#include <string>
std::map<std::string, std::string> *m_$f = new std::map<std::string, std::string>;
void fill_$f(const char *s)
{
	for (int i = 0; i < 50; i++) {
		std::string k = std::string(s) + std::to_string(i) + "-a-rather-long-key-of-$f";
		(*m_$f)[k] = k + "-and-a-value-too-long-for-the-small-string";
	}
}
CEOF
done
printf 'void fill_a(const char *);\nvoid fill_b(const char *);\nint main() { fill_a("x"); fill_b("y"); }\n' > m.cc
for g in -g0 -g; do
	g++ -O2 $g -o cxx$g a.cc b.cc m.cc || exit 1
	"$MPROF" run -o cxx$g.data ./cxx$g || exit 1
	unlike "$("$MPROF" export --format folded ./cxx$g cxx$g.data)" '(^|;)[^;:]+\.(cc|h|tcc):' \
		"C++ (g++ -O2 $g): no function named after its file"
done

# cpprof: the samples of each spin apart; a command takes either name.
"$CPPROF" record -o sp.data ./st spin > /dev/null || exit 1
f=$("$CPPROF" -c function ./st sp.data)
a=$(printf '%s\n' "$f" | sed -n 's/^[0-9.]* one\.c:spin \[\([0-9]*\)\]$/\1/p')
b=$(printf '%s\n' "$f" | sed -n 's/^[0-9.]* two\.c:spin \[\([0-9]*\)\]$/\1/p')
n=$(printf '%s\n' "$f" | sed -n 's/^\([0-9]*\) samples.*/\1/p')
[ -n "$a" ] && [ -n "$b" ] && [ "$a" -gt 20 ] && [ "$b" -gt 20 ] && [ $((a + b)) -le "$n" ]
ok $? "cpprof: one.c:spin [$a] and two.c:spin [$b] apart, of $n samples"
up=$("$CPPROF" -c 'up spin' ./st sp.data)
like "$up" "^[0-9.]+ \\(main (part_1 )?one\\.c:spin\\) \\[$a\\]\$" "cpprof up spin: one.c's"
like "$up" "^[0-9.]+ \\(main (part_2 )?two\\.c:spin\\) \\[$b\\]\$" "cpprof up spin: two.c's"
unlike "$("$CPPROF" -c 'up two.c:spin' ./st sp.data)" 'one\.c' "cpprof up two.c:spin: two.c's alone"

# cfprof: the exact calls of each.
build stf -O2 -g -finstrument-functions || exit 1
"$CFPROF" record -o cf.data ./stf || exit 1
f=$("$CFPROF" ./stf cf.data | sed -n '1,/^Call graph/p')
like "$f" ' 20 +[0-9.]+  two\.c:load$' "cfprof: two.c:load called 20 times"
like "$f" ' 5 +[0-9.]+  one\.c:load$' "cfprof: one.c:load called 5 times"
done_testing
