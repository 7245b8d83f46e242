# Exact counts under stress: two waves of 8 threads of random malloc,
# realloc and free, a third of the frees on another thread than the
# allocation (rt_stress.c), 200000 operations per slot preloaded, fewer
# in the linked modes.  The program prints what it allocated and freed;
# the stacks whose innermost frame is in its own code (get, put's caller
# work) must add up to exactly that, and nothing may be unknown or lost.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/rt.sh"
plan 15

rt_build stress rt_stress.c -pthread
cd "$T" || exit 1

# own_sums DATA EXE: "allocs frees bytes freed" over the stacks whose
# frames[0] lies in get() or work() of EXE (libc's own allocations, made
# for pthread_create, are left out).
own_sums() {
	_bias=$("$MPROF" dump "$1" | awk '$1 == "module" { print $4; exit }')
	_ranges=$(nm -S "$2" | awk '$4 == "get" || $4 == "work" { print "0x" $1, "0x" $2 }')
	"$MPROF" dump "$1" | awk '$1 == "stack" {
		a = b = f = g = 0
		for (c = 0; c < 4; c++) { a += $(4 + c); b += $(8 + c); f += $(12 + c); g += $(16 + c) }
		for (i = 1; i <= NF; i++) if ($i == ":") { print $(i + 1), a, f, b, g; break } }' |
	{
		sa=0 sf=0 sb=0 sg=0
		while read -r f0 a f b g; do
			off=$((f0 - _bias))
			echo "$_ranges" | {
				hit=1
				while read -r lo len; do
					[ $off -ge $((lo)) ] && [ $off -lt $((lo + len)) ] && hit=0
				done
				exit $hit
			} && { sa=$((sa + a)) sf=$((sf + f)) sb=$((sb + b)) sg=$((sg + g)); }
		done
		echo "$sa $sf $sb $sg"
	}
}

for m in $RT_MODES; do
	rm -f s.data
	n=200000
	[ $m = preload ] || n=20000
	want=$(MPROF_OUT=s.data rt_run $m stress $n)
	ok $? "$m: the stress program runs ($n operations per slot)"
	exe=$T/stress$( [ $m = preload ] || echo "-$m")
	is "$(own_sums s.data "$exe")" "$want" "$m: the program's stacks count exactly what it did"
	set -- $(rt_totals s.data)
	is "$5 $6" "0 0" "$m: no unknown frees, nothing dropped"
	is "$(rt_sums s.data)" "$1 $3 $2 $4" "$m: stack counters sum to the totals"
	set -- $(rt_bins s.data | awk '{ a += $2; f += $3; b += $4; g += $5 } END { print a, f, b, g }')
	is "$*" "$(set -- $(rt_totals s.data); echo $1 $2 $3 $4)" "$m: bins sum to the totals"
done
done_testing
