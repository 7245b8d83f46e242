# Display options on real programs: -offsets, -lines, -depth, -terse,
# -noleaktable; libc callbacks (qsort) and shared libraries.  And --help
# after a verb: its usage on standard output, exit 0 (issue 22, item 8).
# Another tool's command (`mprof record ./x`, `cfprof list`) is said to
# be none, and a missing default data file says where one comes from.
. "$(dirname "$0")/../lib.sh"
plan 19
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
done_testing
