# fork: the child keeps what it inherited (its heap is a copy) and writes
# FILE.PID; the parent's FILE is its own.  With MPROF_ROOT_PID (set by
# `mprof run` to the pid it execs) only that process writes FILE.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/rt.sh"
plan 21

rt_build fork rt_fork.c
cd "$T" || exit 1
for m in $RT_MODES; do
	rm -f f.data*
	child=$(MPROF_OUT=f.data rt_run $m fork)
	ok $? "$m: runs"
	# stdout's buffer is released at exit by __libc_freeres, but not when
	# the monitor is linked into the executable (freeres.c).
	buf="1 4096 4096"; [ "$m" = a ] && buf="0 4096 0"
	is "$(rt_bins f.data | tr '\n' ,)" "21 10 0 210 0,23 3 0 69 0,1025 1 $buf," \
		"$m: parent file: its own allocations (and stdout's buffer)"
	is "$(ls f.data.* | tr '\n' ' ')" "f.data.$child " "$m: one child file, f.data.PID"
	is "$(info f.data.$child pid)" "$child" "$m: written by the child"
	is "$(rt_bins f.data.$child | tr '\n' ,)" "21 10 2 210 42,22 5 0 110 0," \
		"$m: child: inherited objects, two of them freed, its own allocations"

	rm -f f.data*
	child=$(MPROF_OUT=f.data sh -c 'MPROF_ROOT_PID=$$ exec "$@"' sh $(rt_cmd $m fork))
	ok $([ -f f.data ] && [ "$(ls f.data.*)" = "f.data.$child" ]; echo $?) \
		"$m: MPROF_ROOT_PID is this process: FILE, and FILE.PID for the child"

	rm -f f.data*
	child=$(MPROF_OUT=f.data MPROF_ROOT_PID=1 rt_run $m fork)
	ok $([ ! -f f.data ] && [ -f f.data.$child ] && [ "$(ls f.data.* | wc -l)" -eq 2 ]; echo $?) \
		"$m: MPROF_ROOT_PID is another process: FILE.PID for parent and child alike"
done
done_testing
