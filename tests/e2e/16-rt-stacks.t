# The stacks: frames[0] is the return address into the function that called
# malloc (the monitor's own frames skipped), the walk goes through libc code
# without frame pointers (a qsort comparator), and deep recursion keeps the
# innermost frames, flagged truncated.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/rt.sh"
plan 27

rt_build qsort rt_qsort.c
rt_build deep rt_deep.c
cd "$T" || exit 1

# in_range ADDR LO HI: LO <= ADDR < HI (shell arithmetic takes 0x numbers).
in_range() { [ $(($1)) -ge $(($2)) ] && [ $(($1)) -lt $(($3)) ]; }

for m in $RT_MODES; do
	rm -f q.data d.data
	MPROF_OUT=q.data rt_run $m qsort
	ok $? "$m: qsort runs"
	dump=$("$MPROF" dump q.data)
	# The 3333-byte block is the only one in size class x (bytes.x, field 11).
	stk=$(printf '%s\n' "$dump" | awk '$1 == "stack" && $11 == 3333')
	set -- $stk
	ok $([ "${2:-0}" -ge 4 ]; echo $?) "$m: comparator's stack has $2 frames (>= 4)"
	frames=$(printf '%s\n' "$stk" | sed 's/.* : //')
	set -- $frames
	f0=$1 f1=$2
	bias=$(printf '%s\n' "$dump" | awk '$1 == "module" { print $4; exit }')
	set -- $(nm -S "$T/qsort$( [ $m = preload ] || echo "-$m")" | awk '$4 == "cmp" { print "0x" $1, "0x" $2 }')
	ok $(in_range $((f0 - bias)) $1 $(($1 + $2)); echo $?) "$m: frames[0] is in cmp (no monitor frame above it)"
	libc=$(printf '%s\n' "$dump" | awk '$1 == "module" && $NF ~ /\/libc\.so/ { print $2, $3 }')
	ok $(in_range $f1 $libc; echo $?) "$m: frames[1] is in libc (qsort's internals)"
	set -- $(nm -S "$T/qsort$( [ $m = preload ] || echo "-$m")" | awk '$4 == "main" { print "0x" $1, "0x" $2 }')
	inmain=1
	for f in $frames; do in_range $((f - bias)) $1 $(($1 + $2)) && inmain=0; done
	ok $inmain "$m: the walk reaches main through libc"
	mon=$(printf '%s\n' "$dump" | awk '$1 == "module" && $NF ~ /libmprof\.so$/ { print $2, $3 }')
	bad=0
	if [ -n "$mon" ]; then
		for f in $(printf '%s\n' "$dump" | awk '$1 == "stack"' | sed 's/.* : //'); do
			in_range $f $mon && bad=1
		done
	fi
	ok $bad "$m: no frame of any stack lies in libmprof.so"

	MPROF_OUT=d.data rt_run $m deep
	ok $? "$m: deep recursion runs"
	set -- $("$MPROF" dump d.data | awk '$1 == "stack" && $11 == 3001')
	ok $([ "$2" -ge 301 ] && [ "$3" = 0 ]; echo $?) "$m: depth 300 recursion: $2 frames, not truncated"
	set -- $("$MPROF" dump d.data | awk '$1 == "stack" && $11 == 3002')
	is "$2 $3" "1024 1" "$m: depth 3000 recursion: the innermost 1024 frames, flagged truncated"
done
done_testing
