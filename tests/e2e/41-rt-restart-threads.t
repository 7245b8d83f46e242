# mprof_restart while another thread holds counts of the old profile (the
# monitor's per-thread blocks are zeroed lazily, by their owners): the new
# file has only what came after the restart, whichever thread made it
# (rt_restart_threads.c).
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/rt.sh"
plan 15

rt_build rrt rt_restart_threads.c -pthread
rt_build race rt_restart_race.c -pthread
cd "$T" || exit 1
for m in $RT_MODES; do
	rm -f *.data
	MPROF_OUT=one.data rt_run $m rrt two.data
	ok $? "$m: the program runs"
	is "$(rt_bins two.data | awk '$1 >= 50 && $1 <= 70' | tr '\n' ,)" "60 3 1 180 60,70 2 0 140 0," \
		"$m: only the allocations after the restart, from both threads"
	# and stdout's buffer, from before the restart too, released at exit
	# by __libc_freeres (not when the monitor is in the executable).
	n=11; [ "$m" = a ] && n=10
	is "$(info two.data unknown_frees)" $n "$m: the 10 older blocks (and stdout's buffer) are unknown frees"
	set -- $(rt_totals two.data)
	is "$(rt_sums two.data)" "$1 $3 $2 $4" "$m: stack counters sum to the totals"
done
# 100 restarts racing two allocating threads (rt_restart_race.c), three
# runs: an allocation that raced a restart must not leave its object with
# an index of the new profile (its free would be counted there without its
# allocation).  The last profile is written with the threads joined: exact.
for m in $RT_MODES; do
	bad=
	for run in 1 2 3; do
		rm -rf "$T/rr"; mkdir "$T/rr"
		rt_run $m race "$T/rr" 100
		bad=$bad$("$MPROF" dump "$T/rr/r99.data" | awk '$1 == "stack" && $12 + $13 + $14 + $15 > $4 + $5 + $6 + $7 { n++ }
			$1 == "info" && $2 == "allocs" { a = $3 } $1 == "info" && $2 == "frees" { f = $3 }
			END { if (n || f > a || !a) printf "[run: %d stacks with frees > allocs, allocs %d frees %d]", n, a, f }')
	done
	is "$bad" "" "$m: after 100 restarts racing two threads, no stack has more frees than allocations"
done
done_testing
