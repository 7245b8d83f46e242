# cpprof on mprof data: the same weighted stacks, viewed as call path
# profiles of alloc-bytes, alloc-count and kept-bytes, in batch mode.
. "$(dirname "$0")/../lib.sh"
plan 18
CPPROF=$B/bin/cpprof
cc -g -O0 -o "$T/widgets" "$TOP/examples/widgets.c"
"$MPROF" run -o "$T/w.data" "$T/widgets" > /dev/null; ok $? "profiled the widgets"

out=$("$CPPROF" -c 'down main' "$T/w.data")
like "$out" '^Downward Call Path Profile for resource: Allocated Bytes$' "header names the profile and resource"
like "$out" '^2040000 samples, sampled every 1 gticks$' "samples line"
like "$out" '^0\.49070 \(main simulate make_red_widget make_widget\) \[1001028\]$' "red path: 1001028 of 2040000 bytes"
out=$("$CPPROF" -c 'resource kept-bytes; up make_widget' "$T/w.data")
like "$out" '^1\.00000 \(main simulate make_red_widget make_widget\) \[1001028\]$' "kept bytes: all from the red path"
unlike "$out" 'blue' "kept bytes: nothing from blue widgets"
out=$("$CPPROF" -c 'resource alloc-count; function' "$T/w.data")
like "$out" '^0\.49070 make_red_widget \[4907\]$' "alloc-count: 4907 red widgets"
out=$(printf 'resource alloc-count\nbody\nquit\n' | "$CPPROF" "$T/w.data")
like "$out" '^1\.00000 make_widget \[10000\]$' "commands from standard input"
out=$("$CPPROF" -c 'threshold 0.5; function' "$T/w.data")
like "$out" '^\(1 entry below the threshold 0\.5 not shown\)$' "one entry hidden: 'entry'"
out=$("$CPPROF" -c 'threshold 0.5; down main' "$T/w.data")
like "$out" '^\(2 entries below the threshold 0\.5 not shown\)$' "two hidden: 'entries'"

# The paper's F/G recursion: each path credited once.
cc_prog "$T/fg" fg.c
"$MPROF" run -o "$T/fg.data" "$T/fg"
out=$("$CPPROF" -c 'threshold 0; down F' "$T/fg.data")
like "$out" '^0\.50000 \(F G F\) \[10\]$' "recursive path (F G F) credited once: 10 of 20 bytes"
unlike "$out" '\(F G F G' "recursion collapses: no (F G F G ...) path"
out=$("$CPPROF" -c 'sites on; down main' "$T/fg.data")
like "$out" '\(main@fg\.c:[0-9]+ F@fg\.c:[0-9]+' "sites on: call sites as file:line"
# Two calls on one line are one site: the line's 300 bytes on one row.
cc_prog "$T/two" two_sites.c
"$MPROF" run -o "$T/two.data" "$T/two"
out=$("$CPPROF" -c 'sites on; threshold 0; down main' "$T/two.data")
is "$(printf '%s\n' "$out" | grep -c '^[0-9.]* (main@two_sites\.c:[0-9]* F@')" 2 "sites on: two rows under main, one a line"
like "$out" '^0\.42857 \(main@two_sites\.c:29 F@two_sites\.c:[0-9]+\) \[300\]$' "sites on: line 29's two calls as one site, 300 of 700 bytes"

"$CPPROF" -c 'root nosuch' "$T/fg.data" > /dev/null 2> "$T/err"; is $? 2 "unknown root: exit 2 in batch mode"
like "$(cat "$T/err")" "no function named 'nosuch'" "unknown root: says so"
head -c 100 "$T/fg.data" > "$T/trunc.data"
"$CPPROF" -c 'down' "$T/trunc.data" > /dev/null 2> "$T/err"; is "$?/$(cat "$T/err")" "2/cpprof: $T/trunc.data: truncated: header says $(wc -c < "$T/fg.data") bytes, file has 100" "truncated file: one line, exit 2"
done_testing
