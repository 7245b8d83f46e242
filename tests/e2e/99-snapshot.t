# Profiles of a running process, on demand (issue 23, item 5): `mprof
# snapshot PID` writes the profile of a process run by `mprof run` (or
# with MPROF_SNAPSHOT=1 and the monitor preloaded or linked) from its
# keep, as the monitor would write it then, and the process goes on, as
# Go's heap profile endpoint does.  Files numbered FILE.snapshot.N, each
# read by the tables and every export; sampled or exact.
. "$(dirname "$0")/../lib.sh"
plan 24
cd "$T" || exit 1
cc -g -O0 -o server "$TOP/tests/progs/rt_server.c" || exit 1

# calls FILE NAME: NAME's calls in the direct allocation table.
calls() {
	"$MPROF" -verbose ./server "$1" 2>/dev/null | awk -v n="$2" '
		/^--------- DIRECT/ { on = 1; next } /^---------/ { on = 0 }
		on && $NF == n { print $(NF - 1); exit }'
}
# until_line FILE TEXT: wait (10 s at most) until FILE has the line TEXT.
# Each run removes out first: the shell truncates it in the child, and a
# wait begun before that took the last run's "phase 1" for this one's.
until_line() {
	i=0
	while ! grep -qx "$2" "$1" 2>/dev/null && [ $i -lt 1000 ]; do sleep 0.01; i=$((i + 1)); done
}
child_of() { pgrep -P "$1" -x server; }

# Under mprof run: two snapshots, then the end.
rm -f go stop out
"$MPROF" run -o s.data ./server > out 2> err &
launcher=$!
until_line out "phase 1"
pid=$(child_of $launcher)
first=$("$MPROF" snapshot "$pid")
touch go
until_line out "phase 2"
second=$("$MPROF" snapshot "$pid")
third=$("$MPROF" snapshot -o mine.data "$pid")
# The launcher's pid (the one ps shows first): its program's snapshot.
"$MPROF" snapshot -o launcher.data "$launcher" > /dev/null 2> lerr
lst=$?
touch stop
wait $launcher
st=$?
is "$st/$(cat out | tr '\n' ' ')/$(cat err)" "0/phase 1 phase 2 /" "the program ran on as without snapshots"
is "$first/$second/$third" "$T/s.data.snapshot.1/$T/s.data.snapshot.2/mine.data" \
	"files numbered beside the profile, or -o's"
is "$(calls s.data.snapshot.1 grow_a)/$(calls s.data.snapshot.1 grow_b)" "1000/" \
	"the first snapshot: what was allocated then"
is "$(calls s.data.snapshot.2 grow_a)/$(calls s.data.snapshot.2 grow_b)" "1000/2000" \
	"the second: what came since too"
is "$(info s.data.snapshot.2 reason)/$(info s.data.snapshot.2 pid)/$(info s.data reason)" "snapshot/$pid/exit" \
	"INFO reason snapshot; the process's own file at its exit"
is "$(calls s.data grow_b)" 2000 "the file at exit is whole"
is "$lst/$(cat lerr)/$(info launcher.data pid)/$(calls launcher.data grow_b)" "0//$pid/2000" \
	"mprof run's pid: its program's snapshot (it was: the keep is another process's)"
tab=$("$MPROF" ./server s.data.snapshot.2 2>&1)
like "$tab" "^mprof: .*; a snapshot: the program was still running\)" \
	"the tables' first line says it is a snapshot"
like "$tab" "^--------- LIVE AT THE SNAPSHOT \(not leaks: the program went on\) ---------$" \
	"and what it kept is what was live then, not leaks"
for f in folded pprof html; do
	"$MPROF" export --format $f -o e.$f ./server s.data.snapshot.2 2> eerr
	is "$?/$(cat eerr)" "0/" "export --format $f reads a snapshot"
done
like "$("$MPROF" diff ./server s.data.snapshot.1 s.data.snapshot.2 2>&1)" "grow_b" \
	"diff of two snapshots: what grew"

# A server that writes over its environment (its process title): the
# file's place was read from MPROF_OUT there, and its snapshots went to
# mprof.data.snapshot.N in the caller's directory, saying nothing.  The
# runtime now names its file in the keep.
rm -f go stop out
mkdir -p sub
(cd sub && exec "$MPROF" run -o "$T/t.data" ../server title > ../out 2>&1) &
launcher=$!
until_line out "phase 1"
tpath=$("$MPROF" snapshot "$(child_of $launcher)")
touch sub/go sub/stop
wait $launcher
is "$tpath/$(calls "$tpath" grow_a)" "$T/t.data.snapshot.1/1000" \
	"a process that wrote over its environment: the snapshot beside its file"

# The sampled monitor: a snapshot is sampled too.
rm -f go stop out
"$MPROF" run --sample=4k -o z.data ./server > out 2>&1 &
launcher=$!
until_line out "phase 1"
touch go
until_line out "phase 2"
z=$("$MPROF" snapshot "$(child_of $launcher)")
touch stop
wait $launcher
is "$(info "$z" sample_bytes)/$(info "$z" allocs)" "4096/$(info s.data allocs)" \
	"sampled: the snapshot says so, its totals are exact"

# Without a launcher: MPROF_SNAPSHOT=1 makes the monitor keep its own,
# high among the descriptors (the program's own are where they were).
rm -f go stop out
MPROF_SNAPSHOT=1 MPROF_OUT="$T/p.data" LD_PRELOAD="$LIBMPROF/libmprof.so" ./server > out &
srv=$!
until_line out "phase 1"
fdn=$(ls -l /proc/$srv/fd | awk '/profile-keep/ { print $(NF - 3) }')
p=$("$MPROF" snapshot "$srv")
touch go stop
wait $srv
is "$p/$(calls "$p" grow_a)" "$T/p.data.snapshot.1/1000" "preloaded with MPROF_SNAPSHOT=1: a snapshot"
ok "$([ "${fdn:-0}" -ge 900 ]; echo $?)" "... its keep's descriptor is high ($fdn)"

# A server that retitles itself: a snapshot's command line is the one it
# has then, as its own file's at the end (the keep holds the one it
# started with: postgres's snapshots said "postgres -D ...", its file
# "postgres: postgres postgres [local] idle").
cmdline() { "$MPROF" dump "$1" | sed -n 's/^info cmdline //p'; }
rm -f go stop out
"$MPROF" run -o r.data ./server retitle > out 2> err &
launcher=$!
until_line out "phase 1"
p=$("$MPROF" snapshot "$(child_of $launcher)")
touch go stop
wait $launcher
is "$(cmdline "$p")/$(cmdline r.data)" "srv: up/srv: up" "a retitled server: its snapshot's command line is its file's"

# A process with no keep: one line, exit 2.
rm -f go stop out
./server > out &
srv=$!
until_line out "phase 1"
"$MPROF" snapshot "$srv" > /dev/null 2> err
is "$?/$(wc -l < err)" "2/1" "no keep: one line, exit 2"
touch go stop
wait $srv
"$MPROF" snapshot "$srv" > /dev/null 2> err
is "$?/$(cat err)" "2/mprof: snapshot: no process $srv" "a process gone: said so (it was /proc/PID/fd: No such file)"
"$MPROF" snapshot 1 > /dev/null 2> err
like "$?/$(cat err)" "^2/mprof: snapshot: process 1 has no keep" "a process with no keep: said so"
"$MPROF" snapshot 2> err
is "$?/$(wc -l < err)" "2/1" "no pid: usage in one line, exit 2"
# A run with --leaks: its snapshot has no scan and says nothing of one (it
# said the program had ended without its exit handlers: the keep's word
# for a salvage).
rm -f go stop out
"$MPROF" run --leaks -o lk.data ./server > out 2> err &
launcher=$!
until_line out "phase 1"
snap=$("$MPROF" snapshot "$(child_of $launcher)")
touch go stop
wait $launcher
is "$("$MPROF" dump "$snap" | grep -c '^info leak_scan ')/$("$MPROF" ./server "$snap" | grep -c 'not classified')" "0/0" \
	"--leaks, a snapshot of the running program: no word of a scan"
is "$("$MPROF" dump lk.data | sed -n 's/^info leak_scan //p')" "complete" "its end: the scan, complete"
done_testing
