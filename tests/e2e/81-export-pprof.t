# export --format pprof, checked by the real client: pprof built from
# Debian's golang-github-google-pprof-dev (make check builds it) reads the
# gzip'd profile.proto of each kind, and its raw samples add up, per sample
# type, to the profile's own totals; -top names the functions; the
# default sample type is pprof's (inuse_space for heap data) or --counter.
. "$(dirname "$0")/../lib.sh"
plan 23
CPPROF=$B/bin/cpprof
CFPROF=$B/bin/cfprof
PPROF=$B/tools/pprof
cd "$T" || exit 1
# col FILE N: the sum of sample value N (1-based) in `pprof -raw FILE`.
col() {
	"$PPROF" -raw "$1" 2> /dev/null | awk -v n="$2" '
		/^Samples:/ { s = 1; getline; next }
		/^Locations/ { s = 0 }
		s && /:/ { split($0, a, ":"); split(a[1], v, " "); t += v[n] }
		END { printf "%d\n", t }'
}
types() { "$PPROF" -raw "$1" 2> /dev/null | awk '/^Samples:/ { getline; print; exit }'; }

# --- mprof: widgets, 10000 allocations of 2040000 bytes, 1001028 kept
cc -g -O0 -o widgets "$TOP/examples/widgets.c" || exit 1
"$MPROF" run -o m.data ./widgets > /dev/null 2>&1
"$MPROF" export --format pprof -o m.pb.gz ./widgets m.data
ok $? "mprof: export --format pprof"
is "$(od -An -tx1 -N2 m.pb.gz | tr -d ' ')" "1f8b" "mprof: the file is gzip'd"
is "$(types m.pb.gz)" "alloc_objects/count alloc_space/bytes inuse_objects/count inuse_space/bytes[dflt] peak_objects/count peak_space/bytes temp_objects/count temp_space/bytes" \
	"mprof: pprof's heap sample types, in its order, inuse_space the default; then the heap's peak, the temporaries"
is "$(col m.pb.gz 1)/$(col m.pb.gz 2)/$(col m.pb.gz 4)" "10000/2040000/1001028" \
	"mprof: pprof reads 10000 allocations, 2040000 bytes, 1001028 kept"
like "$("$PPROF" -top -sample_index=alloc_space m.pb.gz 2> /dev/null)" ' make_widget$' "mprof: pprof -top names make_widget"
is "$(col m.pb.gz 6)" "$("$MPROF" ./widgets m.data | sed -n '1s/.*, peak \([0-9]*\) bytes live$/\1/p')" \
	"mprof: pprof's peak_space adds up to the header's peak"
like "$("$PPROF" -traces m.pb.gz 2> /dev/null)" 'make_widget' "mprof: pprof -traces reads the stacks"

# --- cpprof: samples x 1 ms in nanoseconds
cc -O2 -g -o phases "$TOP/examples/phases.c" || exit 1
"$CPPROF" record -o c.data ./phases 300 > /dev/null
n=$("$CPPROF" -c resources ./phases c.data | sed -n 's/.* cpu .* \([0-9]*\) samples, .*/\1/p')
"$CPPROF" export --format pprof -o c.pb.gz ./phases c.data
is "$(types c.pb.gz)/$(col c.pb.gz 1)" "cpu/nanoseconds[dflt]/$((n * 1000000))" "cpprof: cpu in nanoseconds, $n samples x 1 ms"
like "$("$PPROF" -top c.pb.gz 2> /dev/null)" ' parse_input$' "cpprof: pprof -top names parse_input"
# The run's time and the sampling period, as pprof's own CPU profiles
# carry them: pprof prints "Duration: ..., Total samples = ...".
is "$("$PPROF" -raw c.pb.gz 2> /dev/null | grep -E '^(PeriodType|Period):' | tr '\n' ' ')" \
	"PeriodType: cpu nanoseconds Period: 1000000 " "cpprof: the period is the resource's interval"
like "$("$PPROF" -top c.pb.gz 2> /dev/null)" '^Duration: [0-9.]+m?s, Total samples = ' \
	"cpprof: pprof gives the run's duration beside the samples' total"

# --- cfprof: exact calls beside cpu
cc -O2 -g -finstrument-functions -o primes "$TOP/examples/primes.c" || exit 1
"$CFPROF" record -o f.data ./primes 3000 > primes.out
"$CFPROF" export --format pprof -o f.pb.gz ./primes f.data
is "$(types f.pb.gz)" "calls/count cpu/nanoseconds[dflt]" "cfprof: calls and cpu, cpu the default"
is "$(col f.pb.gz 1)" "$(awk '$1 == "calls" { print $2 }' primes.out)" "cfprof: pprof reads the program's own count of calls"
like "$("$PPROF" -top -sample_index=calls f.pb.gz 2> /dev/null)" "^ +$(awk '$1 == "test" { print $2 }' primes.out) .* test\$" \
	"cfprof: pprof -top -sample_index=calls gives test its exact calls"
"$CFPROF" export --format pprof --counter calls -o g.pb.gz ./primes f.data
is "$(types g.pb.gz)" "calls/count[dflt] cpu/nanoseconds" "--counter sets the default sample type"

# --- inline frames and mappings: grab() is inlined into fill() at -O2
cc -O2 -g -o inl "$TOP/tests/progs/inl.c" || exit 1
"$MPROF" run -o i.data ./inl > /dev/null 2>&1
"$MPROF" export --format pprof -o i.pb.gz ./inl i.data
raw=$("$PPROF" -raw i.pb.gz 2> /dev/null)
is "$(printf '%s\n' "$raw" | awk '/^Locations/ { l = 1; next } l && /grab/ { print $4; getline; print $1; exit }' | tr '\n' ' ')" \
	"grab fill " "inline frames: one location, its lines callee first (grab, then fill)"
bid=$(readelf -n inl | awk '/Build ID/ { print $3 }')
# The program's mapping is its code's segment, as /proc/PID/maps has it:
# its file offset, and a size of the segment's (pprof's own symbolizer
# reads the load base from them; a whole image at offset 0 made Go 1.19's
# pprof read bzip2's addresses 0x2000 further on, other functions' names).
set -- $(readelf -lW inl | awk '$1 == "LOAD" && / R?W?E / { print $2, $3, $6; exit }')
seg=$(printf '%x %x' $(($1 / 4096 * 4096)) $(($2 % 4096 + $3)))
m=$(printf '%s\n' "$raw" | awk '/^Mappings/ { getline; print; exit }')
set -- $(printf '%s\n' "$m" | awk '{ split($2, a, "/"); print a[1], a[2], a[3] }')
got=$(printf '%x %x' $(($3)) $(($2 - $1)))
is "$got" "$seg" "mappings: the program's is its code's segment: file offset and size ($m)"
like "$m" " .*/inl $bid \\[FN\\]\\[FL\\]\\[LN\\]\\[IN\\]\$" \
	"mappings: the program, its build-id ($bid), symbolized"
like "$raw" '/libc\.so\.6 [0-9a-f]{40} ' "mappings: libc with its build-id"

# --- --diff-base: a longer run minus a shorter one, pprof's diff view
"$CPPROF" record -o c2.data ./phases 600 > /dev/null
n2=$("$CPPROF" -c resources ./phases c2.data | sed -n 's/.* cpu .* \([0-9]*\) samples, .*/\1/p')
"$CPPROF" export --format pprof --diff-base c.data -o d.pb.gz ./phases c2.data
is "$?/$(col d.pb.gz 1)" "0/$(((n2 - n) * 1000000))" "--diff-base: the samples of the difference ($n2 - $n, x 1 ms)"
# Two builds of the program (before and after a change: other build-ids):
# the base's frames named from its own binary.  They were resolved in the
# new one's: bare addresses, as if every function of the old build had
# gone away.
cc -O2 -g -DANOTHER_BUILD=1 -fno-inline-small-functions -o phases2 "$TOP/examples/phases.c" || exit 1
"$CPPROF" record -o c3.data ./phases2 300 > /dev/null
"$CPPROF" export --format pprof --diff-base c.data -o d2.pb.gz ./phases2 c3.data 2> e
top=$("$PPROF" -top -unit=ms -nodefraction=0 d2.pb.gz 2> /dev/null)
n1=$("$CPPROF" -c resources ./phases c.data | sed -n 's/.* cpu .* \([0-9]*\) samples, .*/\1/p')
n3=$("$CPPROF" -c resources ./phases2 c3.data | sed -n 's/.* cpu .* \([0-9]*\) samples, .*/\1/p')
got=$(printf '%s\n' "$top" | awk '$NF == "main" { sub(/ms$/, "", $4); print $4 + 0 }')
got=${got:-0} # pprof lists no node whose change is 0
ok $([ ! -s e ] && ! printf '%s\n' "$top" | grep -q ' 0x[0-9a-f]*$\|<unknown>' &&
	awk -v g="${got:-x}" -v w="$((n3 - n1))" 'BEGIN { d = g - w; exit !(g ~ /^-?[0-9]+$/ && d <= 2 && d >= -2) }'; echo $?) \
	"--diff-base of another build: no warning, every frame named, main's change $((n3 - n1)) ms ($n3 - $n1; pprof: ${got:-none})"
"$CPPROF" export --format folded --diff-base c.data ./phases c2.data > /dev/null 2> e
is "$?/$(wc -l < e)" "2/1" "--diff-base with folded: exit 2, one line"

# A file pprof cannot read is never written.
head -c 100 m.data > cut.data
"$MPROF" export --format pprof -o cut.pb.gz cut.data 2> e
is "$?/$(wc -l < e)/$(ls cut.pb.gz 2> /dev/null)" "2/1/" "a truncated data file: exit 2, one line, nothing written"
done_testing
