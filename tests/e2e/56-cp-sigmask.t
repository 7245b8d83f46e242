# cpprof samples a program that blocks every signal, as servers do (they
# take them in a thread of their own, by sigwait or a signalfd): the
# overflow signals (SIGPROF) stayed pending, not one sample came, and
# nothing said so.  Now sigprocmask and pthread_sigmask never block
# SIGPROF, and keep the program's view: the masks it reads back hold
# SIGPROF as it set it, and a SIGPROF of its own (ITIMER_PROF) waits
# while it believes it blocked, as bare (runtime/sampler/signals.c).
. "$(dirname "$0")/../lib.sh"
plan 15
CPPROF=$B/bin/cpprof
cd "$T" || exit 1
cc -O1 -g -pthread -o sm "$TOP/tests/progs/cp_sigmask.c" || exit 1

./sm server > bare 2>&1
"$CPPROF" record -o s.data ./sm server > out 2>&1
is "$?/$(cat out)" "0/$(cat bare)" "server: the program's output as bare: SIGPROF blocked in its masks, as it set them"
prof=$("$CPPROF" -c function ./sm s.data 2>&1)
n=$(printf '%s\n' "$prof" | awk '/ samples, sampled every / { print $1 }')
burn=$(printf '%s\n' "$prof" | awk '$2 == "burn" { print $1 }')
worker=$(printf '%s\n' "$prof" | awk '$2 == "worker" { print $1 }')
ok $(awk -v n="${n:-0}" -v b="${burn:-0}" 'BEGIN { exit !(n >= 300 && b >= 0.95) }'; echo $?) \
	"server: sampled with every signal blocked: $n samples (0.4 s of CPU at 1 ms: >= 300; 0 before), burn() $burn (>= 0.95)"
ok $(awk -v w="${worker:-0}" 'BEGIN { exit !(w >= 0.65 && w <= 0.85) }'; echo $?) \
	"server: the thread's share $worker (0.3 of 0.4 s: 0.75 +- 0.1)"

./sm itimer > bare 2>&1
"$CPPROF" record -o i.data ./sm itimer > out 2>&1
is "$?/$(cat out)" "0/$(cat bare)" \
	"itimer: its own SIGPROF ticks as bare: none while blocked, the pending one at the unblock, more after"
n=$("$CPPROF" -c function ./sm i.data 2>&1 | awk '/ samples, sampled every / { print $1 }')
ok $([ "${n:-0}" -ge 150 ]; echo $?) "itimer: sampled while its SIGPROF was blocked too: $n samples (0.2 s: >= 150)"

# Its handler blocks every signal, then sets back the mask it found:
# that mask held SIGPROF (the handler's own signal) as the program
# believed it unblocked, and no tick came after the first.
./sm handler > bare 2>&1
"$CPPROF" record -o h.data ./sm handler > out 2>&1
is "$?/$(cat out)" "0/$(cat bare)" "its handler sets back the mask it found: ticks all along, SIGPROF unblocked after, as bare"

# A thread made with every signal blocked through pthread_sigmask, which
# unblocks them by the system call itself (cgo's threads under Go's
# runtime), and takes its own timer's SIGPROFs (Go's CPU profile): it
# inherited a view of SIGPROF blocked for good, and its ticks waited for
# an unblock that never came through pthread_sigmask (a Go program's own
# runtime/pprof profile got 500 ms of 1.64 s of CPU).
./sm rawthread > bare 2>&1
"$CPPROF" record -o r.data ./sm rawthread > out 2>&1
is "$?/$(cat out)/$(cat bare)" "0/thread: its own timer's SIGPROFs more than 40/thread: its own timer's SIGPROFs more than 40" \
	"rawthread: its own timer's ticks reach its handler, as bare"

# But a mask also gets smaller unseen with SIGPROF still blocked as the
# program knows (a handler's return, siglongjmp, a system call for
# another signal): its ticks must still wait (32 came in each).
./sm shrink > bare 2>&1
"$CPPROF" record -o sh.data ./sm shrink > out 2>&1
is "$?/$(cat out)/$(cat bare)" "0/ticks while blocked: after a handler 0, a siglongjmp 0, a system call 0/ticks while blocked: after a handler 0, a siglongjmp 0, a system call 0" \
	"shrink: its own ticks wait while it blocks SIGPROF, as bare"

# Python: signal.pthread_sigmask(SIG_BLOCK, every signal), then work.
PY=/usr/bin/python3
[ -x "$PY" ] || absent 3 "$PY (Debian's python3, scripts/install-deps.sh)"
cat > blocked.py <<'PYEOF'
import signal, time
signal.pthread_sigmask(signal.SIG_BLOCK, signal.valid_signals())
print(signal.SIGPROF in signal.pthread_sigmask(signal.SIG_BLOCK, []))
def spin(n):
    end = time.process_time() + n
    s = 0
    while time.process_time() < end:
        for i in range(10000):
            s += i * i
    return s
print(spin(0.3) > 0)
PYEOF
out=$("$CPPROF" record -o py.data "$PY" blocked.py 2>&1)
is "$?/$out" "0/True
True" "python3, every signal blocked: ran, and reads SIGPROF blocked, as it set it"
prof=$("$CPPROF" -c function py.data 2>&1)
n=$(printf '%s\n' "$prof" | awk '/ samples, sampled every / { print $1 }')
spin=$(printf '%s\n' "$prof" | awk '$2 ~ /[.]spin$/ { print $1 }')
ok $(awk -v n="${n:-0}" -v b="${spin:-0}" 'BEGIN { exit !(n >= 200 && b >= 0.8) }'; echo $?) \
	"python3, every signal blocked: $n samples (>= 200), spin() $spin (>= 0.8)"
m=$(printf '%s\n' "$prof" | awk '$2 ~ /[.]<module>$/ { print $1 }')
ok $(awk -v m="${m:-0}" -v s="${spin:-1}" 'BEGIN { exit !(m >= s && s > 0) }'; echo $?) \
	"python3, every signal blocked: spin()'s samples under <module> (<module> $m >= spin() $spin)"

# A program built with gcc -pg: glibc's profil (from __monstartup, before
# main) set SIGPROF's action by its internal sigaction, past the
# interposed one: the overflow signals went into gprof's histogram (its
# gmon.out 90 times the run's time) and cpprof had every sample on one
# stack (a, 1.0).  The action profil sets is the program's now, run for
# its ITIMER_PROF ticks; the sampler's handler is back.  The bound is
# loose (0.4 to 2.5 times bare): a and b's CPU seconds moved 1.77x from
# one run to the next on a loaded 2-core VM (0.66 s bare, 1.17 s under
# cpprof), where the defect was 90 times.
command -v gprof > /dev/null || { echo "gprof (binutils) is missing: make deps" >&2; exit 1; }
cc -O1 -g -pg -o pg "$TOP/tests/progs/cp_gprof.c" || exit 1
./pg > pg.bare && mv gmon.out bare.gmon
# gprof's flat profile: the self seconds of a and b.
secs() { gprof -b -p ./pg "$1" | awk '$NF == "a" || $NF == "b" { s += $3 } END { printf "%.2f", s }'; }
"$CPPROF" record -o pg.data ./pg > pg.out
is "$?/$(cat pg.out)" "0/$(cat pg.bare)" "gcc -pg: exit 0, output as bare"
bare=$(secs bare.gmon) prof=$(secs gmon.out)
ok $(awk -v a="$prof" -v b="$bare" 'BEGIN { exit !(b > 0 && a / b > 0.4 && a / b < 2.5) }'; echo $?) \
	"gcc -pg: gprof's histogram counts its own ticks only ($prof s of a and b under cpprof, $bare bare)"
prof=$("$CPPROF" -c 'threshold 0; function' ./pg pg.data)
fa=$(printf '%s\n' "$prof" | awk '$2 == "a" { print $1 }') fb=$(printf '%s\n' "$prof" | awk '$2 == "b" { print $1 }')
ok $(awk -v a="${fa:-0}" -v b="${fb:-0}" 'BEGIN { exit !(a > 0.4 && a < 0.6 && b > 0.4 && b < 0.6) }'; echo $?) \
	"gcc -pg: cpprof's samples half in a, half in b ($fa, $fb)"
# moncontrol(0) puts back the action profil found, the sampler's: the
# program's is the one from before again (SIG_DFL), not glibc's counter,
# which a later SIGPROF ran with its histogram gone (SIGSEGV, where bare
# SIGPROF's default ends the program).
sh -c './pg 5 off > off.bare 2> /dev/null'; st=$?
"$CPPROF" record -o off.data ./pg 5 off > off.out 2> /dev/null
is "$?/$(cat off.out)" "$st/$(cat off.bare)" "gcc -pg, moncontrol(0), raise(SIGPROF): the action and the end as bare ($st)"
done_testing
