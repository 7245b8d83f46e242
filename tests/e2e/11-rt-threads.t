# Exact totals under contention: 4 threads x 100000 malloc/free pairs of 77
# bytes (every 1000th kept) plus 4000 blocks of 5000 bytes freed by main.
# Allocations in key destructors after the monitor's, through the shared
# orphan block, made by the first of 16 exiting threads (rt_orphan.c).
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/rt.sh"
plan 24

rt_build threads rt_threads.c -pthread
rt_build orphan rt_orphan.c
cd "$T" || exit 1
for m in $RT_MODES; do
	rm -f t.data
	MPROF_OUT=t.data rt_run $m threads
	ok $? "$m: the threaded program runs"
	is "$(rt_bin t.data 77)" "77 400000 399600 30800000 30769200" "$m: bin 77 exact: 400000 allocs, 399600 frees"
	is "$(rt_bin t.data 1025)" "1025 4000 4000 20000000 20000000" "$m: 4000 blocks freed on another thread"
	set -- $(rt_totals t.data)
	is "$(rt_sums t.data)" "$1 $3 $2 $4" "$m: stack counters sum to the totals"
	is "$5 $6" "0 0" "$m: no unknown frees, nothing dropped"

	rm -f o.data
	is "$(MPROF_OUT=o.data timeout 60 $(rt_cmd $m orphan))" 16 "$m: 16 threads' key destructors allocate"
	is "$(rt_bin o.data 91)/$(rt_bin o.data 92)" "91 16 0 1456 0/92 16 16 1472 1472" \
		"$m: the destructors' blocks counted, frees too, in the orphan block"
	bin=$T/orphan; [ $m = preload ] || bin=$T/orphan-$m
	like "$("$MPROF" "$bin" o.data)" '^ +1456 .*16 .* > destructor > orphan_alloc$' "$m: charged to their stacks"
done
done_testing
