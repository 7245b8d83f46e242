# export --format folded (issue 14, the first format): every kind of
# profile as FlameGraph's folded stacks, "a;b;c N", one line per distinct
# stack of names.  Each counter's lines must add up to the profile's own
# totals: mprof's allocations, bytes, bytes kept and peak; cpprof's samples times
# the interval (nanoseconds); cfprof's exact calls, the program's own count.
. "$(dirname "$0")/../lib.sh"
plan 24
CPPROF=$B/bin/cpprof
CFPROF=$B/bin/cfprof
cd "$T" || exit 1
# total: the sum of the counts of folded lines on stdin.
total() { awk '{ s += $NF } END { printf "%d\n", s }'; }

# --- mprof: the paper's widgets (10000 allocations, 5093 frees)
cc -g -O0 -o widgets "$TOP/examples/widgets.c" || exit 1
"$MPROF" run -o m.data ./widgets > /dev/null 2>&1
head=$("$MPROF" ./widgets m.data | head -1)
hd='s/.*: \([0-9]*\) allocations of \([0-9]*\) bytes, .*, \([0-9]*\) bytes kept, peak \([0-9]*\) bytes live$'
allocs=$(printf '%s\n' "$head" | sed -n "$hd/\\1/p")
bytes=$(printf '%s\n' "$head" | sed -n "$hd/\\2/p")
kept=$(printf '%s\n' "$head" | sed -n "$hd/\\3/p")
peak=$(printf '%s\n' "$head" | sed -n "$hd/\\4/p")
is "$("$MPROF" export --format folded ./widgets m.data | total)" "$kept" "mprof: inuse_space (the default) adds up to the bytes kept ($kept)"
is "$("$MPROF" export --format folded --counter alloc_space ./widgets m.data | total)" "$bytes" "mprof: alloc_space adds up to the bytes allocated"
# -o - is standard output, as without -o (it wrote a file named '-').
is "$("$MPROF" export --format folded -o - ./widgets m.data | total)/$(ls -- - 2>/dev/null)" "$kept/" \
	"-o -: standard output, no file named -"
is "$("$MPROF" export --format folded --counter alloc_objects ./widgets m.data | total)" "$allocs" "mprof: alloc_objects adds up to the allocations"
is "$("$MPROF" export --format folded --counter peak_space ./widgets m.data | total)" "$peak" "mprof: peak_space adds up to the peak ($peak)"
ok $([ "$peak" -ge "$kept" ]; echo $?) "mprof: the peak ($peak) is no less than what is kept at the end"
# A program that frees all it allocates: the default (inuse_space) was
# empty, its flame graph and pprof's top too, and nothing said so.  Then
# alloc_space, and a line that says so; asked for, inuse_space as it is.
printf '#include <stdlib.h>\nint main(void) { for (int i = 0; i < 100; i++) free(malloc(40)); return 0; }\n' > frees.c
cc -g -O0 -o frees frees.c || exit 1
"$MPROF" run -o f.data ./frees
is "$("$MPROF" export --format folded ./frees f.data 2> f.err | total)/$(cat f.err)" \
	"4000/mprof: export: nothing is kept in f.data (inuse_space is 0): this is alloc_space (--counter NAME for another)" \
	"mprof: nothing kept: alloc_space by default, and said"
is "$("$MPROF" export --format folded --counter inuse_space ./frees f.data 2> f.err | total)/$(cat f.err)" "0/" \
	"... --counter inuse_space: that, empty, nothing said"
is "$("$MPROF" diff --paths ./frees f.data f.data 2>&1 | grep -c 'alloc_space')" 2 \
	"... diff: alloc_space of both, said (the message and the title)"
f=$("$MPROF" export --format folded --counter alloc_objects ./widgets m.data)
like "$f" '^main;simulate;make_red_widget;make_widget [0-9]+$' "mprof: stacks spelled outermost first, ';' between names"
is "$(printf '%s\n' "$f" | awk '{ print $1 }' | sort | uniq -d)" "" "mprof: one line per distinct stack"
"$MPROF" export --format folded -o out.folded ./widgets m.data
is "$?/$(total < out.folded)" "0/$kept" "mprof: -o writes the file"

# --- cpprof: the phases example, every sample worth its interval
cc -O2 -g -o phases "$TOP/examples/phases.c" || exit 1
"$CPPROF" record -o c.data ./phases 300 > /dev/null
n=$("$CPPROF" -c resources ./phases c.data | sed -n 's/.* cpu .* \([0-9]*\) samples, .*/\1/p')
is "$("$CPPROF" export --format folded ./phases c.data | total)" "$((n * 1000000))" \
	"cpprof: cpu adds up to its $n samples x 1 ms, in nanoseconds"
like "$("$CPPROF" export --format folded ./phases c.data)" '^main;parse_input [0-9]+$' "cpprof: main;parse_input"

# --- cfprof: the paper's primes, exact calls
cc -O2 -g -finstrument-functions -o primes "$TOP/examples/primes.c" || exit 1
"$CFPROF" record -o f.data ./primes 3000 > primes.out
calls=$(awk '$1 == "calls" { print $2 }' primes.out)
is "$("$CFPROF" export --format folded --counter calls ./primes f.data | total)" "$calls" \
	"cfprof: calls adds up to the program's own count ($calls)"
like "$("$CFPROF" export --format folded --counter calls ./primes f.data)" \
	"^main;subset;f;isPrime;test;test $(awk '$1 == "test" { print $2 }' primes.out | awk -v n=3000 '{ print $1 - n }')\$" \
	"cfprof: test's recursive calls on their own edge (test;test)"

# --- refusals: one line, exit 2
"$MPROF" export --format nosuch m.data > o 2> e
is "$?/$(wc -l < e)/$(wc -c < o)" "2/1/0" "unknown format: exit 2, one line, nothing written"
"$MPROF" export --format folded --counter nosuch m.data > o 2> e
like "$?/$(cat e)" '^2/mprof: m.data: no counter .nosuch. \(it has alloc_objects, alloc_space, inuse_objects, inuse_space, peak_objects, peak_space, temp_objects, temp_space\)$' \
	"unknown counter: exit 2, the counters named"
head -c 100 m.data > cut.data
"$MPROF" export --format folded cut.data > o 2> e
is "$?/$(wc -l < e)/$(wc -c < o)" "2/1/0" "a truncated file: exit 2, one line, nothing written"
"$CFPROF" export m.data > o 2> e
is "$?/$(wc -l < e)" "2/1" "no --format: exit 2, one line"

# --help: the usage on standard output, exit 0, for each tool (issue 22).
for t in "$MPROF" "$CPPROF" "$CFPROF"; do
	"$t" export --help > o 2> e
	is "$?/$(head -1 o | awk '{ print $1, $2, $3 }')/$(wc -c < e)" "0/usage: ${t##*/} export/0" \
		"${t##*/} export --help: the usage on standard output, exit 0"
done
# pprof's gzip on a terminal: refused, nothing written to it.
script -qec "\"$MPROF\" export --format pprof m.data" /dev/null < /dev/null > tty.out 2>&1
is "$?/$(tr -d '\r' < tty.out)" "2/mprof: export: pprof's format is binary: give -o FILE, or redirect" \
	"export --format pprof to a terminal: refused in one line, exit 2"
done_testing
