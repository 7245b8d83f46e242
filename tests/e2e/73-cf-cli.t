# cfprof's command line: record refuses a program without
# -finstrument-functions (one line suggesting cpprof record, exit 2, the
# program not run) and bad arguments; the display's -p, -q and -e; the
# (unprofiled) line; `cfprof` alone reads ./cfprof.data and the program
# it names; cpprof and mprof dump read cfprof.data; every bad input file
# (missing, empty, truncated, garbage, mprof's or cpprof's data) is one
# line on stderr naming the file, exit status 2, nothing on stdout.
. "$(dirname "$0")/../lib.sh"
plan 65
CFPROF=$B/bin/cfprof
CPPROF=$B/bin/cpprof
cd "$T" || exit 1

. "$TOP/tests/cf.sh"

# --- refusals of record: exit 2, exactly one line on stderr, nothing run
cc -O2 -g -o cf_noinst "$TOP/tests/progs/cf_noinst.c" || exit 1
"$CFPROF" record -o ni.data ./cf_noinst > ni.out 2> ni.err
is "$?/$(wc -l < ni.err)/$(cat ni.out)/$([ -e ni.data ] && echo data)" "2/1//" \
	"no instrumentation: exit 2, one line, the program not run, no data file"
like "$(cat ni.err)" '^cfprof: record: .*cf_noinst.*-finstrument-functions.*cpprof record' \
	"no instrumentation: the line names the program, -finstrument-functions and cpprof record"
cf_build cf_fg cf_fg.c || exit 1
bad() { # NAME ARGS...: cfprof record ARGS... ./cf_fg is refused
	c_n=$1; shift
	"$CFPROF" record "$@" ./cf_fg > bad.out 2> bad.err
	is "$?/$(wc -l < bad.err)/$(wc -c < bad.out)" "2/1/0" "record $c_n: exit 2, one line, nothing run"
}
bad "-e nosuch" -e nosuch -o bad.data
like "$(cat bad.err)" "nosuch" "record -e nosuch: names the resource"
bad "--frobnicate" --frobnicate -o bad.data
"$CFPROF" record > bad.out 2> bad.err
is "$?/$(wc -l < bad.err)" "2/1" "record with no program: exit 2, one line"
like "$(cat bad.err)" 'usage: cfprof record' "record with no program: the usage"

# --- CFPROF_NO_PERF (cfprof.1): record reads the variable the runtime
# reads.  It read CPPROF_NO_PERF, ran the program, and the runtime, which
# sampled nothing, left a file of calls without counters no tool read.
CFPROF_NO_PERF=1 "$CFPROF" record -e page-faults -o np.data ./cf_fg 50 > np.out 2> np.err
is "$?/$(wc -c < np.out)/$([ -e np.data ] && echo data)" "2/0/" \
	"CFPROF_NO_PERF=1 record -e page-faults: nothing can be sampled, exit 2, the program not run"
like "$(cat np.err)" '^cfprof: record: page-faults not sampled: perf_event_open disabled by CFPROF_NO_PERF$' \
	"and the line names CFPROF_NO_PERF"
CFPROF_NO_PERF=1 "$CFPROF" record -o np.data ./cf_fg 50 > np.out 2> np.err
is "$?/$("$MPROF" dump np.data | sed -n "s/^info cpu_clock //p")" \
	"0/POSIX CPU-time timer" "CFPROF_NO_PERF=1 record: the CPU clock is a timer"
# A program that turns it on for the image it execs: that image's
# collector does not start, and no file is left that no tool reads.
cat > npx.c <<'CEOF'
#include <stdlib.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	(void)argc;
	setenv("CFPROF_NO_PERF", "1", 1);
	execv(argv[1], argv + 1);
	return 127;
}
CEOF
cc -O2 -finstrument-functions -o npx npx.c || exit 1
rm -f np.data
"$CFPROF" record -e page-faults -o np.data ./npx ./cf_fg 50 > np.out 2> np.err
is "$?/$(truth np.out f)/$([ -e np.data ] && echo data)" "0/50/" \
	"an exec'd image whose collector did not start: the program's status and output, no file"
like "$(cat np.err)" 'wrote no profile to .*np\.data \(its collector did not start' \
	"and record says why"

# --- ms/call under 0.001 ms in decimals, to its third digit: primes'
# test (64 million calls of a few instructions) printed 4.99e-06 in a
# column of 0.000 and 8.476.
cc -O2 -g -finstrument-functions -o primes "$TOP/examples/primes.c" || exit 1
"$CFPROF" record -o primes.data ./primes > /dev/null || exit 1
like "$("$CFPROF" -p ./primes primes.data | awk '$NF == "test" { print $4 }')" '^0\.0000*[1-9][0-9][0-9]$' \
	"-p: test's ms/call in decimals, three significant digits"

# --- the display's options, on the paper's f/g program
"$CFPROF" record --no-random -e cpu -e real -o fg.data ./cf_fg 500 > fg.out 2> fg.err
is "$?/$(cat fg.err)/$(truth fg.out f)" "0//500" "record --no-random -e cpu -e real: exit 0, the program's output"
all=$("$CFPROF" ./cf_fg fg.data)
ok $? "cfprof a.out FILE: exit 0"
p=$("$CFPROF" -p ./cf_fg fg.data)
q=$("$CFPROF" --graph ./cf_fg fg.data)
like "$p" '^ *%time +cumsecs +#call +ms/call +name$' "-p: the flat profile's header (prof's)"
unlike "$p" '\[[0-9]+\]$' "-p: no call graph"
like "$q" '^\[[0-9]+\] .* isPrime \[[0-9]+\]$' "--graph: the call graph"
unlike "$q" 'cumsecs' "--graph: no flat profile"
is "$("$CFPROF" --flat ./cf_fg fg.data)" "$p" "--flat is -p"
is "$("$CFPROF" -q ./cf_fg fg.data)" "$q" "-q is --graph"
"$CFPROF" -p -q ./cf_fg fg.data > bad.out 2> bad.err
is "$?/$(cat bad.err)/$(wc -c < bad.out)" \
	"2/cfprof: -p (the flat profile only) and -q (the call graph only) exclude each other: give neither for both/0" \
	"-p -q: refused in one line, exit 2 (issue 22)"
"$CFPROF" record --help > bad.out 2> bad.err
is "$?/$(head -1 bad.out | awk '{ print $1, $2, $3 }')/$(wc -c < bad.err)" "0/usage: cfprof record/0" \
	"record --help: the usage on standard output, exit 0"
like "$(cat bad.out)" '^  --unprofiled FUNC' "and its own option"
fl=$(printf '%s\n' "$all" | grep -nE '^ *%time +cumsecs' | head -1 | cut -d: -f1)
gl=$(printf '%s\n' "$all" | grep -nE '^\[[0-9]+\] ' | head -1 | cut -d: -f1)
ok $([ "${fl:-0}" -gt 0 ] && [ "${gl:-0}" -gt "${fl:-0}" ]; echo $?) "no option: the flat profile, then the call graph"
ok $(printf '%s\n' "$p" | awk '$1 ~ /^[0-9]+\.[0-9]$/ { if (n++ && $1 > last) bad = 1; last = $1 } END { exit bad || !n }'; echo $?) \
	"-p: lines by decreasing %time, one decimal"
ok $(printf '%s\n' "$p" | awk '$1 ~ /^[0-9.]+$/ { if ($2 + 0 < c - 0.0001) bad = 1; c = $2 } END { exit bad }'; echo $?) \
	"-p: cumsecs accumulates"
ms=$(flat "$p" isPrime 4) s=$(printf '%s\n' "$p" | awk '$NF == "isPrime" { print $2 - prev } { if ($2 ~ /^[0-9.]+$/) prev = $2 }')
ok $(awk -v m="${ms:-x}" -v s="${s:-0}" 'BEGIN { if (m !~ /^[0-9.]+$/) exit 1; w = s * 1000 / 8000; d = m - w; t = 0.002 + w / 20; exit !(d < t && d > -t) }'; echo $?) \
	"-p: isPrime's ms/call is its seconds over its 8000 calls (${ms:-?} ms, ${s:-?} s)"
pr=$("$CFPROF" -e real -p ./cf_fg fg.data)
ok $? "-e real: exit 0"
want=$(truth fg.out isPrime_share) got=$(flat "$pr" isPrime 1)
ok $(awk -v a="${got:-x}" -v b="$want" 'BEGIN { if (a !~ /^[0-9.]+$/) exit 1; d = a / 100 - b; exit !(d < 0.05 && d > -0.05) }'; echo $?) \
	"-e real: isPrime's %time of real time ${got:-nothing}%, its CPU share $want (within 0.05)"
is "$(flat "$pr" isPrime 3)" 8000 "-e real: the same exact call counts"
"$CFPROF" -e page-faults -p ./cf_fg fg.data > /dev/null 2> bad.err
is "$?/$(cat bad.err)" "2/cfprof: fg.data: no resource 'page-faults' in this profile (it has cpu, real)" \
	"-e of a resource not recorded: exit 2, one line naming those it has"

# --- (unprofiled): with every function of the program unprofiled
"$CFPROF" record --unprofiled main,f --unprofiled g,isPrime -o un.data ./cf_fg 500 > un.out
ok $? "record --unprofiled F,F --unprofiled F,F: exit 0"
p=$("$CFPROF" -p ./cf_fg un.data)
u=$(flat "$p" "(unprofiled)" 1)
ok $(awk -v u="${u:-0}" 'BEGIN { exit !(u >= 95) }'; echo $?) "all unprofiled: the time is on the (unprofiled) line (${u:-nothing}%)"
is "$(flat "$p" "(unprofiled)" 3)" 0 "the (unprofiled) line: #call 0"
like "$p" '^ *[0-9]+\.[0-9] +[0-9.]+ +0 +\(unprofiled\)$' "the (unprofiled) line: no ms/call"
is "$(printf '%s\n' "$p" | awk '$NF ~ /^(main|f|g|isPrime)$/')" "" "all unprofiled: none of main, f, g, isPrime"

# --- defaults: ./cfprof.data, and cfprof with no argument
"$CFPROF" record ./cf_fg 200 > /dev/null
is "$?/$(ls cfprof.data* 2>/dev/null)" "0/cfprof.data" "record with no -o: writes ./cfprof.data"
p=$("$CFPROF" -p)
is "$?/$(flat "$p" isPrime 3)" "0/3200" "cfprof with no argument: ./cfprof.data and the program it names"

# --- cpprof and mprof dump read cfprof.data
cp=$("$CPPROF" -c 'threshold 0; body' ./cf_fg fg.data)
like "$cp" '^[0-9]\.[0-9]+ isPrime \[[0-9]+\] \{8000 calls\}$' "cpprof body: isPrime with its exact call count"
like "$cp" '^[0-9]\.[0-9]+ f \[[0-9]+\] \{500 calls\}$' "cpprof body: f with its"
cp=$("$CPPROF" -c 'threshold 0; up isPrime' ./cf_fg fg.data)
like "$cp" '\(f isPrime\)' "cpprof up isPrime: through f"
like "$cp" '\(g isPrime\)' "cpprof up isPrime: through g"
cp=$("$CPPROF" -c 'threshold 0; function; down main; tree; threads' ./cf_fg fg.data 2>&1)
ok $? "cpprof function, down, tree, threads: exit 0"
like "$cp" '^[01]\.[0-9]+ main \[[0-9]+\] \{1 call\}$' "cpprof function: main's one call is '{1 call}'"
cp=$("$CPPROF" -c 'threshold 0.99; function' ./cf_fg fg.data 2>&1)
like "$cp" '^\([0-9]+ entries below the threshold 0\.99 not shown\)$' "cpprof: entries below the threshold, plural"
is "$(info fg.data exe)" "$T/cf_fg" "mprof dump: info exe is the program"
"$MPROF" dump fg.data > /dev/null
ok $? "mprof dump reads cfprof.data"

# --- bad input: one line naming the file, exit 2, nothing on stdout
expect_bad() { # NAME FILE ARGS...
	c_n=$1 c_f=$2; shift 2
	"$CFPROF" "$@" > bad.out 2> bad.err
	is "$?/$(wc -l < bad.err)/$(wc -c < bad.out)" "2/1/0" "$c_n: exit 2, one line, nothing on stdout"
	like "$(cat bad.err)" "^cfprof: .*$c_f" "$c_n: the line names $c_f"
}
expect_bad "a missing program" "$T/nonexistent" "$T/nonexistent"
expect_bad "a missing data file" "$T/nonexistent.data" ./cf_fg "$T/nonexistent.data"
: > empty.data
expect_bad "an empty file" empty.data ./cf_fg empty.data
size=$(wc -c < fg.data)
head -c $((size / 2)) fg.data > trunc.data
expect_bad "a truncated cfprof.data" trunc.data ./cf_fg trunc.data
head -c 5000 /dev/urandom > garbage.data
expect_bad "garbage" garbage.data ./cf_fg garbage.data
cc -O2 -g -o plain "$TOP/tests/progs/cf_noinst.c" &&
	"$MPROF" run -o m.data ./plain > /dev/null &&
	"$CPPROF" record -o c.data ./plain > /dev/null
expect_bad "mprof's data" m.data ./plain m.data
expect_bad "cpprof's data" c.data ./plain c.data

# --unprofiled names a C++ function as the views print it, short (every
# overload and instantiation) or demangled in full, commas and all; only
# the mangled symbol was accepted ("no function 'thrower'").
cf_build cf_names cf_names.cc || exit 1
names() { "$CFPROF" "$1" | awk '/^Call graph/ { exit } $NF ~ /^[A-Za-z]/ && $3 ~ /^[0-9]+$/ { print $NF, $3 }' | sort | tr '\n' ' '; }
"$CFPROF" record --unprofiled ns::pair_sum -o cn1.data ./cf_names > cn1.out 2> cn1.err
is "$?/$(cat cn1.out cn1.err)/$(names cn1.data)" "0/3595500/Counter::bump 1000 main 1 two 2000 " \
	"--unprofiled ns::pair_sum: the short name, both instantiations"
"$CFPROF" record --unprofiled 'long ns::pair_sum<int, long>(int, long),two(int, long)' -o cn2.data ./cf_names > cn2.out 2> cn2.err
is "$?/$(cat cn2.err)/$(names cn2.data)" "0//Counter::bump 1000 main 1 ns::pair_sum 1000 two 1000 " \
	"--unprofiled with full names, commas inside: one instantiation, one overload"
"$CFPROF" record --unprofiled 'two(char)' -o cn3.data ./cf_names > cn3.out 2> cn3.err
is "$?/$(cat cn3.err)" "2/cfprof: record: --unprofiled: no function 'two(char)' in ./cf_names" \
	"--unprofiled: a full name that matches no overload is refused"
done_testing
