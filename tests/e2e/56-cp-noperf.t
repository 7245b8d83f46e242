# cpprof list and record where perf_event_open is refused (a preloaded
# shim, tests/progs/noperf.c): the missing resources are named with the
# reason, each message a line of its own (none runs into the next).
. "$(dirname "$0")/../lib.sh"
plan 8
CPPROF=$B/bin/cpprof
cd "$T" || exit 1
# A sanitizer build of cpprof wants its runtime first among preloads.
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0
cc -shared -fPIC -o noperf.so "$TOP/tests/progs/noperf.c" -ldl
printf 'int main(void) { return 0; }\n' | cc -x c -o prog -

# lines FILE: 1 when FILE is empty or ends with a newline and every line
# starts as PATTERN says.
lines() {
	[ ! -s "$1" ] || [ "$(tail -c 1 "$1" | od -An -c | tr -d ' ')" = '\n' ] || { echo 0; return; }
	if grep -Evq "$2" "$1"; then echo 0; else echo 1; fi
}

LD_PRELOAD=$T/noperf.so "$CPPROF" list > out 2> err; st=$?
is "$st/$(wc -c < err)" "0/0" "list: status 0, nothing on stderr"
like "$(cat out)" '^  page-faults +perf_event_open not permitted \(Permission denied; kernel.perf_event_paranoid = [^)]*\)$' \
	"list: a missing resource and why, on its own line"
is "$(lines out '^(resources sampled here|not available here:|  )')" 1 "list: whole lines only"

LD_PRELOAD=$T/noperf.so "$CPPROF" record -e page-faults -e context-switches -e cpu -o r.data ./prog \
	> /dev/null 2> err; st=$?
is "$st" 0 "record: runs with what it can sample"
is "$(lines err '^cpprof: ')" 1 "record: every message a line of its own, starting cpprof:"
is "$(grep -c '^cpprof: record: page-faults not sampled: perf_event_open not permitted' err)" 1 "record: page-faults named"
is "$(grep -c '^cpprof: record: context-switches not sampled: ' err)" 1 "record: context-switches named"
LD_PRELOAD=$T/noperf.so "$CPPROF" record -e page-faults -o r2.data ./prog > /dev/null 2> err
is "$?/$(lines err '^cpprof: record: ')/$(tail -n 1 err)" \
	"2/1/cpprof: record: none of the resources asked for can be sampled here" "record: nothing left to sample: said last, status 2"
done_testing
