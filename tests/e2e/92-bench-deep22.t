# bench/deep22.c, the cost table's worst case (issue 23): every allocation
# from a stack of its own, 22 frames of the program deep.  That rests on
# the compiler keeping each level's two call sites apart (no merged call,
# no tail call) at -O2, as the bench builds it: if a compiler merged them,
# the bench's row would measure a few stacks and still say 1e5.
. "$(dirname "$0")/../lib.sh"
plan 3
cc -O2 -g -o "$T/deep22" "$TOP/bench/deep22.c" || exit 1
want=$("$T/deep22" 5000)
got=$(MPROF_OUT="$T/d.data" LD_PRELOAD="$LIBMPROF/libmprof.so" "$T/deep22" 5000)
is "$got" "$want" "its output is its own under the monitor"
# Stacks at least 22 deep (the program's frames, then libc's start): one
# each for the 5000 allocations.
deep() { "$MPROF" dump "$T/d.data" | awk '$1 == "stack" && $2 >= 22' | wc -l | tr -d ' '; }
is "$(deep)" 5000 "5000 allocations, 5000 distinct stacks at least 22 deep"
# Each such stack holds one allocation (the allocs.* counters, one a
# size class, summed): none is shared.
shared=$("$MPROF" dump "$T/d.data" | awk '
	$1 == "counter" { n++; if ($2 ~ /^allocs\./) a[n] = 1 }
	$1 == "stack" && $2 >= 22 { s = 0; for (k in a) s += $(3 + k); if (s != 1) bad++ }
	END { print bad + 0 }')
is "$shared" 0 "each holds one allocation"
done_testing
