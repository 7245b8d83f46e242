# The keep (issue 22, item 2; lib/format/keepfmt.h): under mprof run, cpprof
# record and cfprof record, a program's profile survives however it ends
# (SIGKILL from itself or from outside, the OOM killer, abort, a crash,
# _exit, exit_group, a Go program's own exit), holding everything up to
# the moment of death, and INFO says how it ended.  A program the root
# exec'd takes the keep over; a forked child keeps its own counts apart.
# Without a launcher, _exit saves.  When no profile can be written, the
# launcher gives the true reason (statically linked, set-user-ID, the keep
# void).  A program that wrecks its own keep never crashes the launcher,
# and what it writes reads or is refused in one line.
. "$(dirname "$0")/../lib.sh"
plan 96
CPPROF=$B/bin/cpprof
CFPROF=$B/bin/cfprof
cd "$T" || exit 1

cc -g -O0 -pthread -o ends "$TOP/tests/progs/rt_ends.c" || exit 1
cc -g -O2 -pthread -finstrument-functions -o ends-cf "$TOP/tests/progs/rt_ends.c" || exit 1
cc -g -O0 -I"$TOP/lib/format" -o scribble "$TOP/tests/progs/rt_scribble.c" || exit 1
cc -g -O0 -I"$TOP/lib/format" -finstrument-functions -o scribble-cf "$TOP/tests/progs/rt_scribble.c" || exit 1

# ended FILE, cmdline FILE: INFO's whole value.
ended() { "$MPROF" dump "$1" | sed -n 's/^info ended //p'; }
cmdline() { "$MPROF" dump "$1" | sed -n 's/^info cmdline //p'; }
# direct FILE NAME [EXE]: "calls bytes" of NAME's row in the direct
# allocation table.
direct() {
	"$MPROF" -verbose "${3:-$T/ends}" "$1" 2>/dev/null | awk -v n="$2" '
		/^--------- DIRECT ALLOCATION/ { on = 1; next }
		/^---------/ { on = 0 }
		on && $NF == n { print $(NF - 1), $2; exit }'
}
# kept FILE NAME: the kept bytes of the leak chain ending in NAME.
kept() {
	"$MPROF" -verbose "$T/ends" "$1" 2>/dev/null | awk -v n="$2" '
		/^--------- MEMORY LEAKS/ { on = 1; next }
		/^---------/ { on = 0 }
		on && $NF == n { print $1; exit }'
}

# ---- mprof run: every end ----
for end in "exit 3 exit" "_exit 4 _exit(4)" \
	"exit_group 5 exit status 5 without exit handlers (exit_group)" \
	"abort 134 killed by signal 6 (SIGABRT)" "segv 139 killed by signal 11 (SIGSEGV)" \
	"kill 137 killed by signal 9 (SIGKILL)" "threads-kill 137 killed by signal 9 (SIGKILL)"; do
	set -- $end
	how=$1 st=$2
	shift 2
	ended=$*
	rm -f m.data
	"$MPROF" run -o m.data ./ends "$how" > out 2> err
	is "$?/$(cat out)" "$st/allocated" "mprof run, $how: exit status and output are the program's"
	is "$(ended m.data)" "$ended" "mprof run, $how: INFO ended says how"
	is "$(direct m.data one_a)/$(direct m.data one_b)" "1000 100000/300 1500000" \
		"mprof run, $how: every allocation up to the end, on its stack"
	is "$(kept m.data one_a)/$(kept m.data one_b)" "60000/1500000" "mprof run, $how: the frees too"
done
is "$(direct m.data worker)" "1000 64000" "threads-kill: the threads' allocations too"
like "$(cat err)" "^mprof: run: ./ends ended without saving its profile \(killed by signal 9 \(SIGKILL\)\); written to $T/m.data from its keep$" \
	"the launcher says it wrote the profile, and why it had to"
is "$(info m.data reason)" salvage "INFO reason: salvage"
like "$("$MPROF" ./ends m.data | head -1)" "^mprof: ./ends threads-kill \(pid [0-9]+; killed by signal 9 \(SIGKILL\)\): 2305 allocations" \
	"the tables' first line says how the program ended"

# ---- killed from outside ----
rm -f m.data
"$MPROF" run -o m.data ./ends wait > out 2> err &
launcher=$!
i=0
while ! grep -q ready out 2>/dev/null && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
kill -9 "$(pgrep -P $launcher)"
wait $launcher
is "$?" 137 "killed from outside: the launcher passes SIGKILL on"
is "$(ended m.data)/$(direct m.data one_a)" "killed by signal 9 (SIGKILL)/1000 100000" \
	"killed from outside: the profile to the moment of death"

# ---- exec: the image the root exec'd takes the keep over ----
rm -f m.data
"$MPROF" run -o m.data sh -c 'exec ./ends kill' > /dev/null 2>&1
is "$(cmdline m.data)/$(direct m.data one_b)" "./ends kill/300 1500000" \
	"sh exec'd the program: its profile, not the shell's"

# ---- the OOM killer, in a memory cgroup of its own ----
cat > grow.c <<'EOC'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
__attribute__((noinline)) static void *grow_one(void)
{
	void *p = malloc(1 << 20);
	return p ? memset(p, 7, 1 << 20) : NULL;
}
int main(void)
{
	printf("growing\n");
	fflush(stdout);
	while (grow_one())
		;
	return 1;
}
EOC
cc -g -O0 -o grow grow.c
# memcg NAME BYTES: a memory cgroup of its own (its path), or nothing.
memcg() {
	if [ -w /sys/fs/cgroup/memory ]; then
		mkdir "/sys/fs/cgroup/memory/$1-$$" &&
			echo "$2" > "/sys/fs/cgroup/memory/$1-$$/memory.limit_in_bytes" &&
			echo "/sys/fs/cgroup/memory/$1-$$"
	elif [ -w /sys/fs/cgroup/cgroup.subtree_control ] && grep -qw memory /sys/fs/cgroup/cgroup.controllers; then
		mkdir "/sys/fs/cgroup/$1-$$" && echo "$2" > "/sys/fs/cgroup/$1-$$/memory.max" &&
			echo "/sys/fs/cgroup/$1-$$"
	fi
}
cg=$(memcg mprof-keep $((64 << 20)))
if [ -n "$cg" ]; then
	rm -f m.data
	"$MPROF" run -o m.data sh -c "echo \$\$ > $cg/cgroup.procs && exec ./grow" > out 2> err
	st=$?
	rmdir "$cg"
	is "$st/$(cat out)" "137/growing" "the OOM killer: SIGKILL passed on"
	is "$(ended m.data)" "killed by signal 9 (SIGKILL), likely by the OOM killer" \
		"the OOM killer: INFO ended says so"
	calls=$(direct m.data grow_one "$T/grow")
	calls=${calls%% *}
	[ "${calls:-0}" -ge 40 ]
	ok $? "the OOM killer: the allocations that filled the cgroup are in the profile ($calls MiB)"
else
	fail "no memory cgroup to run the OOM test in (/sys/fs/cgroup/memory or cgroup v2's memory controller, as root)"
	fail "not run: no memory cgroup"
	fail "not run: no memory cgroup"
fi

# ---- mlockall: the keep's pages not handed out are not locked in ----
# (mlockall populates every accessible page: 64 GiB of a shared mapping
# would be the memfd's memory.)
printf '#include <stdio.h>\n#include <sys/mman.h>\nint main(void) { int rc = mlockall(MCL_CURRENT | MCL_FUTURE); printf("mlockall %%d\\n", rc); return rc != 0; }\n' > lock.c
cc -o lock lock.c
cg=$(memcg mprof-lock $((256 << 20)))
if [ -n "$cg" ]; then
	"$MPROF" run -o l.data sh -c "echo \$\$ > $cg/cgroup.procs && exec ./lock" > out 2> /dev/null
	st=$?
	rmdir "$cg"
	is "$st/$(cat out)" "0/mlockall 0" "mlockall under mprof run, in 256 MiB: not killed"
else
	fail "no memory cgroup to run the mlockall test in (as root)"
fi

# ---- fork: the child's counts stay the child's ----
rm -f m.data m.data.*
"$MPROF" run -o m.data ./ends fork-kill > /dev/null 2>&1
child=$(ls m.data.* 2>/dev/null | head -1)
bins() { "$MPROF" dump "$1" | awk -v s="$2" '$1 == "bin" && $2 == s { print $3 }'; }
is "$(bins m.data 55)/$(bins m.data 77)" "300/" "fork: the parent's salvaged profile has none of its child's allocations"
is "$(bins "$child" 77)/$(bins "$child" 55)/$(ended "$child")" "500//exit" \
	"fork: the child's file has its own, and none its parent made after the fork"

# Threads that start as the program forks take keep memory while the
# fork handler copies the keep: the child gets it too, never a pointer to
# an unmapped page.
rm -f f.data f.data.*
"$CFPROF" record -o f.data ./ends-cf fork-race > out 2> /dev/null
is "$?/$(tail -1 out)/$(ls f.data.* | wc -l)" "0/children crashed: 0/60" \
	"fork while threads start: every child runs on and writes its file"
rm -f f.data f.data.*
# A vfork child shares its parent's thread: its _exit must leave the
# thread's state as it was.
rm -f m.data
"$MPROF" run -o m.data ./ends vfork-fail > /dev/null 2>&1
is "$(bins m.data 33)" 200 "after a vfork child's failed exec and _exit, the parent is still counted"
# The file mprof_stop saved is not replaced by the tables of a profile
# mprof_restart sent to another file.
rm -f m.data other.data
"$MPROF" run -o m.data ./ends restart-kill > /dev/null 2>&1
is "$(bins m.data 11)/$(bins m.data 22)/$(ls other.data 2>/dev/null)" "100//" \
	"mprof_restart to another file, then SIGKILL: the saved profile stays"
# Below 1024, whatever the limit: a process's descriptor table is as
# large as its highest descriptor, and every fork copies it.
hard=$(ulimit -Hn)
want=1023
[ "$hard" != unlimited ] && [ "$hard" -lt 1024 ] && want=$((hard - 1))
is "$(ulimit -n "$hard"; "$MPROF" run -o m.data sh -c 'ls /proc/$$/fd' | sort -n | tail -1)" $want \
	"the keep's descriptor is below 1024 under the highest limit ($hard)"

# ---- without a launcher: _exit saves, in the root and in a forked child ----
rm -f p.data
MPROF_OUT=p.data LD_PRELOAD="$LIBMPROF/libmprof.so" ./ends _exit > /dev/null
is "$?/$(ended p.data)/$(direct p.data one_a)" "4/_exit(4)/1000 100000" \
	"preloaded, no launcher: _exit saves first"
rm -f py.data*
# The interpreter itself (pyenv's python3 is a script that runs others).
py=$(python3 -c 'import sys; print(sys.executable)')
"$MPROF" run -o py.data "$py" -c '
import os
pid = os.fork()
if pid == 0:
    keep = [bytearray(3000) for i in range(100)]
    os._exit(7)
print(os.waitpid(pid, 0)[1] >> 8)' > out 2>/dev/null
pyc=$(ls py.data.* 2>/dev/null | head -1)
is "$(cat out)/$(ended "$pyc")" "7/_exit(7)" "python's os._exit in a forked child: its file is written"

# ---- cpprof record ----
for end in "kill 137 killed by signal 9 (SIGKILL)" "abort 134 killed by signal 6 (SIGABRT)" \
	"exit_group 5 exit status 5 without exit handlers (exit_group)"; do
	set -- $end
	how=$1 st=$2
	shift 2
	rm -f c.data
	"$CPPROF" record -o c.data ./ends "$how" spin > out 2>/dev/null
	is "$?/$(cat out)/$(ended c.data)" "$st/allocated/$*" "cpprof record, $how: status, output, INFO ended"
	is "$("$CPPROF" -c function ./ends c.data 2>/dev/null | sed -n 3p)" "run ended: $*" \
		"cpprof record, $how: the view's header says how the program ended"
	n=$("$CPPROF" -c function ./ends c.data 2>/dev/null | awk '$2 == "spin_here" { gsub(/[][]/, "", $3); print $3 }')
	[ "${n:-0}" -ge 150 ]
	ok $? "cpprof record, $how: the samples up to the end ($n in spin_here of ~300)"
done

# ---- cfprof record: exact counts survive ----
for end in "kill 137 killed by signal 9 (SIGKILL)" "_exit 4 _exit(4)" \
	"exit_group 5 exit status 5 without exit handlers (exit_group)"; do
	set -- $end
	how=$1 st=$2
	shift 2
	rm -f f.data
	"$CFPROF" record -o f.data ./ends-cf "$how" > out 2>/dev/null
	is "$?/$(cat out)/$(ended f.data)" "$st/allocated/$*" "cfprof record, $how: status, output, INFO ended"
	is "$("$CFPROF" ./ends-cf f.data 2>/dev/null | sed -n 2p)" "run ended: $*" \
		"cfprof record, $how: the flat profile's header says how the program ended"
	calls=$("$CFPROF" ./ends-cf f.data 2>/dev/null | awk '$NF == "one_a" || $NF == "one_b" || $NF == "keep_b" { c[$NF] = $3 } END { print c["one_a"], c["one_b"], c["keep_b"] }')
	is "$calls" "1000 300 1" "cfprof record, $how: every call counted, exactly"
done

# ---- a Go program's own exit (exit_group): its C allocations ----
if command -v go > /dev/null; then
	mkdir cgo && cp "$TOP/tests/progs/sig_cgo.go" cgo/
	(cd cgo && env GOCACHE="$B/tools/gocache" GOPATH="$T/gopath" GO111MODULE=off GOFLAGS=-buildvcs=false \
		GOPROXY=off GOTOOLCHAIN=local CGO_ENABLED=1 go build -o "$T/sig_cgo" sig_cgo.go) > /dev/null 2>&1
	./sig_cgo goexit > bare 2>&1
	"$MPROF" run -o g.data ./sig_cgo goexit > out 2> err
	is "$?/$(cmp -s bare out && echo same)" "0/same" "cgo, Go's exit: exit status and output are the program's"
	calls=$(direct g.data strdup "$T/sig_cgo")
	is "${calls%% *}/$(ended g.data)" "1200000/exit status 0 without exit handlers (exit_group)" \
		"cgo, Go's exit: every strdup of the goroutines counted"
	"$CPPROF" record -o gc.data ./sig_cgo goexit > out 2>/dev/null
	like "$("$CPPROF" -c function ./sig_cgo gc.data 2>/dev/null)" "^[0-9.]+ runtime\.[a-z]+ " \
		"cgo, Go's exit under cpprof record: a profile naming the Go runtime's functions"
else
	fail "go not found: this test needs Debian's golang-go (scripts/install-deps.sh)"
	fail "not run: no go"
	fail "not run: no go"
fi

# ---- no profile: the true reason ----
printf 'int main(void) { return 4; }\n' > st.c
cc -static -o st st.c || fail "no static libc (libc6-dev) to link with"
"$MPROF" run -o s.data ./st 2> err
is "$?/$(cat err)" "4/mprof: run: ./st wrote no profile to $T/s.data (./st is statically linked: no loader runs to preload libmprof.so (link it with libmprof.a))" \
	"a static program: said so"
# A program with an allocator of its own linked in (rustup's rustc links
# jemalloc): its malloc takes every call, and the monitor sees none.  The
# runtime says so itself (a child under cargo said nothing), and the
# launcher gave a false reason ("libmprof.so was not loaded").
cc -O1 -o own "$TOP/tests/progs/rt_ownmalloc.c" || exit 1
out=$("$MPROF" run -o own.data ./own 2> err)
is "$?/$out/$(ls own.data* 2>/dev/null)" "3/its own malloc/" "a program with its own malloc: runs as bare, no profile"
is "$(cat err)" "mprof: ./own has a malloc of its own (an allocator, or a monitor, linked into it): this monitor sees no allocation and writes no profile
mprof: run: ./own wrote no profile to $T/own.data (./own defines malloc itself (an allocator linked into it): no allocation reaches libmprof.so)" \
	"... and the runtime and the launcher say why"
# (Where another user can reach it: mprof, its library and the program.)
W=$(mktemp -d /tmp/mprof-suid.XXXXXX) && chmod 755 "$W" && mkdir "$W/bin" "$W/lib" &&
	mkdir -m 777 "$W/out" && cp "$MPROF" "$W/bin/" && cp "$LIBMPROF/libmprof.so" "$W/lib/" &&
	cp ends "$W/ends-suid" && chmod 4755 "$W/ends-suid"
(cd "$W/out" && setpriv --reuid=nobody --regid=nogroup --clear-groups "$W/bin/mprof" run -o s.data \
	../ends-suid exit > /dev/null 2> "$T/err")
is "$?/$(cat err)" "3/mprof: run: ../ends-suid wrote no profile to $W/out/s.data (../ends-suid is set-user-ID: the loader runs it in secure-execution mode and ignores LD_PRELOAD)" \
	"a set-user-ID program run by another user: said so"
rm -rf "$W"
rm -f x.data
"$MPROF" run -o x.data sh -c 'exec ./st' 2> err
is "$?/$(cat err)/$(ls x.data 2>/dev/null)" "4/mprof: run: sh wrote no profile to $T/x.data (it exec'd ./st, which did not take its keep: ./st is statically linked: no loader runs to preload libmprof.so (link it with libmprof.a))/" \
	"exec into a program no runtime enters: the shell's tables are not its profile, and said why"
(ulimit -f 1000 && "$MPROF" run -o v.data ./ends kill > /dev/null 2> err)
like "$(cat err)" "wrote no profile to $T/v.data \(RLIMIT_FSIZE is below 256 MiB\)$" \
	"a keep that could not be made: said why"
# A sparse mapping still counts in RLIMIT_AS: the keep takes a quarter of
# it at most, not the program's room (the program is limited, not mprof).
"$MPROF" run -o v.data sh -c 'ulimit -v 900000 && exec ./ends kill' > /dev/null 2> err
like "$(cat err)" "^mprof: run: sh wrote no profile to $T/v.data \(RLIMIT_AS is below 1 GiB\)$" \
	"under RLIMIT_AS, the keep leaves the program its room"
# 256 MiB of keep under this limit; cpprof's table wants more: the keep
# is void, and _exit must save as without one.
rm -f c.data
(ulimit -f 600000 && "$CPPROF" record -o c.data ./ends _exit > /dev/null 2> err)
is "$?/$(ended c.data)/$(cat err)" "4/_exit(4)/" "a void keep: _exit saves, as without a launcher"

# ---- a program that wrecks its keep ----
for tool in mprof cpprof cfprof; do
	case $tool in
	mprof) run="$MPROF run" prog=./scribble ;;
	cpprof) run="$CPPROF record" prog=./scribble ;;
	cfprof) run="$CFPROF record" prog=./scribble-cf ;;
	esac
	for mode in "all 1" "flip 1" "flip 2" "flip 3" "header 1"; do
		set -- $mode
		rm -f w.data
		(timeout 60 $run -o w.data $prog "$1" "$2" > out 2> err) 2> /dev/null
		st=$?
		ok=1
		# SIGKILL, or the program's own crash: a wrecked keep is
		# wrecked tables, which the collector's hooks may still use.
		[ "$st" = 137 ] || [ "$st" = 139 ] || [ "$st" = 134 ] || ok=0
		[ "$(wc -l < err)" -le 1 ] || ok=0
		grep -q "^$tool: " err || ok=0
		if [ -f w.data ]; then
			"$MPROF" dump w.data > /dev/null 2> derr
			dst=$?
			[ "$dst" = 0 ] || { [ "$dst" = 2 ] && [ "$(wc -l < derr)" = 1 ]; } || ok=0
		fi
		[ $ok = 1 ]
		ok $? "$tool, keep wrecked ($1 $2): the launcher passes the death on, says one line, its file reads or is refused in one"
		[ $ok = 1 ] || diag "status $st" "$(cat err)" "$(cat derr 2>/dev/null)"
	done
done

# Signals sent to the launcher are the program's (a supervisor's SIGTERM
# to the pid it started, a script's `kill $!`, timeout's kill of its
# group): the launcher relays them and lives on to write the profile.  It
# died of them: no profile, and the program ran on as an orphan.
for tool in mprof cpprof cfprof; do
	case $tool in
	mprof) rec="$MPROF run" prog=./ends ;;
	cpprof) rec="$CPPROF record" prog=./ends ;;
	cfprof) rec="$CFPROF record" prog=./ends-cf ;;
	esac
	rm -f sig.data sig.out
	$rec -o sig.data $prog wait > sig.out 2>&1 &
	L=$!
	for i in $(seq 1 50); do grep -q ready sig.out 2> /dev/null && break; sleep 0.1; done
	kill -TERM $L
	wait $L
	st=$?
	running=$(pgrep -f "^$prog wait\$" | wc -l)
	is "$st/$running/$(ended sig.data)" "143/0/killed by signal 15 (SIGTERM)" \
		"$tool: SIGTERM to the launcher: the program gets it, the profile is written, status 143"
done
rm -f sig.data sig.out
$MPROF run -o sig.data ./ends wait > sig.out 2>&1 &
L=$!
for i in $(seq 1 50); do grep -q ready sig.out 2> /dev/null && break; sleep 0.1; done
kill -HUP $L
wait $L
is "$?/$(ended sig.data)" "129/killed by signal 1 (SIGHUP)" "mprof: SIGHUP to the launcher, the same (a terminal's hang-up reaches both, and is not relayed)"
rm -f sig.data
timeout 0.5 $MPROF run -o sig.data sleep 20 > /dev/null 2>&1
is "$?/$(ended sig.data)" "124/killed by signal 15 (SIGTERM)" "mprof under timeout: status 124, the profile written"
done_testing
