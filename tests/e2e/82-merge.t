# merge FILES... -o OUT (issue 14): runs of one program, each loaded at its
# own addresses (ASLR), become one profile whose figures are the sums; a
# program's forked children (FILE.PID) join their parent's file; files of
# different kinds or programs are refused in one line, exit 2, and OUT is
# not written.  Peaks add up too: the merged "peak" is the runs' peaks'
# sum (each run's is exact: widgets has one thread).
. "$(dirname "$0")/../lib.sh"
plan 15
CPPROF=$B/bin/cpprof
CFPROF=$B/bin/cfprof
cd "$T" || exit 1

cc -g -O0 -o widgets "$TOP/examples/widgets.c" || exit 1
for i in 1 2 3; do "$MPROF" run -o w$i.data ./widgets > /dev/null 2>&1; done
a1=$("$MPROF" dump w1.data | awk '$1 == "module" { print $2; exit }')
a2=$("$MPROF" dump w2.data | awk '$1 == "module" { print $2; exit }')
ok $([ "$a1" != "$a2" ]; echo $?) "the runs loaded the program at different addresses ($a1, $a2)"
"$MPROF" merge w1.data w2.data w3.data -o w.data
ok $? "mprof merge of three runs"
peak1=$("$MPROF" ./widgets w1.data | sed -n '1s/.*, peak \([0-9]*\) bytes live$/\1/p')
is "$("$MPROF" ./widgets w.data | head -1 | sed 's/.*): //')" \
	"30000 allocations of 6120000 bytes, 15279 frees of 3116916 bytes, 3003084 bytes kept, peak $((3 * peak1)) bytes live (the runs' peaks summed)" \
	"the merged profile's totals are three runs' (mprof's header), its peak said to be their sum"
like "$("$MPROF" ./widgets w.data | head -1)" '^mprof: \./widgets \(pid [0-9]+; 3 runs merged: the first.s command line and pid\): ' \
	"and it says it is three runs merged (it gave the first's command line alone)"
like "$("$MPROF" ./widgets w.data)" ' 30000 +make_widget$' "its stacks still name the functions (30000 calls of make_widget)"
# A merged file merged again counts its runs (it said 2 runs of 3, with
# INFO merged_files twice).
"$MPROF" merge w1.data w2.data -o w12.data && "$MPROF" merge w12.data w3.data -o w123.data
is "$("$MPROF" ./widgets w123.data | head -1 | sed -n 's/.*; \([0-9]*\) runs merged.*/\1/p')/$("$MPROF" dump w123.data | grep -c '^info merged_files ')" "3/1" \
	"a merge of a merge: 3 runs, said once"
is "$("$MPROF" export --format folded --counter alloc_objects ./widgets w.data)" \
	"$("$MPROF" export --format folded --counter alloc_objects ./widgets w1.data | awk '{ $NF = 3 * $NF; print }')" \
	"one stack of names per path, three runs' counts summed"

# The runs' time: each one's, summed (INFO duration_ns), pprof's Duration
# (it was the first run's: 21 compilers of a make, their samples 1,630%
# of it).  A merge of a merge counts each run once.
ival() { "$MPROF" dump "$1" | sed -n "s/^info $2 //p"; }
dur() { d=$(ival "$1" duration_ns); echo "${d:-$(($(ival "$1" end_ns) - $(ival "$1" start_ns)))}"; }
is "$(dur w123.data)" "$(($(dur w1.data) + $(dur w2.data) + $(dur w3.data)))" \
	"a merge of a merge: its duration the three runs' summed"
PPROF=$B/tools/pprof
if [ -x "$PPROF" ]; then
	"$MPROF" export --format pprof -o w123.pb.gz ./widgets w123.data
	d=$("$PPROF" -top w123.pb.gz 2>/dev/null | sed -n 's/^Duration: \([0-9.]*[a-zµ]*\),.*/\1/p')
	ok "$(awk -v d="$d" -v want="$(dur w123.data)" 'BEGIN {
		n = d + 0; u = d; sub(/^[0-9.]+/, "", u)
		f = u == "s" ? 1e9 : u == "ms" ? 1e6 : (u == "us" || u == "µs") ? 1e3 : u == "ns" ? 1 : 0
		exit !(f && n * f > 0.98 * want && n * f < 1.02 * want) }'; echo $?)" \
		"pprof's Duration of the merge: $d, the runs' summed ($(dur w123.data) ns)"
else
	fail "pprof not built at $PPROF"
fi

# cfprof: a forked child's FILE.PID joins its parent's file
cc -O2 -g -finstrument-functions -o cf_fork "$TOP/tests/progs/cf_fork.c" || exit 1
"$CFPROF" record -o fk.data ./cf_fork > fk.out
"$CFPROF" merge fk.data fk.data.* -o all.data
flat=$("$CFPROF" -p ./cf_fork all.data)
is "$(printf '%s\n' "$flat" | awk '$NF == "child_work" || $NF == "parent_work" { print $NF, $3 }' | sort | tr '\n' ,)" \
	"child_work 2000,parent_work 1500," "cfprof: parent and child merged: each one's calls"

# refusals
"$MPROF" merge w1.data fk.data -o bad.data 2> e
is "$?/$(wc -l < e)/$(ls bad.data 2> /dev/null)" "2/1/" "different kinds: exit 2, one line, nothing written"
cc -O2 -g -o phases "$TOP/examples/phases.c" && "$MPROF" run -o p.data ./phases 10 > /dev/null 2>&1
"$MPROF" merge w1.data p.data -o bad.data 2> e
like "$?/$(cat e)" '^2/mprof: merge: p.data: another program .*: cannot be merged$' "different programs: exit 2, the file named"
"$MPROF" run --leaks -o lk.data ./widgets > /dev/null 2>&1
"$MPROF" merge w1.data lk.data -o bad.data 2> e
is "$?/$(cat e)" "2/mprof: merge: lk.data: other counters than w1.data (lk.data has lost_bytes, w1.data not; one was recorded with --leaks): cannot be merged" \
	"a run with --leaks and one without: which counter, and why"
head -c 100 w2.data > cut.data
"$MPROF" merge w1.data cut.data -o bad.data 2> e
is "$?/$(wc -l < e)/$(ls bad.data 2> /dev/null)" "2/1/" "a truncated file: exit 2, one line, nothing written"
"$CFPROF" merge --help > o 2> e
is "$?/$(head -1 o)/$(wc -c < e)" "0/usage: cfprof merge FILES... -o OUT/0" \
	"merge --help: the usage on standard output, exit 0 (issue 22)"
done_testing
