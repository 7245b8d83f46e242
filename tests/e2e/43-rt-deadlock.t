# The runtime never waits on a lock the program may hold (issue 12):
#  - each thread's first allocation made inside pthread_getattr_np (which
#    holds a glibc lock while it allocates, as Rust's std, the JVM and the
#    Boehm GC call it at start-up) hung the monitor, which asked glibc for
#    the stack bounds there; now they come from /proc with raw syscalls;
#  - the stack bounds come from /proc/thread-self/maps: /proc/self/maps
#    reads as empty once the main thread has exited (pthread_exit), which
#    left every later thread without bounds (mprof: the slow unwinder;
#    cpprof: the thread not sampled);
#  - libgcc's unwinder allocates under its own lock (sorting FDEs that a
#    JIT registered); when the monitor's walker could not go on (a
#    makecontext stack) it fell back to libgcc, which took that lock again;
#  - a cycle between the loader's lock and the monitor's save lock, made
#    with the public API, is broken by the watchdog: one line on stderr,
#    profiling stops, the program finishes with its own output and status.
# Every run is under `timeout`: a hang fails the test instead of CI.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/rt.sh"
plan 42

rt_build getattr rt_getattr.c
rt_build deadlock rt_deadlock.c
rt_build gcclock rt_gcclock.c
rt_build mainexit rt_mainexit.c
CPPROF=$B/bin/cpprof

# fast FILE: "N/M" from check mode's summary line in FILE: N stacks
# compared, M of them walked by the fast path (which needs the bounds).
fast() { sed -n 's/^mprof: unwind check: \([0-9]*\) stacks compared, \([0-9]*\) by the fast path.*/\1\/\2/p' "$1"; }
cd "$T" || exit 1
for m in $RT_MODES; do
	rm -f ./*.data*
	out=$(MPROF_OUT=ga.data MPROF_UNWIND_CHECK=1 timeout 60 $(rt_cmd $m getattr) 2>err)
	ok $? "$m: pthread_getattr_np allocating on the main thread and a new one: no hang"
	is "$out" "main ok
thread ok" "$m: the program's own output"
	n=$(fast err)
	is "${n%/*}/$(grep -c ' 0 mismatches$' err)" "${n#*/}/1" \
		"$m: stack bounds known in both threads: every capture walked fast ($n), checked against libgcc"
	bin=$T/getattr; [ $m = preload ] || bin=$T/getattr-$m
	is "$("$MPROF" -nopeaktable "$bin" ga.data | grep -c '> grow$')" 2 \
		"$m: both threads' 7 blocks of 77 bytes charged to grow (main > grow, thread > grow)"

	out=$(MPROF_OUT=mx.data MPROF_UNWIND_CHECK=1 timeout 60 $(rt_cmd $m mainexit) 2>err)
	is "$?/$out" "0/done" "$m: threads allocating after main's pthread_exit"
	n=$(fast err)
	is "$((${n%/*} >= 40000))/${n#*/}" "1/${n%/*}" "$m: and every capture walked fast ($n)"

	out=$(MPROF_OUT=gl.data timeout 60 $(rt_cmd $m gcclock) 2>err)
	ok $? "$m: malloc under libgcc's lock on a coroutine stack: no hang"
	is "$out/$(cat err)" "unwound/" "$m: the program's own output, nothing on stderr"
	like "$("$MPROF" dump gl.data | awk '$1 == "stack" && $2 == 1 && $3 == 1')" '^stack 1 1 ' \
		"$m: libgcc's allocations kept as their return address alone (flagged truncated)"

	out=$(MPROF_OUT=dl.data MPROF_LOCK_WAIT_MS=500 timeout 60 $(rt_cmd $m deadlock) 2>err)
	ok $? "$m: a lock cycle with the loader: the program finishes, exit 0"
	is "$out" done "$m: the program's own output"
	is "$(cat err)" "mprof: waited 500 ms for the save lock (a deadlock with the program); profiling stopped" \
		"$m: one line on stderr says why profiling stopped"
	is "$(info dl.data reason)/$(rt_bin dl.data 40)" "stop/40 10 0 400 0" \
		"$m: mprof_stop's save, made once the cycle broke, holds the 10 blocks of 40 bytes"
done
# The sampler: a thread started after main's exit is sampled, its stacks
# whole (spin reached from start_thread).
out=$(timeout 60 "$CPPROF" record -o mx.data "$T/mainexit" 2>err)
is "$?/$out/$(cat err)" "0/done/" "cpprof: the program's own output, nothing on stderr"
"$CPPROF" -c 'function' "$T/mainexit" mx.data > view
like "$(awk '$2 == "spin" && $1 >= 0.9 { print "ok" }' view)" '^ok$' \
	"cpprof: the late thread's CPU time sampled, all of it in spin (>= 0.9)"
like "$(awk '$2 == "start_thread" && $1 >= 0.9 { print "ok" }' view)" '^ok$' \
	"cpprof: and its stacks walked out to start_thread"
done_testing
