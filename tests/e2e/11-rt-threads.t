# Exact totals under contention: 4 threads x 100000 malloc/free pairs of 77
# bytes (every 1000th kept) plus 4000 blocks of 5000 bytes freed by main.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/rt.sh"
plan 15

rt_build threads rt_threads.c -pthread
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
done
done_testing
