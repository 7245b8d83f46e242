# cfprof record and thread exit: a pthread key destructor of the program
# runs instrumented code after the thread's function returned; its calls
# are counted (the runtime's own teardown waits for the last round).
. "$(dirname "$0")/../lib.sh"
plan 4
CFPROF=$B/bin/cfprof
cd "$T" || exit 1
. "$TOP/tests/cf.sh"

cf_build cf_tsd cf_tsd.c -pthread || exit 1
record tsd ./cf_tsd
flat=$("$CFPROF" -p ./cf_tsd tsd.data)
for f in work dtor helper; do
	is "$(flat "$flat" $f 3)" "$(truth tsd.bare $f)" "tsd: $f's calls exact"
done
done_testing
