# cfprof record on a program of many distinct call paths (265,720 calls
# on 209,144 paths; tests/progs/cf_paths.c): every call
# counted, and what a new path costs in memory.  A path's node is 240
# bytes (its cache of 8 children; before, 16 and 344), its children are
# found on its list or, past 8, in the thread's table, and the table
# holds only those: the program's peak RSS grows by at most 300 bytes a
# path (measured 248; before, 395).  The same nodes in a C++ test suite
# (yaml-cpp's, gmock: ~6M paths) took 2.4 GB.
. "$(dirname "$0")/../lib.sh"
plan 5
CFPROF=$B/bin/cfprof
cd "$T" || exit 1
. "$TOP/tests/cf.sh"

cf_build cf_paths cf_paths.c || exit 1
record paths ./cf_paths
flat=$("$CFPROF" -p ./cf_paths paths.data)
bad=0
for i in $(seq 0 31); do
	[ "$(flat "$flat" f$i 3)" = "$(truth paths.bare f$i)" ] || bad=$((bad + 1))
done
is "$bad" 0 "paths: each of the 32 functions' calls exact (f0 $(flat "$flat" f0 3), f31 $(flat "$flat" f31 3))"
"$CFPROF" export --format folded --counter calls -o paths.folded paths.data
n=$(wc -l < paths.folded)
ok "$([ "$n" -gt 200000 ] && echo 0 || echo 1)" "paths: $n paths in the file (at least 200,000)"
sum=$(awk '$1 ~ /;f[0-9]+$/ { s += $NF } END { print s }' paths.folded)
is "$sum" "$(awk '{ s += $2 } END { print s }' paths.bare)" "paths: the paths' calls add up to every call the program made"
# The program's own peak RSS (VmHWM, on stderr), under cfprof and bare.
per=$(awk -v a="$(truth paths.bare.err hwm)" -v b="$(truth paths.err hwm)" -v n="$n" \
	'BEGIN { printf "%d", (a > 0 && b > 0 ? (b - a) * 1024 / n : 99999) }')
ok "$([ "$per" -le 300 ] && echo 0 || echo 1)" "paths: $per bytes of peak RSS a path (budget 300; 395 before the list of children)"
done_testing
