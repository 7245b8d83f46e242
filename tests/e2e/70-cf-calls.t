# cfprof: call counts and call-graph edges are exact, against counters the
# test programs keep themselves (tests/progs/cf_*.c, built -O2 -g
# -finstrument-functions, no frame pointers): recursion, static inline
# functions that gcc inlined (the hooks stay in the inlined copies), a qsort
# comparator called from uninstrumented libc, longjmp and siglongjmp out of
# 1000 frames (no exit hooks run), C++ exceptions through 50 frames (g++
# runs the exit hooks while unwinding, clang does not), direct recursion
# (counted as repeats of an entry) whose exit hooks come after the
# epilogue, and a longjmp into the middle of one.  Under
# `cfprof record` each program's stdout and exit status are its own.
. "$(dirname "$0")/../lib.sh"
plan 63
CFPROF=$B/bin/cfprof
cd "$T" || exit 1

. "$TOP/tests/cf.sh"
# counts NAME PROG FLAT GRAPH FN...: FN's #call is the program's own count.
counts() {
	c_n=$1 c_flat=$2; shift 2
	for c_f in "$@"; do
		c_want=$(truth "$c_n.bare" "$c_f")
		is "$(flat "$c_flat" "$c_f" 3)" "${c_want:-missing}" "$c_n: $c_f called ${c_want:-?} times"
	done
}

# --- cf_calls: recursion, an inlined static function, a qsort comparator
cf_build cf_calls cf_calls.c || exit 1
calls_in_sq=$(objdump -d cf_calls | grep -c 'call.*<square')
has_sq=$(nm cf_calls | grep -c ' t square$')
is "$calls_in_sq/$has_sq" "0/1" "cf_calls: square is inlined (no call instruction to it), its out-of-line copy exists for the hooks"
record calls ./cf_calls 300
is "$(cat calls.err)" "" "calls: nothing on stderr"
flat=$("$CFPROF" -p ./cf_calls calls.data)
ok $? "calls: cfprof -p exits 0"
counts calls "$flat" rec square sum_squares cmp sort_then_work
is "$(flat "$flat" main 3)" 1 "calls: main called once"
g=$("$CFPROF" -q ./cf_calls calls.data)
rm=$(truth calls.bare rec_from_main) rt=$(truth calls.bare rec)
is "$(graph "$g" rec primary)" "$rm+$((rt - rm))" "calls: rec called $rm+$((rt - rm)) (from main + from itself)"
is "$(graph "$g" rec callers | awk '$2 == "main" { sub(/\/.*/, "", $1); print $1 }')" "$rm" "calls: main calls rec $rm times"
n=$(truth calls.bare square)
is "$(graph "$g" square callers)" "$n/$n sum_squares" "calls: the inlined square's only caller is sum_squares, $n/$n"
n=$(truth calls.bare cmp)
is "$(graph "$g" cmp callers)" "$n/$n sort_then_work" "calls: cmp, called by qsort (libc), is charged to sort_then_work, $n/$n"
is "$(graph "$g" sort_then_work callees | awk '{ print $2 }' | sort | tr '\n' ' ')" "cmp " \
	"calls: sort_then_work's only instrumented callee is cmp"
# The paper's hazard (sec. 4): after cmp returns into qsort, the time is
# sort_then_work's again.  It spins 300 ms after qsort; cmp takes < 1 ms.
st=$(flat "$flat" sort_then_work 1) cm=$(flat "$flat" cmp 1)
ok $(awk -v s="${st:-0}" 'BEGIN { exit !(s >= 85) }'; echo $?) "calls: sort_then_work has its own time after qsort (${st:-nothing}%, >= 85)"
ok $(awk -v c="${cm:-99}" 'BEGIN { exit !(c <= 2) }'; echo $?) "calls: cmp is not charged the time after it returned (${cm:-nothing}%, <= 2)"

# --- cf_jump: longjmp and siglongjmp (from a signal handler) out of 1000 frames
cf_build cf_jump cf_jump.c || exit 1
record jump ./cf_jump
is "$(cat jump.err)" "" "jump: nothing on stderr"
flat=$("$CFPROF" -p ./cf_jump jump.data)
counts jump "$flat" deep after on_usr1
is "$(flat "$flat" main 3)" 1 "jump: main called once"
g=$("$CFPROF" -q ./cf_jump jump.data)
is "$(graph "$g" after callers)" "1000000/1000000 main" "jump: after is called from main only, 1000000/1000000"
dm=$(truth jump.bare deep_from_main) dt=$(truth jump.bare deep)
is "$(graph "$g" deep primary)" "$dm+$((dt - dm))" "jump: deep called $dm+$((dt - dm))"
is "$(graph "$g" deep callers | awk '$2 != "deep" { sub(/\/.*/, "", $1); print $1, $2 }')" "$dm main" \
	"jump: deep's only other caller is main, $dm times"
is "$(graph "$g" deep callees | awk '$2 != "deep" { print $1, $2 }')" "3/3 on_usr1" \
	"jump: deep's only other callee is the signal handler (3/3), not after"
is "$(graph "$g" main callees | awk '{ sub(/\/.*/, "", $1); print $2, $1 }' | sort | tr '\n' ' ')" "after 1000000 deep $dm " \
	"jump: main's callees: after and deep, exact"
sz=$(wc -c < jump.data)
ok $([ "$sz" -lt 65536 ]; echo $?) "jump: the file does not grow with the jumps' stale frames ($sz bytes)"

# --- cf_repeat: direct recursion, void (exits after the epilogue) and jumped into
for cc in cc clang; do
	if ! command -v $cc > /dev/null; then
		absent 4 "repeat-$cc: no $cc (scripts/install-deps.sh installs gcc and clang)"
		continue
	fi
	CC=$cc cf_build cf_repeat_$cc cf_repeat.c || exit 1
	record repeat-$cc ./cf_repeat_$cc
	flat=$("$CFPROF" -p ./cf_repeat_$cc repeat-$cc.data)
	want= got=
	for f in vrec vrec2 leafv inner jr mid after; do
		want="$want $f $(truth repeat-$cc.bare $f)" got="$got $f $(flat "$flat" $f 3)"
	done
	is "$got" "$want" "repeat-$cc: every function's calls exact"
	g=$("$CFPROF" -q ./cf_repeat_$cc repeat-$cc.data)
	is "$(graph "$g" vrec primary) $(graph "$g" vrec2 primary) $(graph "$g" jr primary)" \
		"3+$(($(truth repeat-$cc.bare vrec) - 3)) 3+$(($(truth repeat-$cc.bare vrec2) - 3)) 2+$(($(truth repeat-$cc.bare jr) - 2))" \
		"repeat-$cc: vrec, vrec2 and jr called 3+6000, 3+900 and 2+2000 (their own)"
	is "$(graph "$g" leafv callers); $(graph "$g" inner callers); $(graph "$g" mid callers); $(graph "$g" after callers)" \
		"3/3 vrec; 1806/1806 vrec2; $(truth repeat-$cc.bare mid)/$(truth repeat-$cc.bare mid) jr; 2000/2000 main" \
		"repeat-$cc: leafv, inner, mid and after called from vrec, vrec2, jr (the repeats the jump left) and main"
done

# --- cf_throw: C++ exceptions through instrumented frames, g++ then clang++
throw_checks() { # LABEL PROG
	record "$1" "$2"
	is "$(cat "$1.err")" "" "$1: nothing on stderr"
	flat=$("$CFPROF" -p "$2" "$1.data")
	counts "$1" "$flat" thrower middle after_catch in_middle after
	g=$("$CFPROF" -q "$2" "$1.data")
	is "$(graph "$g" thrower primary)" "2000+70000" "$1: thrower called 2000+70000"
	is "$(graph "$g" thrower callers | awk '$2 != "thrower" { sub(/\/.*/, "", $1); print $1, $2 }' | sort | tr '\n' ' ')" \
		"1000 main 1000 middle " "$1: thrower called from main and middle, 1000 times each"
	is "$(graph "$g" after_catch callers)" "1000/1000 main" "$1: after the catch in main, main calls after_catch (1000/1000)"
	is "$(graph "$g" in_middle callers)" "1000/1000 middle" "$1: in middle's handler, middle calls in_middle (1000/1000)"
	is "$(graph "$g" after callers)" "100000/100000 main" "$1: then main calls after (100000/100000)"
	is "$(graph "$g" thrower callees | awk '$2 != "thrower"')" "" "$1: thrower calls nothing but itself"
}
cf_build cf_throw cf_throw.cc || exit 1
throw_checks throw ./cf_throw
if command -v clang++ > /dev/null 2>&1 && CXX=clang++ cf_build cf_throw_clang cf_throw.cc 2> /dev/null; then
	throw_checks throw-clang ./cf_throw_clang
else
	absent 13 "clang++ cannot build cf_throw.cc (scripts/install-deps.sh installs clang)"
fi
done_testing
