# Allocations before main (a constructor) and after it (an atexit handler)
# are counted: the monitor starts with the first allocation and saves after
# the program's exit handlers.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/rt.sh"
plan 12

rt_build early rt_early.c
cd "$T" || exit 1
for m in $RT_MODES; do
	rm -f e.data
	MPROF_OUT=e.data rt_run $m early
	ok $? "$m: runs"
	is "$(rt_bin e.data 11)" "11 3 1 33 11" "$m: 3 allocations in a constructor, 1 freed at exit"
	is "$(rt_bin e.data 13)" "13 2 0 26 0" "$m: 2 allocations in an atexit handler"
	is "$(rt_bin e.data 17)" "17 1 0 17 0" "$m: 1 allocation in main"
done
done_testing
