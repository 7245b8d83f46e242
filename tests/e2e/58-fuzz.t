# The fuzz target (tests/fuzz/fuzz_tools.c: reader, symbolizer, mprof's
# tables, every cpprof view, dump's walk; ASan and UBSan) on every file of
# tests/fuzz/corpus/ and on hostile files naming a FIFO, then fuzzing from
# them for FUZZ_CHECK_SECONDS (20).  A crash leaves its input in
# $B/fuzz/artifacts/ (tests/fuzz/README: how to reproduce).
. "$(dirname "$0")/../lib.sh"
plan 4
F=$B/fuzz/fuzz_tools
C=$TOP/tests/fuzz/corpus
A=$B/fuzz/artifacts
SECONDS_=${FUZZ_CHECK_SECONDS:-20}
mkdir -p "$A" "$T/corpus"

# ASan's leak check at exit, UBSan fatal (the target is built with
# -fno-sanitize-recover), libFuzzer's own limits: 10 s an input, 2 GB.
opts="-timeout=10 -rss_limit_mb=2048 -max_len=65536 -artifact_prefix=$A/"

# Every corpus file, once.
timeout 300 "$F" $opts "$C"/* > "$T/replay" 2>&1; st=$?
is "$st/$(grep -c '^Executed ' "$T/replay")" "0/$(ls "$C" | wc -l)" "every corpus file runs through, no crash"
grep -E 'ERROR|runtime error' "$T/replay" | head -5 | while read -r l; do diag "$l"; done

# Module paths naming a FIFO (cannot be checked in): no hang.
mkfifo "$T/fifo"
"$B/tests/hostile" modpath "$T/corpus/fifo" "$T/fifo"
"$B/tests/hostile" samebias "$T/corpus/fifo2" "$T/fifo" /proc/self/exe
timeout 60 "$F" $opts "$T/corpus/fifo" "$T/corpus/fifo2" > "$T/fifo.out" 2>&1
is "$?" 0 "modules that are FIFOs: no hang, no crash"

# Fuzz, from the corpus, for a bounded time.
cp "$C"/* "$T/corpus/"
timeout $((SECONDS_ + 120)) "$F" $opts -max_total_time="$SECONDS_" -print_final_stats=1 \
	"$T/corpus" > "$T/fuzz" 2>&1; st=$?
runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$T/fuzz")
is "$st" 0 "fuzzed ${SECONDS_} s (${runs:-?} inputs): no crash, leak, hang or undefined behaviour"
if [ "$st" != 0 ]; then
	grep -E 'ERROR|runtime error|SUMMARY|artifact' "$T/fuzz" | head -10 | while read -r l; do diag "$l"; done
fi
ok $([ "${runs:-0}" -gt 100 ]; echo $?) "and it ran (more than 100 inputs)"
done_testing
