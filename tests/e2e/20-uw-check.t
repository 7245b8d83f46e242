# The fast unwinder against the reference one (libgcc _Unwind_Backtrace),
# frame for frame, on every allocation: MPROF_UNWIND_CHECK=1 runs both and
# prints "mprof: unwind mismatch ..." for any difference, and at exit
# "mprof: unwind check: N stacks compared, F by the fast path, R remembered,
# P partly reused, S looked up by shared frames, M mismatches".  A remembered
# walk (a stack recognised without walking it, from frame 0's registers or from the caller's return address and stack
# pointer) is checked too: the full walk is made anyway and must give the
# same stack; R counts those checks (up to two per stack).  P counts walks
# that took a run of frames from the previous walk, whose chain had changed
# further out.  S counts stack-table lookups that took the walk's outer frames
# as those of the previous stack (where the table keeps them), compared only
# the new ones and found the stack: each is verified by a full comparison.
# Programs: tests/progs/uw_main.c (+ uw_lib.c as a linked library with a lazy
# PLT, and as two dlopen'd plugins) at -O0 and -O2, with and without frame
# pointers, preloaded and linked with libmprof.a; tests/progs/uw_cxx.cc
# (exceptions in flight) at -O0 and -O2; tests/progs/uw_memo.c (chains
# that differ only far from the innermost frame) at -O0 and -O2;
# tests/progs/uw_turns.c (chains taking turns in one memo set) at -O0 and -O2;
# tests/progs/uw_shift.c (recursions whose chain changes in the middle) and
# tests/progs/uw_move.c (a recursion left in place while the chain outside
# it gains a frame) at -O0 and -O2, with and without frame pointers.
. "$(dirname "$0")/../lib.sh"
plan 72

P=$TOP/tests/progs
cd "$T" || exit 1
cc -g -O2 -fPIC -shared -o libuwlib.so "$P/uw_lib.c" &&
cc -g -O2 -fPIC -shared -DPLUG=1 -o plug1.so "$P/uw_lib.c" &&
cc -g -O0 -fPIC -shared -DPLUG=2 -o plug2.so "$P/uw_lib.c"
ok $? "libraries build"

# check NAME MIN CMD...: run CMD in check mode; no mismatch, the summary
# line says >= MIN stacks compared, FAST_PCT% (default 90) of them by the
# fast path, REMEMBERED_MIN (default 1) of them recognised as remembered
# walks, and PARTLY_MIN (default 0) walks partly reused.
check() {
	_name=$1 _min=$2; shift 2
	_err=$(MPROF_UNWIND_CHECK=1 MPROF_OUT=$T/u.data "$@" 2>&1 >/dev/null)
	ok $? "$_name: runs"
	unlike "$_err" 'unwind mismatch' "$_name: no mismatch between the unwinders"
	set -- $(printf '%s\n' "$_err" | sed -n 's/^mprof: unwind check: \([0-9]*\) stacks compared, \([0-9]*\) by the fast path, \([0-9]*\) remembered, \([0-9]*\) partly reused, \([0-9]*\) looked up by shared frames, \([0-9]*\) mismatches$/\1 \2 \3 \4 \5 \6/p')
	ok $([ "${1:-0}" -ge "$_min" ] && [ "$2" -ge $(($1 * ${FAST_PCT:-90} / 100)) ] && [ "$3" -ge "${REMEMBERED_MIN:-1}" ] && [ "$4" -ge "${PARTLY_MIN:-0}" ] && [ "$5" -ge "${SHARED_MIN:-0}" ] && [ "$6" = 0 ]; echo $?) \
		"$_name: ${1:-no} stacks compared, ${2:-0} by the fast path (>= $_min, >= ${FAST_PCT:-90}%), ${3:-0} remembered, ${4:-0} partly reused (>= ${PARTLY_MIN:-0}), ${5:-0} looked up by shared frames (>= ${SHARED_MIN:-0})"
}

for v in "-O0" "-O2" "-O2 -fomit-frame-pointer" "-O2 -fno-omit-frame-pointer"; do
	cc -g $v -o m "$P/uw_main.c" -L. -luwlib -Wl,-rpath,"$T" -Wl,-z,lazy -pthread -ldl
	SHARED_MIN=500 check "uw_main $v preloaded" 8000 env LD_PRELOAD="$LIBMPROF/libmprof.so" ./m "$T"
done
cc -g -O2 -o ma "$P/uw_main.c" -L. -luwlib -Wl,-rpath,"$T" -Wl,-z,lazy -pthread -ldl "$LIBMPROF/libmprof.a"
check "uw_main -O2 with libmprof.a" 8000 ./ma "$T"
for o in -O0 -O2; do
	g++ -g $o -o c "$P/uw_cxx.cc"
	check "uw_cxx $o preloaded" 200 env LD_PRELOAD="$LIBMPROF/libmprof.so" ./c
done
# The runtime's own stack tests, in check mode.
cc -g -O0 -o q "$P/rt_qsort.c" && cc -g -O0 -o d "$P/rt_deep.c"
REMEMBERED_MIN=0 check "rt_qsort" 1 env LD_PRELOAD="$LIBMPROF/libmprof.so" ./q
REMEMBERED_MIN=0 check "rt_deep" 2 env LD_PRELOAD="$LIBMPROF/libmprof.so" ./d
# Chains that differ only far out: most are remembered, none wrongly.
for o in -O0 -O2; do
	cc -g $o -o mm "$P/uw_memo.c"
	REMEMBERED_MIN=10000 check "uw_memo $o" 20000 env LD_PRELOAD="$LIBMPROF/libmprof.so" ./mm
done
# Chains that take turns at one innermost frame, against a runtime whose
# remembered walks all share one set (build/tests/libmprof-memo1.so): each
# is remembered (two checks an allocation), none keeps another out.  A
# memo that kept only a frame 0 offered twice in a row remembered none.
for o in -O0 -O2; do
	cc -g $o -o tu "$P/uw_turns.c"
	REMEMBERED_MIN=36000 check "uw_turns $o, one memo set" 20000 env LD_PRELOAD="$B/tests/libmprof-memo1.so" ./tu
done
# Chains that change in the middle: the previous walk's frames are taken up
# to where they differ, then again where they match (all on the thread's
# own stack: every walk is the fast path's, none falls back).
for v in "-O0" "-O2" "-O2 -fno-omit-frame-pointer"; do
	cc -g $v -o sh "$P/uw_shift.c"
	FAST_PCT=100 PARTLY_MIN=2000 SHARED_MIN=1000 check "uw_shift $v" 4000 env LD_PRELOAD="$LIBMPROF/libmprof.so" ./sh
done
# A recursion whose frames stay where they were while the chain outside it
# gains a frame: the frames taken from the previous walk move in its record.
for v in "-O0" "-O2" "-O2 -fno-omit-frame-pointer"; do
	cc -g $v -o mv "$P/uw_move.c"
	FAST_PCT=100 PARTLY_MIN=150 check "uw_move $v" 2000 env LD_PRELOAD="$LIBMPROF/libmprof.so" ./mv
done
# Other stacks than the thread's own (a makecontext coroutine, a sigaltstack
# handler) between allocations on it: walked by the reference, never
# remembered as main's stack (each site allocates one size: a stack with
# two sizes is a stack credited with another's allocations).
cc -g -O2 -o co "$P/uw_coro.c"
# (1100 of its 3100 stacks are on other stacks: the reference walks them.)
FAST_PCT=60 REMEMBERED_MIN=1000 check "uw_coro" 3000 env LD_PRELOAD="$LIBMPROF/libmprof.so" ./co
MPROF_OUT=$T/co.data LD_PRELOAD="$LIBMPROF/libmprof.so" ./co
is "$("$MPROF" dump "$T/co.data" | awk '$1 == "stack" { print $4, $5, $8, $9 }' | sort | tr '\n' ,)" \
	"0 100 0 4000,0 1000 0 100000,1000 0 24000 0,1000 0 24000 0," \
	"uw_coro: main's two sites 1000 x 24 B each, the coroutine 1000 x 100 B, the handler 100 x 40 B"
# Allocations under a frame no FDE covers (Go's runtime.asmcgocall is
# under every C function a cgo program calls): libgcc ends the stack
# after that frame, unless a sigreturn is at its return address, and so
# does the fast walk now, which remembers it.  Before, each such
# allocation fell back to libgcc: a cgo program's strdup loop ran 56
# times as long as bare (10M pairs: 9.6 s, bare 0.17 s; 0.28 s now).
for o in -O0 -O2; do
	cc -g $o -o nc "$P/uw_nocfi.c"
	FAST_PCT=100 check "uw_nocfi $o" 20000 env LD_PRELOAD="$LIBMPROF/libmprof.so" ./nc
done
MPROF_OUT=$T/nc.data LD_PRELOAD="$LIBMPROF/libmprof.so" ./nc
is "$("$MPROF" export --format folded --counter alloc_objects "$T/nc.data")" "nocfi_call;work 20000" \
	"uw_nocfi: the stack ends at the frame with no FDE, as libgcc's"
if command -v valgrind > /dev/null; then
	cg() { valgrind --tool=callgrind --trace-children=yes --callgrind-out-file=/dev/null "$@" 2>&1 > /dev/null | awk '/Collected :/ { n = $NF } END { print n + 0 }'; }
	bare=$(cg ./nc)
	mon=$(cg env MPROF_OUT=$T/nc2.data LD_PRELOAD="$LIBMPROF/libmprof.so" ./nc)
	pair=$(awk -v a="$mon" -v b="$bare" 'BEGIN { printf "%d", (a - b) / 20000 }')
	ok $([ "$pair" -gt 0 ] && [ "$pair" -le 1000 ]; echo $?) \
		"uw_nocfi: $pair instructions a malloc+free pair above bare, by callgrind (at most 1,000; 11,663 by libgcc)"
else
	fail "valgrind not found: this test needs Debian's valgrind (scripts/install-deps.sh)"
fi

# The check itself catches a difference: =2 spoils one frame of the first
# stack the fast path makes (the reference's is kept).
err=$(MPROF_UNWIND_CHECK=2 MPROF_OUT=$T/u.data env LD_PRELOAD="$LIBMPROF/libmprof.so" ./d 2>&1)
is "$(printf '%s\n' "$err" | grep -c 'unwind mismatch at depth')" 1 "a spoiled stack is reported"
like "$err" ' 1 mismatches$' "and counted"
done_testing
