# The aligned allocators and calloc/realloc/reallocarray under the monitor:
# no crash freeing memalign/valloc memory (mprof.1 BUGS), exact counts and
# bytes, realloc counted as a free plus an allocation.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/rt.sh"
plan 30

rt_build aligned rt_aligned.c
rt_build realloc rt_realloc.c
cd "$T" || exit 1
for m in $RT_MODES; do
	rm -f "$T/a.data" "$T/r.data"
	MPROF_OUT=a.data rt_run $m aligned
	ok $? "$m: aligned allocations are aligned, usable and freed"
	is "$(rt_totals a.data)" "5 5 896 896 0 0" "$m: 5 aligned allocations and frees, 896 bytes"
	is "$(rt_sums a.data)" "5 896 5 896" "$m: stacks sum to the same"
	is "$(rt_bins a.data | tr '\n' ,)" "40 1 1 40 40,100 1 1 100 100,200 1 1 200 200,256 1 1 256 256,300 1 1 300 300," \
		"$m: bins of the requested sizes (not the rounded ones)"
	is "$("$MPROF" dump a.data | grep -c '^stack')" 5 "$m: one stack per call site"

	MPROF_OUT=r.data rt_run $m realloc
	ok $? "$m: calloc/realloc/reallocarray behave"
	is "$(rt_totals r.data)" "6 6 940 940 0 0" "$m: realloc = free + alloc: 6 allocations, 6 frees, 940 bytes"
	is "$(rt_sums r.data)" "6 940 6 940" "$m: stacks sum to the same"
	is "$(rt_bins r.data | tr '\n' ,)" "10 1 1 10 10,50 1 1 50 50,80 1 1 80 80,100 1 1 100 100,200 1 1 200 200,500 1 1 500 500," \
		"$m: every size allocated once and freed once"
	ok $([ -z "$(ls "$T" | grep '\.tmp\.')" ]; echo $?) "$m: no temporary file left"
done
done_testing
