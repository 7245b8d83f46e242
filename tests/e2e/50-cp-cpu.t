# cpprof record -e cpu: a program that measures its own phases' CPU shares
# (examples/phases.c, built at -O2 WITHOUT frame pointers) is profiled; the
# function fractions must be within 0.03 of the shares it prints, from at
# least 1000 samples, and every stack must reach main.  The same with the
# perf-less fallback (CPPROF_NO_PERF=1: POSIX CPU-time timers).  "Reach main":
# at least 99% of the hits (a few fall in start-up and exit, outside main).
. "$(dirname "$0")/../lib.sh"
plan 53
CPPROF=$B/bin/cpprof
cc -O2 -g -fomit-frame-pointer -o "$T/phases" "$TOP/examples/phases.c" || exit 1

# check_phases DATA TRUTH LABEL TOLERANCE: fractions of the three phases.
check_phases() {
	prof=$("$CPPROF" -c 'threshold 0; function' "$T/phases" "$1")
	n=$(printf '%s\n' "$prof" | awk '/ samples, sampled every / { print $1 }')
	ok $([ "${n:-0}" -ge 1000 ]; echo $?) "$3: at least 1000 samples ($n)"
	for f in parse_input transform write_output; do
		want=$(awk -v f=$f '$1 == f { print $2 }' "$2")
		got=$(printf '%s\n' "$prof" | awk -v f=$f '{ n = $2; sub(/\..*/, "", n) } n == f { print $1 }')
		ok $(awk -v a="${got:-9}" -v b="$want" -v t="$4" 'BEGIN { d = a - b; exit !(d < t && d > -t) }'; echo $?) \
			"$3: $f got ${got:-nothing}, true share $want (within $4)"
	done
	main=$(printf '%s\n' "$prof" | awk '$2 == "main" { print $1 }')
	ok $(awk -v m="${main:-0}" 'BEGIN { exit !(m >= 0.99) }'; echo $?) "$3: stacks reach main (main $main)"
}

"$CPPROF" record -o "$T/p.data" "$T/phases" 1200 > "$T/truth" 2> "$T/err"
is "$?/$(cat "$T/err")" "0/" "record: exit 0, nothing on stderr"
is "$(awk '{ print $1 }' "$T/truth" | tr '\n' ' ')" "parse_input transform write_output " "the program's output is its own"
check_phases "$T/p.data" "$T/truth" "perf" 0.03
sz=$(wc -c < "$T/p.data")
ok $([ "$sz" -lt 65536 ]; echo $?) "the data file holds distinct stacks, not samples: $sz bytes"
out=$("$CPPROF" -c 'resources' "$T/p.data")
like "$out" '^\* cpu +CPU Time +[0-9]+ samples, sampled every 1000000 gticks$' "resources: cpu, every 1 ms"

CPPROF_NO_PERF=1 "$CPPROF" record -e cpu -e page-faults -o "$T/t.data" "$T/phases" 2500 > "$T/truth2" 2> "$T/err"
ok $? "perf not permitted: record still runs"
like "$(cat "$T/err")" '^cpprof: record: page-faults not sampled: perf_event_open disabled by CPPROF_NO_PERF$' \
	"perf not permitted: says why page-faults is not sampled"
like "$(cat "$T/err")" '^cpprof: record: cpu: POSIX CPU-time timer' "perf not permitted: cpu falls back to timers"
# CPU-time timers expire only at scheduler ticks (250 Hz here): the same
# hits come in a quarter as many distinct samples, so the error is twice:
# a longer run, and a tolerance of 0.06.
check_phases "$T/t.data" "$T/truth2" "timers" 0.06

# The case perf's default call graphs get wrong without frame pointers: one
# hot leaf (crunch) shared by two callers; only a correct stack can tell
# that stage_one has 3/4 of the time (bench/cpprof/work.c, by construction).
cc -O2 -g -fomit-frame-pointer -pthread -o "$T/work" "$TOP/bench/cpprof/work.c" || exit 1
"$CPPROF" record -o "$T/w.data" "$T/work" 250 > /dev/null
prof=$("$CPPROF" -c 'threshold 0; function' "$T/work" "$T/w.data")
for fw in stage_one:0.75 stage_two:0.25; do
	f=${fw%:*} want=${fw#*:}
	got=$(printf '%s\n' "$prof" | awk -v f=$f '{ n = $2; sub(/\..*/, "", n) } n == f { print $1 }')
	ok $(awk -v a="${got:-9}" -v b="$want" 'BEGIN { d = a - b; exit !(d < 0.03 && d > -0.03) }'; echo $?) \
		"shared leaf: $f got ${got:-nothing}, true share $want"
done

# Through a dlopen'd library (the unwinder's module snapshot follows dlopen
# and dlclose), while another thread is sampled as the plugin is unloaded.
cc -O2 -g -shared -fPIC -fomit-frame-pointer -o "$T/libcpplug.so" "$TOP/tests/progs/cp_plugin.c" || exit 1
cc -O2 -g -pthread -o "$T/cp_dl" "$TOP/tests/progs/cp_dl.c" -ldl || exit 1
out=$("$CPPROF" record -o "$T/d.data" "$T/cp_dl" "$T/libcpplug.so")
is "$?/$out" "0/ok" "dlopen, dlclose, twice: the program runs as it would"
prof=$("$CPPROF" -c 'threshold 0; function' "$T/cp_dl" "$T/d.data")
# hits NAME: the function's samples in $prof.
hits() { printf '%s\n' "$prof" | awk -v f="$1" '$2 == f { gsub(/[][]/, "", $3); print $3 }'; }
pb=$(hits plugin_burn) cp=$(hits call_plugin) m=$(hits main)
ok $([ "${pb:-0}" -ge 300 ]; echo $?) "the plugin's frames are named, though it was unloaded before the save (${pb:-0} samples for 0.4 s)"
ok $([ "${cp:-0}" -ge "${pb:-1}" ]; echo $?) "samples in the plugin reach its caller (call_plugin ${cp:-0})"
ok $([ "${m:-0}" -ge "${cp:-1}" ]; echo $?) "and main (${m:-0})"
# The plugin reloaded half over its old place (squeeze: a page mapped at
# the end of that place after dlclose): the data file cannot list both
# loads over one address, so the second load's frames went unnamed (half
# the samples; it happened by itself under load) until dlclose held the
# old place (runtime/sampler/loader.c).
out=$("$CPPROF" record -o "$T/q.data" "$T/cp_dl" "$T/libcpplug.so" squeeze)
is "$?/$out" "0/ok" "squeeze: the program runs as it would"
prof=$("$CPPROF" -c 'threshold 0; function' "$T/cp_dl" "$T/q.data")
pb=$(hits plugin_burn)
ok $([ "${pb:-0}" -ge 300 ]; echo $?) "squeeze: both loads of the plugin are named (${pb:-0} samples for 0.4 s)"
# A program run as the loader's (ld.so ./prog): AT_BASE is 0, and so is
# the base of a plugin linked at a fixed address into a program without
# PIE, which was taken for the loader, a module no dlclose unloads, and
# its tables read after the unload: the kernel-mode records of its
# destructor (raw reads of /dev/zero) walked there (SIGSEGV, 3 runs of 3).
LDSO=$(ls /lib64/ld-linux-x86-64.so.2 2> /dev/null)
cc -O2 -g -no-pie -o "$T/cp_ldso" "$TOP/tests/progs/cp_ldso.c" -ldl || exit 1
cc -O2 -g -shared -fPIC -Wl,-Ttext-segment=0x20000000 -o "$T/libldso.so" "$TOP/tests/progs/cp_ldso_plug.c" || exit 1
out=$("$CPPROF" record -o "$T/ldso.data" "$LDSO" "$T/cp_ldso" "$T/libldso.so" 2>&1; echo "rc=$?")
is "$out" "done
rc=0" "ld.so ./prog, a plugin at a fixed address whose destructor is in the kernel: runs as bare"
# The sampler's own work in dlopen and dlclose (its module snapshot, the
# libraries remembered) is not the program's: under -e syscalls:1 its
# unmaps had samples (main;dlclose;modules_remember;__munmap, 10 to 43 a
# run, and a caller-less __mmap), in every run.  Nor is a sample in the
# real dlclose cut short: its frames are in the loader and libc, which no
# dlclose unloads, and are unwound while it runs (its unmap had only its
# own frame, __GI___munmap, in about one run of four).  Three runs: every
# stack begins at main or at the spin thread's start.
own= cut=
for i in 1 2 3; do
	"$CPPROF" record -e syscalls:1 -o "$T/y.data" "$T/cp_dl" "$T/libcpplug.so" > /dev/null
	f=$("$CPPROF" export --format folded "$T/cp_dl" "$T/y.data")
	own="$own$(printf '%s\n' "$f" | grep -E 'modules_|unwind_|snap' | cut -c1-200)"
	cut="$cut$(printf '%s\n' "$f" | grep -v -E '^(main|__GI___clone3;start_thread);' | cut -c1-200)"
done
is "$own" "" "-e syscalls:1: no sample in the sampler's own work in dlopen and dlclose"
is "$cut" "" "-e syscalls:1: every stack reaches main (the real dlclose's unmaps too)"
# The vDSO has no file: the runtime records it as "[vdso]" with its build-id
# and cpprof uses its own (same kernel) to name the function there.  Where
# the clock is kvm-clock, clock_gettime's time is spent in a local helper
# the vDSO has no symbol for: it is one function, named [vdso]+ its entry
# (from the vDSO's CFI), not one line per address.
cc -O2 -g -o "$T/vdso" "$TOP/tests/progs/cp_vdso.c" &&
	"$CPPROF" record -o "$T/v.data" "$T/vdso" > /dev/null 2>&1
func=$("$CPPROF" -c 'threshold 0; function' "$T/vdso" "$T/v.data" 2>&1)
frac=$(printf '%s\n' "$func" | awk '$2 == "__vdso_clock_gettime" { print $1 }')
ok $(awk -v f="${frac:-0}" 'BEGIN { exit !(f >= 0.5) }'; echo $?) "time in the vDSO is named: ${frac:-nothing} in __vdso_clock_gettime (with what it calls)"
body=$("$CPPROF" -c 'threshold 0; body' "$T/vdso" "$T/v.data" 2>&1)
unlike "$body" '^[0-9.]+ 0x' "no vDSO frame left as a bare address"
cc -O2 -o "$T/vdso_dump" "$TOP/tests/progs/vdso_dump.c" && "$T/vdso_dump" > "$T/vdso.so"
entries=$(readelf --debug-dump=frames "$T/vdso.so" 2>/dev/null |
	sed -n 's/.* FDE .* pc=0*\([0-9a-f]*\)\.\..*/0x\1/p' | tr '\n' ' ')
unnamed=$(printf '%s\n' "$body" | sed -n 's/^[0-9.]* \[vdso\]+\(0x[0-9a-f]*\) .*/\1/p' | tr '\n' ' ')
bad=
for a in $unnamed; do
	case " $entries " in *" $a "*) ;; *) bad="$bad $a" ;; esac
done
is "${entries:+cfi}/${bad:-none}" "cfi/none" \
	"the vDSO's unnamed code is named by function entries (${unnamed:-none}; entries: $entries)"

# A sample in a function's epilogue, after its pop of rbp (GCC's rows still
# give the slot it was saved in, now below the stack pointer), kept the
# function alone: its callers were lost (pigz: 1.3% of the samples).
cc -O2 -g -o "$T/epi" "$TOP/tests/progs/cp_epilogue.c" || exit 1
"$CPPROF" record -o "$T/epi.data" "$T/epi" > /dev/null &&
	"$CPPROF" export --format folded -o "$T/epi.folded" "$T/epi.data" || exit 1
all=$(awk '$1 ~ /(^|;)leaf$/ { n += $2 } END { print n + 0 }' "$T/epi.folded")
top=$(awk '$1 == "main;caller;leaf" { n += $2 } END { print n + 0 }' "$T/epi.folded")
ok $(awk -v a="$all" -v t="$top" 'BEGIN { exit !(a > 0 && t == a) }'; echo $?) \
	"every sample in leaf(), its epilogue's too, under main and caller ($top of $all)"

# Stripped, leaf() has no name: it is named by its entry, the start of its
# FDE, not by the CFI row each sample falls in (one function as several,
# each at a mid-function address: perl's hottest was 12 entries).
cp "$T/epi" "$T/epis" && strip "$T/epis" || exit 1
"$CPPROF" record -o "$T/epis.data" "$T/epis" > /dev/null || exit 1
body=$("$CPPROF" -c 'threshold 0; body' "$T/epis" "$T/epis.data" 2>&1)
entries=$(readelf --debug-dump=frames "$T/epis" 2>/dev/null |
	sed -n 's/.* FDE .* pc=0*\([0-9a-f]*\)\.\..*/0x\1/p' | tr '\n' ' ')
unnamed=$(printf '%s\n' "$body" | sed -n 's/^[0-9.]* epis+\(0x[0-9a-f]*\) .*/\1/p' | tr '\n' ' ')
bad=
for a in $unnamed; do
	case " $entries " in *" $a "*) ;; *) bad="$bad $a" ;; esac
done
is "${unnamed:+named}/${bad:-none}" "named/none" \
	"a stripped program's nameless functions are named by their entries (${unnamed:-none})"

# A sample in a PLT stub kept no caller (the PLT's CFA is a DWARF
# expression, which the walk did not take) and was named after the
# sizeless symbol before the PLT (_init+N): python3 1.7% of the samples.
cc -O2 -g -DLIB -shared -fPIC -o "$T/libcpplt.so" "$TOP/tests/progs/cp_plt.c" &&
	cc -O2 -g -o "$T/plt" "$TOP/tests/progs/cp_plt.c" -L"$T" -lcpplt -Wl,-rpath,"$T" || exit 1
"$CPPROF" record -o "$T/plt.data" "$T/plt" > /dev/null &&
	"$CPPROF" export --format folded -o "$T/plt.folded" "$T/plt.data" || exit 1
is "$(awk '$1 ~ /(bump|_init)/ && $1 !~ /^main;/' "$T/plt.folded")" "" "every sample in bump() and its PLT stub under main"
like "$(cat "$T/plt.folded")" '^main;bump@plt [0-9]+$' "the stub is named bump@plt"

# CPU time in the kernel goes to the system call's caller.  The CPU
# clock signals in user mode only (a signal in a system call's entry
# fails the sleep after it with EINTR), and the kernel-mode time was
# credited at the next user-mode overflow, to whatever ran then: kread(),
# reading /dev/zero (the kernel clears the buffer) half of the CPU time,
# had 0.35, and spin(), which ran next, 0.65; perf gives both 0.5.  A
# kernel-mode ring per thread (kcpu.c) now places it.  Within 0.08: kread
# has 0.48 on average (0.45 to 0.51 in 24 runs); the sampler's own kernel
# time (its signals' delivery, its reads) is the interrupted code's.
cc -O2 -g -pthread -o "$T/kern" "$TOP/tests/progs/cp_kernel.c" || exit 1
"$CPPROF" record -o "$T/kern.data" "$T/kern" > "$T/kern.truth" || exit 1
prof=$("$CPPROF" -c 'threshold 0; function' "$T/kern" "$T/kern.data")
for f in kread spin; do
	want=$(awk -v f=$f '$1 == f { print $2 }' "$T/kern.truth")
	got=$(printf '%s\n' "$prof" | awk -v f=$f '{ n = $2; sub(/\..*/, "", n) } n == f { print $1 }')
	ok $(awk -v a="${got:-9}" -v b="${want:-0}" 'BEGIN { d = a - b; exit !(d < 0.08 && d > -0.08) }'; echo $?) \
		"kernel-mode time: $f got ${got:-nothing}, its share of the CPU time $want"
done

# A long stretch in the kernel (1 MiB reads, 40 ms at a time) fills the
# ring before the user-mode clock signals (fifteen records): the clock's
# hits beyond the records kept go to the last of them, not to spin(),
# which ran next (kread 0.19-0.33 with the records alone).  And threads of
# 3 ms in the kernel each drain their ring at their end: their last
# records and the clock's boundaries since their last signal were lost,
# 102-120 samples for 330 ms of CPU.
"$CPPROF" record -o "$T/kbig.data" "$T/kern" big > "$T/kbig.truth" || exit 1
want=$(awk '$1 == "kread" { print $2 }' "$T/kbig.truth")
got=$("$CPPROF" -c 'threshold 0; function' "$T/kern" "$T/kbig.data" | awk '{ n = $2; sub(/\..*/, "", n) } n == "kread" { print $1 }')
ok $(awk -v a="${got:-9}" -v b="${want:-0}" 'BEGIN { d = a - b; exit !(d < 0.06 && d > -0.06) }'; echo $?) \
	"long system calls: kread got ${got:-nothing}, its share of the CPU time $want"
# Two functions that each fill the ring in one system call (kbig reads
# 256 MiB of /dev/zero, ksmall 128 MiB), and hardly run in user mode: the
# ring was drained only at the rare signals, and all that the kernel
# dropped went to whichever call came last before one (kbig 1.0, or no
# sample at all; dd bs=64M of /dev/zero to tmpfs: read 1.0 against
# perf's 0.25-0.30).  Now each interposed call drains the ring as it
# returns, and a full one is paid to that call there (kcpu.c).  kbig's
# share of the two within 0.05 of its share of their CPU time.
"$CPPROF" record -o "$T/ktwo.data" "$T/kern" two > "$T/ktwo.truth" || exit 1
want=$(awk '$1 == "kbig" { print $2 }' "$T/ktwo.truth")
set -- $("$CPPROF" -c 'threshold 0; function' "$T/kern" "$T/ktwo.data" |
	awk '{ n = $2; sub(/\..*/, "", n); gsub(/[][]/, "", $3) } n == "kbig" { b = $3 } n == "ksmall" { s = $3 }
		END { printf "%.3f %d %d", b + s ? b / (b + s) : 9, b, s }')
ok $(awk -v a="$1" -v b="${want:-0}" 'BEGIN { d = a - b; exit !(d < 0.05 && d > -0.05) }'; echo $?) \
	"system calls that fill the ring: kbig has $1 of kbig and ksmall ($2 and $3 samples), its share of their CPU time $want"
"$CPPROF" record -o "$T/kth.data" "$T/kern" threads > "$T/kth.truth" || exit 1
ms=$(awk '$1 == "cpu_ms" { print $2 }' "$T/kth.truth")
n=$("$CPPROF" -c function "$T/kern" "$T/kth.data" | awk '/ samples, sampled every / { print $1 }')
ok $(awk -v n="${n:-0}" -v ms="${ms:-0}" 'BEGIN { exit !(ms > 0 && n >= 0.6 * ms) }'; echo $?) \
	"threads that end in the kernel: ${n:-0} samples at 1 ms for ${ms:-?} ms of CPU (0.6 of it or more)"

# Code a JIT made lies in no module: its frames were bare addresses.  The
# runtime's perf map (/tmp/perf-PID.map, node --perf-basic-prof) names
# them, as perf reads it; a map from before the run (the pid used again)
# or one that does not parse is left alone.  (fib runs 0.3 s, 0.6 of the
# samples idle: with 0.06 s of it, node's start-up and its compiler threads
# made its share 0.09 on a loaded machine.)
NODE=$(command -v node || command -v nodejs)
if [ -z "$NODE" ]; then
	absent 3 "node (Debian's nodejs, scripts/install-deps.sh)"
else
	cat > "$T/fib.js" <<'JS'
function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
let s = 0; for (let i = 0; i < 150; i++) s += fib(25);
console.log(s > 0);
JS
	# (In $T: node --perf-basic-prof leaves an isolate-*-v8.log where it runs.)
	(cd "$T" && "$CPPROF" record -o "$T/js.data" "$NODE" --perf-basic-prof "$T/fib.js" > /dev/null) || exit 1
	jpid=$("$B/bin/mprof" dump "$T/js.data" | awk '$1 == "info" && $2 == "pid" { print $3 }')
	fib=$("$CPPROF" -c 'threshold 0; body' "$T/js.data" | awk '$2 ~ /^JS:.fib$/ { s += $1 } END { print s + 0 }')
	ok $(awk -v f="$fib" 'BEGIN { exit !(f >= 0.2) }'; echo $?) \
		"node --perf-basic-prof: fib's JIT code named by the perf map ($fib of the samples)"
	mv "/tmp/perf-$jpid.map" "$T/perf.map"
	cp "$T/perf.map" "/tmp/perf-$jpid.map" && touch -d '2000-01-01' "/tmp/perf-$jpid.map"
	"$CPPROF" -c 'threshold 0; body' "$T/js.data" > "$T/stale.out"
	is "$(grep -c 'JS:' "$T/stale.out")/$(grep -c '^([0-9]*% of the samples are in code no module holds, a JIT.s as a rule: its perf map names it' "$T/stale.out")" "0/1" \
		"a map older than the run is not the run's: not read; body says what the bare addresses are, and what names them"
	printf 'zz 10 x\n7f 0 zero\n\n1 2\n%s\n' "$(head -c 5000 /dev/zero | tr '\0' a)" > "/tmp/perf-$jpid.map"
	"$CPPROF" -c 'threshold 0; body' "$T/js.data" > /dev/null 2> "$T/err"
	is "$?/$(cat "$T/err")" "0/" "a map that does not parse: passed over, no error"
	rm -f "/tmp/perf-$jpid.map"
fi
# An interval near what a sample costs (each task-clock overflow is a
# timer interrupt, ~15 us on a VM, counted as the thread's time; the
# handler's own time was counted too): the kernel's period stays at least
# 50 us, the handler's time is left out, and the program runs on.  It
# never ended under -e cpu:20us (phases 300, 0.3 s bare), and took 10.7 s
# under 50us, its own measures of its phases skewed (parse_input 0.34).
out=$(timeout 120 "$CPPROF" record -e cpu:20us -o "$T/fast.data" "$T/phases" 300 2>&1; echo "rc=$?")
like "$out" '^parse_input 0\.[0-9]+
transform 0\.[0-9]+
write_output 0\.[0-9]+
rc=0$' "-e cpu:20us: the program ends, exit 0, its output its own"
printf '%s\n' "$out" | grep -v '^rc=' > "$T/fast.truth"
check_phases "$T/fast.data" "$T/fast.truth" "-e cpu:20us" 0.03
# Each signal's own delay (the timer interrupt, the irq_work raising the
# signal, its frame; ~20-60 us on a VM) is counted by the task-clock as
# the thread's time, but is not the program's: the profile's total of a
# fixed amount of work (tests/progs/cp_spin.c) under -e cpu:100us is held
# to its CPU time bare within 0.9 to 1.45: five rounds of a bare run and
# a profiled one side by side, the best round's ratio (a busy host only
# ever adds time, to either run; one profiled run against the best of
# three bare ones failed in CI at 1.46 and gives 1.16 to 1.96 on a quiet
# host with the code from before or after; the best of three rounds
# failed once, with make check sharing its two cores with a third job).  Before the handler's time
# was left out, the total was 1.51 to 1.93 times that (3x on a noisy
# host); now the best round gives 1.13 to 1.30 (what is left: the
# kernel-mode clock's own interrupts, kcpu.c, and delays past
# clock_late's cap).
cc -O2 -g -o "$T/cp_spin" "$TOP/tests/progs/cp_spin.c" || exit 1
r=9 rs=
for i in 1 2 3 4 5; do
	bare=$("$T/cp_spin" | awk '{ print $1 }')
	"$CPPROF" record -e cpu:100us -o "$T/spin.data" "$T/cp_spin" > /dev/null
	n=$("$CPPROF" -c threads "$T/spin.data" | awk '/ samples, sampled every / { print $1 }')
	ri=$(awk -v n="${n:-0}" -v b="${bare:-1}" 'BEGIN { printf "%.3f", n * 0.0001 / b }')
	rs="$rs $ri"
	r=$(awk -v a="$ri" -v b="$r" 'BEGIN { print (a < b ? a : b) }')
done
ok $(awk -v r="$r" 'BEGIN { exit !(r >= 0.9 && r <= 1.45) }'; echo $?) \
	"-e cpu:100us: the profile's total is the program's CPU time, not the signals' (best $r x bare, of$rs; at most 1.45)"
# A program that runs with EFLAGS.AC (alignment check) set, as HotSpot's
# CPU-feature probe does for a few instructions: the kernel hands the flag
# to the handler, whose first unaligned store trapped (SIGBUS; java under
# cpprof died one run in about 60, its crash report overflowing the
# sampler's alternate stack).
cc -O2 -g -o "$T/acflag" "$TOP/tests/progs/cp_acflag.c" || exit 1
out=$(timeout 60 "$CPPROF" record -e cpu:100us -o "$T/ac.data" "$T/acflag" 2>&1; echo "rc=$?")
is "$out" "$("$T/acflag"; echo "rc=$?")" "EFLAGS.AC set where samples land: the program ends as bare, its output its own"
w=$("$CPPROF" -c 'threshold 0; function' "$T/acflag" "$T/ac.data" | awk '$2 == "aligned_work" { print $1 }')
ok $(awk -v w="${w:-0}" 'BEGIN { exit !(w >= 0.9) }'; echo $?) "... and its samples are in aligned_work (${w:-none})"
# The JVM writes one at its exit (JDK 17: -XX:+DumpPerfMapAtExit).
if ! command -v javac > /dev/null || ! command -v java > /dev/null; then
	absent 1 "java and javac (Debian's openjdk-17-jdk-headless, scripts/install-deps.sh)"
else
	mkdir -p "$T/jv" && cat > "$T/jv/Hot.java" <<'JAVA'
public class Hot {
    static long fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
    public static void main(String[] a) {
        long s = 0;
        for (int i = 0; i < 40; i++) s += fib(27);
        System.out.println(s > 0);
    }
}
JAVA
	(cd "$T/jv" && javac Hot.java) || exit 1
	"$CPPROF" record -o "$T/jv.data" java -cp "$T/jv" -XX:+UnlockDiagnosticVMOptions \
		-XX:+DumpPerfMapAtExit Hot > /dev/null || exit 1
	jpid=$("$B/bin/mprof" dump "$T/jv.data" | awk '$1 == "info" && $2 == "pid" { print $3 }')
	fib=$("$CPPROF" -c 'threshold 0; body' "$T/jv.data" | awk '/ Hot\.fib\(int\) \[/ { s += $1 } END { print s + 0 }')
	rm -f "/tmp/perf-$jpid.map"
	ok $(awk -v f="$fib" 'BEGIN { exit !(f >= 0.2) }'; echo $?) \
		"java -XX:+DumpPerfMapAtExit: Hot.fib's JIT code named by the JVM's perf map ($fib of the samples)"
fi
done_testing
