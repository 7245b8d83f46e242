# cfprof record and recursion deeper than the logical stack (1M entries):
# the calls beyond it are still counted (on the deepest path held: the
# recursion's own node), the program's output unchanged.
. "$(dirname "$0")/../lib.sh"
plan 3
CFPROF=$B/bin/cfprof
cd "$T" || exit 1
. "$TOP/tests/cf.sh"

cf_build cf_verydeep cf_verydeep.c -pthread || exit 1
record vd ./cf_verydeep
flat=$("$CFPROF" -p ./cf_verydeep vd.data)
for f in rec leaf; do
	is "$(flat "$flat" $f 3)" "$(truth vd.bare $f)" "verydeep: $f's calls exact"
done
done_testing
