# mprof_restart while another thread holds counts of the old profile (the
# monitor's per-thread blocks are zeroed lazily, by their owners): the new
# file has only what came after the restart, whichever thread made it
# (rt_restart_threads.c).
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/rt.sh"
plan 12

rt_build rrt rt_restart_threads.c -pthread
cd "$T" || exit 1
for m in $RT_MODES; do
	rm -f *.data
	MPROF_OUT=one.data rt_run $m rrt two.data
	ok $? "$m: the program runs"
	is "$(rt_bins two.data | awk '$1 >= 50 && $1 <= 70' | tr '\n' ,)" "60 3 1 180 60,70 2 0 140 0," \
		"$m: only the allocations after the restart, from both threads"
	is "$(info two.data unknown_frees)" 10 "$m: the 10 older blocks are unknown frees"
	set -- $(rt_totals two.data)
	is "$(rt_sums two.data)" "$1 $3 $2 $4" "$m: stack counters sum to the totals"
done
done_testing
