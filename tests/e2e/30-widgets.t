# The paper's producer/consumer example, end to end, three ways (preloaded,
# linked shared, linked static): exact figures in all four tables, and the
# leak table's kept bytes equal valgrind's "definitely lost".
. "$(dirname "$0")/../lib.sh"
plan 27

cc -g -O0 -o "$T/widgets" "$TOP/examples/widgets.c"
cc -g -O0 -o "$T/widgets-so" "$TOP/examples/widgets.c" -L"$LIBMPROF" -lmprof -Wl,-rpath,"$LIBMPROF"
cc -g -O0 -o "$T/widgets-a" "$TOP/examples/widgets.c" "$LIBMPROF/libmprof.a" -pthread

bare=$("$T/widgets"); bare_st=$?
is "$bare" "made 10000 widgets of 204 bytes, 4907 red (never freed)" "the example runs"

check_tables() { # how data a.out
	out=$("$MPROF" "$3" "$2" 2>"$T/err"); st=$?
	is "$st/$(cat "$T/err")" "0/" "$1: mprof prints the tables, no warnings"
	like "$out" '^ +204 +10000 +2040000 \(\*\*\) +5093 +1001028 \(\*\*\)  widget$' \
		"$1: bin 204: 10000 allocs, 5093 frees, 1001028 kept, type widget"
	like "$out" '^ +1001028 \(\*\*\) +4907 +1001028 \(49\) +main > simulate > make_red_widget > make_widget$' \
		"$1: the leak traced to main > simulate > make_red_widget > make_widget"
	unlike "$out" 'make_blue_widget > make_widget$' "$1: blue widgets do not leak"
	like "$out" '^  \(1 smaller chain not shown; -verbose shows every chain\)$' \
		"$1: the peak's one hidden chain said in the singular"
	like "$out" '^ +\*\* +2040000 +\*\* +1001028 +\*\* +5093 +10000  make_widget$' \
		"$1: direct allocation: make_widget 2040000 bytes, 1001028 kept, 10000 calls, the 5093 freed all temporary"
	like "$out" '^\[[0-9]+\] +\*\* +0 \(  \) +----------- +10000\+0 +main \[[0-9]+\]$' \
		"$1: call graph: main, 100% self+desc, 10000 calls"
}

out=$("$MPROF" run -o "$T/pre.data" "$T/widgets"); st=$?
is "$st/$out" "0/$bare" "preloaded: output and exit status unchanged"
check_tables preloaded "$T/pre.data" "$T/widgets"

out=$(cd "$T" && MPROF_OUT="$T/so.data" ./widgets-so); st=$?
is "$st/$out" "0/$bare" "linked shared: output and exit status unchanged"
check_tables "linked shared" "$T/so.data" "$T/widgets-so"

out=$(cd "$T" && ./widgets-a); st=$?
is "$st/$out" "0/$bare" "linked static: output and exit status unchanged"
ok $([ -f "$T/mprof.data" ]; echo $?) "linked static: mprof.data in the starting directory"
check_tables "linked static" "$T/mprof.data" "$T/widgets-a"

# valgrind's independent count of the same program: every block no start
# pointer reaches at exit.  Now and then a word left in memory happens to
# point into one leaked widget, which valgrind then calls "possibly lost"
# instead of "definitely lost" (1 run in 10): both are counted.
vg=$(valgrind --leak-check=full "$T/widgets" 2>&1 >/dev/null |
	sed -n 's/.*\(definitely\|indirectly\|possibly\) lost: \([0-9,]*\) bytes.*/\2/p' | tr -d , |
	awk '{ s += $1 } END { print s + 0 }')
kept=$("$MPROF" "$T/pre.data" | awk '/^--------- MEMORY LEAKS/ { on = 1; next } /^---------/ { on = 0 }
	on && $1 ~ /^[0-9]+$/ { s += $1 } END { print s }')
is "$kept" "$vg" "leak table kept bytes ($kept) = valgrind lost, definitely, indirectly or possibly ($vg)"
done_testing
