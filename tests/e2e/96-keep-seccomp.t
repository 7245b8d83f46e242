# A program that enters a seccomp sandbox (sshd's pre-authentication
# child: a filter that kills the thread for any system call it does not
# make itself, rt_sigreturn among them).  Under cpprof the first sample
# after the filter killed it (SIGSYS: every ssh login failed); with -e
# real its one thread was killed and the sampler's watcher kept the
# process alive (every login hung).  Now the collectors are told before
# the filter goes in (runtime/common/sandbox.c: prctl and syscall
# interposed), save what they have while every system call is allowed,
# and stop: the program runs and ends as bare, the profile covers it up
# to its sandbox.
# (The program's output goes to files: an orphan that kept a pipe open
# would hang the test.)
. "$(dirname "$0")/../lib.sh"
plan 16
CPPROF=$B/bin/cpprof
cd "$T" || exit 1
cc -O1 -g -o rs "$TOP/tests/progs/rt_seccomp.c" || exit 1
ended() { "$MPROF" dump "$1" | sed -n 's/^info ended //p'; }

for how in prctl syscall; do
	timeout 60 "$MPROF" run -o m.data ./rs $how > m.out 2> m.err
	rc=$?
	is "$(cat m.out)/$rc" "ok/5" "mprof, the filter by $how: output and exit status 5, as bare"
	is "$(ended m.data)/$("$MPROF" dump m.data | awk '$1 == "bin" && $2 == 123 { print $3 }')" \
		"stopped at its seccomp filter/100" \
		"mprof, $how: the profile saved at the filter, its 100 allocations of 123 bytes"
	timeout 60 "$CPPROF" record -o c.data ./rs $how > c.out 2> c.err
	rc=$?
	is "$(cat c.out)/$rc" "ok/5" "cpprof, the filter by $how: output and exit status 5, as bare (SIGSYS, 159, before)"
	prof=$("$CPPROF" -c function ./rs c.data 2>&1)
	n=$(printf '%s\n' "$prof" | awk '/ samples, sampled every / { print $1 }')
	before=$(printf '%s\n' "$prof" | awk '$2 == "before" { print $1 }')
	ok $(awk -v n="${n:-0}" -v b="${before:-0}" 'BEGIN { exit !(n >= 150 && b >= 0.95) }'; echo $?) \
		"cpprof, $how: the samples up to the filter: $n (0.2 s of CPU: >= 150), before() $before (>= 0.95)"
	is "$(ended c.data)" "stopped at its seccomp filter" "cpprof, $how: INFO ended says where sampling stopped"
	timeout 60 "$CPPROF" record -e real -o r.data ./rs $how > r.out 2> r.err
	rc=$?
	is "$(cat r.out)/$rc" "ok/5" "cpprof -e real, the filter by $how: ends, as bare (hung before: its watcher outlived it)"
done
is "$(cat m.err c.err r.err)" "" "nothing said"
is "$(ls *.data.* 2> /dev/null)" "" "no other file"
# A filter outlives exec, and the runtime of a program the sandboxed
# process runs never saw it go in: it must not make a keep of its own
# (keep.c's image_keep: memfd_create), which a filter that kills at
# memfd_create (a common rule) answered by killing it (SIGSYS, 31).
for t in "$MPROF run" "$CPPROF record"; do
	timeout 60 $t -o s.data ./rs spawn > s.out 2> s.err
	is "$(cat s.out)/$?/$(cat s.err)" "kid ok
kid status 0/0/" "${t##*/}, a filter that kills at memfd_create: the program it spawns runs as bare"
done
done_testing
