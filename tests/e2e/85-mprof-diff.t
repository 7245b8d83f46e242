# mprof diff [a.out] BASE NEW (issue 14, item 4): mprof's four tables of
# NEW minus BASE, each figure signed, each (%) the change as a percent of
# BASE's total, rows by the size of their change.  tests/progs/md_grow.c
# makes a known number of allocations from each function: with N = 100
# (BASE) and 300 (NEW), leaf_keep keeps 200 more of 48 bytes, churn frees
# 200 more of 16 bytes, shrink keeps 200 fewer of 100 bytes, fixed does
# the same 10 of 512 bytes.  BASE: 610 allocations, 51520 bytes, 44800
# kept; NEW: 810, 44320, 34400.  And a run against itself, --paths, and
# the refusals.
. "$(dirname "$0")/../lib.sh"
plan 27
cd "$T" || exit 1

cc_prog md_grow md_grow.c || exit 1
"$MPROF" run -o base.data ./md_grow 100 > /dev/null 2>&1
"$MPROF" run -o new.data ./md_grow 300 > /dev/null 2>&1
out=$("$MPROF" diff ./md_grow base.data new.data)
ok $? "diff: exit 0"
# From another directory, the a.out by its name alone, as `mprof md_grow
# FILE` finds it: the executable the files recorded (it said "md_grow: No
# such file or directory"); the same tables, the files named as given.
mkdir -p elsewhere &&
	is "$(cd elsewhere && "$MPROF" diff md_grow ../base.data ../new.data 2>&1 | sed 's#\.\./##g')" "$out" \
		"diff md_grow BASE NEW from another directory: the recorded executable, the same tables"
# -depth=N as the tables take it (it was an unknown option here).
like "$("$MPROF" diff --depth=1 ./md_grow base.data new.data)" '^ +\+9600 .* \.\.\. > leaf_keep$' \
	"diff --depth=1: the leak table's chains one frame deep"
# A change of 10000% or more, in the header, in full (the tables' columns
# print "+**", which the header printed too).
"$MPROF" run -o one.data ./md_grow 1 > /dev/null 2>&1
"$MPROF" run -o many.data ./md_grow 3000 > /dev/null 2>&1
like "$("$MPROF" diff ./md_grow one.data many.data | grep '^change: ')" \
	'^change: .*, \+2999 frees \(\+27264%\), ' \
	"header: 11 frees to 3010, +27264% in full"

# section TITLE: the non-blank lines of one table, spaces squeezed.
section() {
	printf '%s\n' "$out" | awk -v t="$1 (NEW minus BASE)" '/^--------- / { on = index($0, t) > 0; next } on && NF' |
		tr -s ' ' | sed 's/^ //'
}

# --- the header: both runs' totals and the change
like "$out" '^BASE base\.data: \./md_grow 100 \(pid [0-9]+\): 610 allocations of 51520 bytes, 110 frees of 6720 bytes, 44800 bytes kept$' \
	"header: BASE's totals"
like "$out" '^NEW  new\.data: \./md_grow 300 \(pid [0-9]+\): 810 allocations of 44320 bytes, 310 frees of 9920 bytes, 34400 bytes kept$' \
	"header: NEW's totals"
is "$(printf '%s\n' "$out" | grep '^change: ')" \
	"change: +200 allocations (+32%), -7200 bytes (-13%), +200 frees (+181%), +3200 bytes freed (+47%), -10400 bytes kept (-23%)" \
	"header: the change, each as a percent of BASE's figure"

# --- table 1: bins, NEW's minus BASE's, in size order; 512 unchanged
is "$(section "ALLOCATION BINS" | sed 1d | sed 's/ $//')" \
"16 +200 +3200 (+6) +200 0
48 +200 +9600 (+18) 0 +9600 (+21)
100 -200 -20000 (-38) 0 -20000 (-44)" \
	"bins: 16 (all freed), 48 (kept, grew), 100 (kept, shrank); 512 unchanged, not shown"

# --- table 2: kept by partial chain, largest change first
is "$(section "MEMORY LEAKS" | sed 1d)" \
"-20000 (-44) -200 -20000 (-38) main > shrink
+9600 (+21) +200 +9600 (+18) main > build > leaf_keep" \
	"leaks: shrink keeps 20000 bytes less, leaf_keep 9600 more (of BASE's 44800 kept)"

# --- table 3: direct allocation
direct=$(section "DIRECT ALLOCATION")
is "$(printf '%s\n' "$direct" | grep ' leaf_keep$')" "+9600 (+18) +9600 (+21) +200 leaf_keep" \
	"direct: leaf_keep +200 allocations, +9600 bytes, all kept"
is "$(printf '%s\n' "$direct" | grep ' shrink$')" "-20000 (-38) -20000 (-44) -200 shrink" \
	"direct: shrink, a negative change: -200 allocations, -20000 bytes"
is "$(printf '%s\n' "$direct" | grep ' churn$')" "+3200 (+6) 0 +200 churn" \
	"direct: churn +3200 bytes, none of them kept"
is "$(printf '%s\n' "$direct" | grep ' <TOTAL>$')" "-7200 (-13) -10400 (-23) +200 <TOTAL>" \
	"direct: the total is the header's change"
is "$(printf '%s\n' "$direct" | awk 'NR > 2 { printf "%s ", $NF }')" "shrink leaf_keep churn " \
	"direct: by the size of the change, a shrink of 20000 before growths of 9600 and 3200"
unlike "$out" 'fixed' "fixed, whose allocations did not change, is in no table"

# --- table 4: the call graph
cg=$(section "ALLOCATION CALL GRAPH")
is "$(printf '%s\n' "$cg" | grep '^\[[0-9]*\]' | awk '{ printf "%s ", $NF == "[" substr($1, 2, length($1) - 2) "]" ? $(NF - 1) : "?" }')" \
	"shrink build leaf_keep main churn " \
	"call graph: entries by the size of their self+desc change, callers first on a tie"
is "$(printf '%s\n' "$cg" | grep '^\[1\] ')" "[1] +9600 (+18) 0 +200 0 build [1]" \
	"call graph: build, +9600 bytes below it, on 200 more allocation stacks"
is "$(printf '%s\n' "$cg" | grep '^\[3\] ')" "[3] -7200 (-13) 0 +200 0 main [3]" \
	"call graph: main, everything: -7200 bytes"
like "$cg" '^-20000 \(-38\) -200/-200 shrink \[0\]$' "call graph: main's descendent shrink, -20000 bytes in 200 fewer calls"

# --- a run against itself: every change 0, every table "(no change)"
same=$("$MPROF" diff base.data base.data)
is "$(printf '%s\n' "$same" | grep '^change: ')/$(printf '%s\n' "$same" | grep -c '^  (no change)$')" \
	"change: 0 allocations, 0 bytes, 0 frees, 0 bytes freed, 0 bytes kept/4" \
	"a run against itself: no change, no rows in the four tables"

# --- --paths: the call path fractions, as for cpprof and cfprof data
like "$("$MPROF" diff --paths base.data new.data)" '^0\.89286 0\.58140 -0\.31146 \(main shrink\)$' \
	"--paths: shrink's share of the bytes kept, 40000/44800 then 20000/34400"

# --- refusals: one line naming the file, exit 2, nothing printed
head -c 100 new.data > cut.data
"$MPROF" diff base.data cut.data > o 2> e
like "$?/$(wc -l < e)/$(wc -c < o)/$(cat e)" '^2/1/0/mprof: cut\.data: truncated' "a truncated file: exit 2, one line"
"$B/bin/cpprof" record -o cp.data ./md_grow 10 > /dev/null 2>&1
"$MPROF" diff base.data cp.data > o 2> e
like "$?/$(wc -l < e)/$(wc -c < o)/$(cat e)" '^2/1/0/mprof: cp\.data: not the same kind' "a cpprof profile: exit 2, one line"
# Options (issue 22): usage errors are one line; a threshold is a
# fraction; --help is the usage, on standard output.
"$MPROF" diff --threshold abc base.data new.data > o 2> e
is "$?/$(cat e)/$(wc -c < o)" "2/mprof: diff: --threshold: 'abc' is not a fraction from 0 to 1/0" \
	"--threshold abc: refused in one line, exit 2"
"$MPROF" diff -bogus base.data new.data > o 2> e
is "$?/$(cat e)" "2/mprof: diff: unknown option '-bogus' (mprof diff --help shows the usage)" \
	"an unknown option: one line"
"$MPROF" diff base.data > o 2> e
is "$?/$(cat e)" "2/mprof: diff: BASE and NEW are needed (mprof diff --help shows the usage)" \
	"one file: one line"
"$MPROF" diff --help > o 2> e
is "$?/$(head -1 o | awk '{ print $1, $2, $3 }')/$(grep -c '^       mprof diff --paths ' o)/$(wc -c < e)" \
	"0/usage: mprof diff/1/0" \
	"--help: both forms of the usage on standard output, exit 0"
done_testing
