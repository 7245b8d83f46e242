# cfprof: time charged to the logical current function is right, against
# CPU shares the test programs measure themselves
# (CLOCK_THREAD_CPUTIME_ID): three phases inlined into one caller at -O2
# (within 0.03; a program-counter profiler gives them all to the caller);
# the paper's f/g example (sec. 4), where `--unprofiled isPrime` charges f
# and g what they really caused (within 0.03) and the call graph's caller
# lines carry isPrime's time by real per-path samples, not apportioned by
# call counts as gprof does; four threads with known work (within 0.05).
. "$(dirname "$0")/../lib.sh"
plan 42
CFPROF=$B/bin/cfprof
CPPROF=$B/bin/cpprof
cd "$T" || exit 1

. "$TOP/tests/cf.sh"

# --- cf_hooks: the hooks' own time is their own (a function of its own,
# __cyg_profile_func_enter, no calls), not the current function's: charged
# so, a caller of a small function called 30 million times (bzip2's
# mainSimpleSort) had twice the share of its own code.
cf_build cf_hooks cf_hooks.c || exit 1
"$CFPROF" record -o hk.data ./cf_hooks > hk.out 2> hk.err || exit 1
flat=$("$CFPROF" -p ./cf_hooks hk.data)
h=$(share "$flat" __cyg_profile_func_enter)
ok $(awk -v h="${h:-0}" 'BEGIN { exit !(h >= 0.08) }'; echo $?) \
	"hooks: 20 million calls of an empty function: the hooks' time apart (${h:-none}, at least 0.08)"
is "$(flat "$flat" __cyg_profile_func_enter 3)" 0 "hooks: no calls of their own"
got=$(awk -v a="$h" -v b="$(share "$flat" loop)" -v c="$(share "$flat" tiny)" 'BEGIN { printf "%.4f", a + b + c }')
ok $(near "$got" "$(truth hk.out loop)" 0.03; echo $?) \
	"hooks: with loop and tiny, the calling phase's true share $(truth hk.out loop) ($got, within 0.03)"
ok $(near "$(share "$flat" spin)" "$(truth hk.out spin)" 0.03; echo $?) \
	"hooks: spin's share, which calls nothing: $(share "$flat" spin), true $(truth hk.out spin) (within 0.03)"

# --- cf_phases: three static inline phases, inlined into run_rounds
cf_build cf_phases cf_phases.c || exit 1
is "$(objdump -d cf_phases | grep -cE 'call.*<(parse_input|transform|write_output)>')" 0 \
	"phases: the three phases are inlined into run_rounds (no call instruction to them)"
"$CFPROF" record -o ph.data ./cf_phases 1200 > ph.out 2> ph.err
is "$?/$(cat ph.err)/$(awk '{ print $1 }' ph.out | tr '\n' ' ')" \
	"0//parse_input transform write_output calls_parse_input calls_transform calls_write_output " \
	"phases: record exits 0, nothing on stderr, the program's own output"
flat=$("$CFPROF" -p ./cf_phases ph.data)
secs=$(printf '%s\n' "$flat" | awk '$2 ~ /^[0-9.]+$/ && $2 > m { m = $2 } END { print m + 0 }')
ok $(awk -v s="$secs" 'BEGIN { exit !(s >= 1.0) }'; echo $?) "phases: at least 1000 samples of 1 ms (cumsecs $secs)"
for f in parse_input transform write_output; do
	want=$(truth ph.out $f) got=$(share "$flat" $f)
	ok $(near "$got" "$want" 0.03; echo $?) "phases: $f's %time ${got:-nothing}, true share $want (within 0.03)"
	want=$(truth ph.out calls_$f)
	is "$(flat "$flat" $f 3)" "${want:-missing}" "phases: $f, inlined, called $want times"
done
rr=$(share "$flat" run_rounds)
ok $(near "$rr" 0 0.03; echo $?) "phases: run_rounds, the phases' caller, has almost no time of its own (${rr:-nothing})"

# --- cf_fg: the paper's f and g (sec. 4)
cf_build cf_fg cf_fg.c || exit 1
"$CFPROF" record --unprofiled isPrime -o fgu.data ./cf_fg > fgu.out 2> fgu.err
is "$?/$(cat fgu.err)/$(truth fgu.out isPrime)" "0//32000" "fg --unprofiled isPrime: exit 0, nothing on stderr, the program's own output"
flat=$("$CFPROF" -p ./cf_fg fgu.data)
for f in f g; do
	want=$(truth fgu.out ${f}_share) got=$(share "$flat" $f)
	ok $(near "$got" "$want" 0.03; echo $?) "fg --unprofiled isPrime: $f is charged what it caused: ${got:-nothing}, true share $want (within 0.03)"
	is "$(flat "$flat" $f 3)" "$(truth fgu.out $f)" "fg --unprofiled isPrime: $f called $(truth fgu.out $f) times"
done
is "$(flat "$flat" isPrime 3)" "" "fg --unprofiled isPrime: isPrime is not in the flat profile"
unlike "$("$CFPROF" -q ./cf_fg fgu.data)" 'isPrime' "fg --unprofiled isPrime: nor in the call graph"

"$CFPROF" record -o fg.data ./cf_fg > fg.out 2> fg.err
is "$?/$(cat fg.err)/$(truth fg.out isPrime)" "0//32000" "fg: exit 0, nothing on stderr, the program's own output"
flat=$("$CFPROF" -p ./cf_fg fg.data)
is "$(flat "$flat" isPrime 3)" "$(truth fg.out isPrime)" "fg: isPrime called $(truth fg.out isPrime) times"
want=$(truth fg.out isPrime_share) got=$(share "$flat" isPrime)
ok $(near "$got" "$want" 0.03; echo $?) "fg: isPrime's %time ${got:-nothing}, true share $want (within 0.03)"
g=$("$CFPROF" -q ./cf_fg fg.data)
is "$(graph "$g" isPrime callers | sort | tr '\n' ' ')" "16000/32000 f 16000/32000 g " "fg: isPrime's callers f and g, 16000 calls each"
# gprof would split isPrime's time 1:1 by those counts; the per-path
# samples say f caused ~10/11 of it.
fs=$(graph "$g" isPrime times | awk '$1 == "f" { print $2 + $3 }')
gs=$(graph "$g" isPrime times | awk '$1 == "g" { print $2 + $3 }')
got=$(awk -v f="${fs:-0}" -v g="${gs:-0}" 'BEGIN { if (f + g > 0) printf "%.4f\n", f / (f + g) }')
want=$(awk -v f="$(truth fg.out isPrime_f_share)" -v g="$(truth fg.out isPrime_g_share)" 'BEGIN { printf "%.4f\n", f / (f + g) }')
ok $(near "$got" "$want" 0.05; echo $?) \
	"fg: the call graph gives f ${got:-nothing} of isPrime's time (f ${fs:-?} s, g ${gs:-?} s), by samples: true $want, not 0.5 (within 0.05)"

# --- cf_threads: four threads, thread k calls work_k k x 2000 times
cf_build cf_threads cf_threads.c -pthread || exit 1
"$CFPROF" record -o th.data ./cf_threads > th.out 2> th.err
is "$?/$(cat th.err)/$(truth th.out worker)" "0//4" "threads: exit 0, nothing on stderr, the program's own output"
flat=$("$CFPROF" -p ./cf_threads th.data)
for k in 1 2 3 4; do
	is "$(flat "$flat" work_$k 3)" "$((k * 2000))" "threads: work_$k called $((k * 2000)) times"
	want=$(truth th.out work_${k}_share) got=$(share "$flat" work_$k)
	ok $(near "$got" "$want" 0.05; echo $?) "threads: work_$k's %time ${got:-nothing}, its thread's share $want (within 0.05)"
done
is "$(flat "$flat" worker 3)" 4 "threads: worker called 4 times, once per thread"
thr=$("$CPPROF" -c 'threshold 0; threads' ./cf_threads th.data 2>&1)
n=$(printf '%s\n' "$thr" | grep -cE '^[0-9.]+ [0-9]+ .*\[[0-9]+\]')
ok $([ "$n" -ge 4 ]; echo $?) "threads: cpprof's threads view shows the worker threads ($n threads)"

# --- cf_nap: real time where the thread is blocked (the watcher charges
# the blocked thread's current function; nothing of its stack is copied)
cf_build cf_nap cf_nap.c || exit 1
"$CFPROF" record -e real -e cpu -o nap.data ./cf_nap 100 > nap.out 2> nap.err
is "$?/$(cat nap.err)" "0/" "nap: exit 0, nothing on stderr"
real=$("$CFPROF" -p -e real ./cf_nap nap.data)
cpu=$("$CFPROF" -p -e cpu ./cf_nap nap.data)
for f in spin nap; do
	got=$(share "$real" $f) want=$(truth nap.out $f)
	ok $(near "$got" "$want" 0.05; echo $?) "nap: real: $f's %time $got, its measured share $want (within 0.05)"
done
got=$(share "$cpu" nap)
ok $(near "$got" 0 0.02; echo $?) "nap: cpu: nap, asleep, has no CPU time ($got)"

# --- the call graph's rows by time (gprof's order, mprof's): main's
# callees big (3 calls, its time) before small (200,000 calls, next to
# none), which came first by the order they were met in.
cf_build cf_order cf_order.c || exit 1
"$CFPROF" record -o order.data ./cf_order > /dev/null || exit 1
is "$(graph "$("$CFPROF" -q ./cf_order order.data)" main callees | tr '\n' ' ')" "3/3 big 200000/200000 small " \
	"graph: a function's callees by their time, the larger first"

done_testing
