# The sampler's handler runs on an alternate signal stack, never on the
# stack it interrupts (issue 22).  tests/progs/sig_coro.c works on a
# ucontext coroutine's 4 KiB stack inside a canary-filled block and counts
# the canary bytes that changed: 0 bare, and 0 under cpprof record (cpu,
# real and page-faults at small intervals, with perf and without), cfprof
# record and mprof run, whose output must be the bare run's, their data
# files readable and naming the program's functions.  tests/progs/sig_alt.c
# has alternate stacks of its own, in main and in a thread: it must see
# and control them as in a bare run, and the handler, running on them,
# shows how much stack it uses.
. "$(dirname "$0")/../lib.sh"
plan 27
CPPROF=$B/bin/cpprof
CFPROF=$B/bin/cfprof
cd "$T" || exit 1
. "$TOP/tests/cf.sh"

EV="-e cpu:100us -e real:100us -e page-faults:10"
cc -O2 -g -o coro "$TOP/tests/progs/sig_coro.c" || exit 1
CC=cc cf_build coro_cf sig_coro.c || exit 1
./coro > coro.bare 2> /dev/null
is "$?/$(truth coro.bare canary)" "0/0" "bare: exit 0, no canary byte changed"
./coro_cf > coro_cf.bare 2> /dev/null

# under NAME WANT CMD...: run CMD, compare with the bare run's stdout WANT.
under() {
	u_n=$1 u_w=$2; shift 2
	"$@" > "$u_n.out" 2> "$u_n.err"
	u_st=$?
	is "$u_st/$(cat "$u_n.out")" "0/$(cat "$u_w")" "$u_n: exit status and stdout as in a bare run"
	is "$(truth "$u_n.out" canary)" 0 "$u_n: no canary byte below or above the coroutine's stack changed"
}
# names TEXT NAMES...: the names that TEXT lacks (as words), or nothing.
names() {
	n_t=$1; shift
	for n_f; do printf '%s\n' "$n_t" | grep -qw -- "$n_f" || printf '%s ' "$n_f"; done
}

# cpprof, with perf events and with timers only.
under perf coro.bare "$CPPROF" record $EV -o perf.data ./coro
under noperf coro.bare env CPPROF_NO_PERF=1 "$CPPROF" record $EV -o noperf.data ./coro
for m in perf noperf; do
	for r in cpu real; do
		out=$("$CPPROF" -c "resource $r; threshold 0; function" ./coro $m.data 2>&1)
		is "$?/$(names "$out" crunch deep)" "0/" "$m, $r: the data file reads and names the coroutine's crunch and deep"
	done
done
out=$("$CPPROF" -c 'resource page-faults; threshold 0; function' ./coro perf.data 2>&1)
is "$?/$(names "$out" deep)" "0/" "perf, page-faults: the data file reads and names deep, which touches the pages"

# cfprof: the hooks keep their logical stack, samples charge its top.
under cfprof coro_cf.bare "$CFPROF" record $EV -o cf.data ./coro_cf
flat=$("$CFPROF" -p ./coro_cf cf.data 2>&1)
is "$?/$(flat "$flat" crunch 3)/$(flat "$flat" deep 3)" "0/61500/1500" \
	"cfprof: the data file reads; crunch called 61500 times, deep 1500"
ok $([ "$(flat "$flat" crunch 1 | cut -d. -f1)" -ge 10 ] 2> /dev/null; echo $?) \
	"cfprof: crunch has time ($(flat "$flat" crunch 1)%)"

# mprof run: no handler at all; its data names main, which printed.
under mprof coro.bare "$MPROF" run -o m.data ./coro
out=$("$MPROF" ./coro m.data 2>&1)
is "$?/$(names "$out" main)" "0/" "mprof: the data file reads and names main"

# --- the program's own alternate stacks
cc -O2 -g -pthread -o alt "$TOP/tests/progs/sig_alt.c" || exit 1
CC=cc cf_build alt_cf sig_alt.c -pthread || exit 1
./alt > alt.bare 2> alt.bare.err
is "$?/$(grep -c 'on its stack: \(yes\|always\)' alt.bare)" "0/3" "sig_alt bare: its handlers run on its stacks"
./alt_cf > alt_cf.bare 2> /dev/null
# used WHO ERR: "used frame" of main or thread in sig_alt's stderr.
used() { awk -v w="$1:" '$1 == "sig_alt:" && $2 == w { print $4, $6 }' "$2"; }
# AS_HANDLER in runtime/sampler/altstack.c: the stack it keeps for the
# handler beside the kernel's frame.
budget=8192
for m in cpprof cpprof-noperf cfprof; do
	case $m in
	cpprof) "$CPPROF" record $EV -o a.data ./alt > $m.out 2> $m.err; st=$? want=alt.bare ;;
	cpprof-noperf) CPPROF_NO_PERF=1 "$CPPROF" record $EV -o a.data ./alt > $m.out 2> $m.err; st=$? want=alt.bare ;;
	cfprof) "$CFPROF" record $EV -o a.data ./alt_cf > $m.out 2> $m.err; st=$? want=alt_cf.bare ;;
	esac
	is "$st/$(cat $m.out)" "0/$(cat $want)" \
		"sig_alt, $m: what it asks sigaltstack, where its handlers run: as in a bare run"
	for who in main thread; do
		set -- $(used $who $m.err)
		ok $([ "${1:-0}" -gt 0 ] && [ "$(($1 - ${2:-0}))" -le $budget ]; echo $?) \
			"sig_alt, $m, $who: the sampler's handler ran on the program's stack: ${1:-0} bytes deep, at most $budget beyond a small handler's ${2:-?}"
	done
done
done_testing
