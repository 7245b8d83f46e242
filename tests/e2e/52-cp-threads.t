# Threads and processes: every thread is sampled (THREADS section, the
# `threads` command), a forked child writes FILE.PID with its own samples
# only, and record passes the program's output and exit status through.
# A program with a SIGPROF profiler of its own keeps it, and gets none of
# the sampler's signals.
. "$(dirname "$0")/../lib.sh"
plan 21
CPPROF=$B/bin/cpprof
cc -O2 -g -pthread -o "$T/cp_threads" "$TOP/tests/progs/cp_threads.c" || exit 1
cc -O2 -g -o "$T/cp_fork" "$TOP/tests/progs/cp_fork.c" || exit 1
cd "$T" || exit 1

out=$("$CPPROF" record -o th.data ./cp_threads)
is "$?/$out" "3/done" "exit status 3 and output passed through"
thr=$("$CPPROF" -c 'threshold 0; threads' th.data)
is "$(printf '%s\n' "$thr" | grep -c '^0\.[0-9]* [0-9]* \[')" 4 "four worker threads have samples"
like "$thr" '^0\.[0-9]+ [0-9]+ \(main\) \[[0-9]+\]$' "and the main thread"
n=$(printf '%s\n' "$thr" | awk '!/main/ && /^0\./ { gsub(/[][]/, "", $3); if (min == "" || $3 < min) min = $3 } END { print min }')
ok $([ "${n:-0}" -ge 200 ]; echo $?) "each worker: at least 200 samples for its 0.3 s ($n)"
like "$("$CPPROF" -c 'down worker' ./cp_threads th.data)" '^0\.9[0-9]+ \(worker burn\) \[[0-9]+\]$' \
	"workers' stacks: start_thread > worker > burn"
# The profile from main holds the main thread's few samples: it said
# nothing of the workers' (a helper walking the docs took it for all).
like "$("$CPPROF" -c down ./cp_threads th.data)" '^\(0\.[0-9]+ of the samples are not under main: `threads` lists the threads' \
	"down from main says what share of the samples lies outside it"
# And where to start from: the stacks' outermost functions outside main,
# past the kernel's clone3 (start_thread here; under cfprof the thread's
# start routine, as cfprof sees only instrumented functions: it said
# `down start_thread` there too).
like "$("$CPPROF" -c down ./cp_threads th.data)" '; outside it: `down start_thread` 0\.[0-9]+\)$' \
	"and where the rest is: down start_thread"
cc -O2 -g -pthread -finstrument-functions -o cf_threads "$TOP/tests/progs/cf_threads.c" || exit 1
"$B/bin/cfprof" record -o cfth.data ./cf_threads 200 > /dev/null || exit 1
like "$("$CPPROF" -c down ./cf_threads cfth.data)" '; outside it: `down worker` [01]\.[0-9]+\)$' \
	"cfprof data: the threads' start routine, down worker"

# Short threads: a thread's first sample boundary is drawn as if it joined
# a run already going (state.h's cp_draw_first), so its CPU time is
# credited in full on average however short it lives.  Drawn like the
# later intervals (half to one and a half means), it lost half a sample a
# thread: 100 threads of ~3 ms came to 0.68 of their CPU time.  Their
# time is the 3 ms each burns in its start routine (by its own clock):
# by a count of additions, 0.4 ms on a faster machine, and the sampler's
# set-up of each thread (before that routine, never counted) made the
# process's CPU time a third more than the threads' (0.65 to 0.72).
cc -O1 -g -pthread -o short "$TOP/tests/progs/cp_fdlimit.c" || exit 1
cpu=$("$CPPROF" record -o sh.data ./short short 100 | awk '{ print $2 }')
n=$("$CPPROF" -c function ./short sh.data | awk '/ samples, sampled every / { print $1 }')
ok $(awk -v n="${n:-0}" -v c="${cpu:-0}" 'BEGIN { exit !(c > 0 && n / c >= 0.85 && n / c <= 1.15) }'; echo $?) \
	"100 threads of ~3 ms each: $n samples at 1 ms for ${cpu:-?} ms of CPU (0.85 to 1.15 of it)"

# A child forked by a program with 20 threads holds its own thread's
# events only: it held every thread's (21 perf events; 22 with -e real).
# With -e cpu a thread has two: its CPU clock and its kernel-mode ring;
# with -e real three: and the ring of its registers at each switch.
cc -O1 -g -pthread -o forkfds "$TOP/tests/progs/cp_forkfds.c" || exit 1
is "$("$CPPROF" record -o ff.data ./forkfds)" "child: 2 perf events" \
	"a child of 20 threads: its own CPU clock and kernel-mode ring only, not theirs"
is "$("$CPPROF" record -e real -o ffr.data ./forkfds)" "child: 3 perf events" \
	"and with -e real, its clock, its registers ring and its kernel-mode ring"

child=$("$CPPROF" record -o fk.data ./cp_fork)
is "$(ls fk.data*)" "$(printf 'fk.data\nfk.data.%s' "$child")" "fork: the child writes FILE.PID"
like "$("$CPPROF" -c 'function' ./cp_fork fk.data)" '^(1\.0|0\.9)[0-9]+ parent_work' "parent's file: parent_work"
like "$("$CPPROF" -c 'function' ./cp_fork fk.data.$child)" '^(1\.0|0\.9)[0-9]+ child_work' "child's file: child_work"
unlike "$("$CPPROF" -c 'threshold 0; function' ./cp_fork fk.data.$child)" 'parent_work' \
	"child's file: nothing of the parent's before the fork"

cc -O2 -g -o "$T/cp_sigprof" "$TOP/tests/progs/cp_sigprof.c" || exit 1
out=$("$CPPROF" record -o sp.data ./cp_sigprof)
is "$out" "$(printf 'ticks ok\nhandler kept')" "own SIGPROF handler: its ITIMER_PROF ticks only, still installed"
n=$("$CPPROF" -c 'resources' sp.data | awk '{ print $5 }')
ok $([ "${n:-0}" -ge 250 ]; echo $?) "and the sampler samples on ($n for 0.3 s)"

# A thread's frame buffers were never given back: a program that made
# 20,000 threads one after another held 320 MB more than with 10 of them
# (16 KiB a thread), and its address space grew as much.
cc -O2 -g -pthread -o churn "$TOP/tests/progs/cp_churn.c" || exit 1
for ev in "-e cpu" "-e real -e context-switches"; do
	few=$("$CPPROF" record $ev -o ch.data ./churn 10)
	many=$("$CPPROF" record $ev -o ch.data ./churn 20000)
	ok $([ -n "$few" ] && [ -n "$many" ] && [ $((many - few)) -lt 32768 ]; echo $?) \
		"$ev: 20,000 threads, one after another, hold no memory after they end (RSS ${few:-?} kB with 10, ${many:-?} kB with 20,000)"
done

# Stress: 1200 threads come and go, a plugin is loaded and unloaded 300
# times, 6 children fork, while six resources are sampled at short
# intervals: no deadlock, no crash, every process writes its file.
cc -O2 -g -shared -fPIC -o libcpplug.so "$TOP/tests/progs/cp_plugin.c" || exit 1
cc -O2 -g -pthread -o cp_stress "$TOP/tests/progs/cp_stress.c" -ldl || exit 1
out=$(timeout 60 "$CPPROF" record -e cpu:100us -e real:500us -e page-faults:10 -e context-switches:5 \
	-e read-bytes:64 -e io-time -o st.data ./cp_stress "$T/libcpplug.so")
is "$?/$out" "0/done" "stress: runs to the end"
is "$(ls st.data* | wc -l)" 7 "stress: FILE and six FILE.PID"
done_testing
