# read-bytes, write-bytes and io-time: the interposed read/write calls.
# With --no-random the arithmetic is exact (paper 5.1: a 10240-byte read at
# interval 1024 credits 10 hits); with random intervals the byte shares are
# within 0.01 of the truth the program prints.
. "$(dirname "$0")/../lib.sh"
plan 17
CPPROF=$B/bin/cpprof
cc -O2 -g -o "$T/cp_io" "$TOP/tests/progs/cp_io.c" || exit 1
head -c 4000000 /dev/zero > "$T/in.bin"
"$T/cp_io" "$T/in.bin" > "$T/bare"

# hits DATA RESOURCE FUNCTION: the function's samples (body + descendants).
hits() {
	"$CPPROF" -c "resource $2; threshold 0; function" "$T/cp_io" "$1" |
		awk -v f="$3" '{ n = $2; sub(/\..*/, "", n) } n == f { gsub(/[][]/, "", $3); print $3 }'
}

"$CPPROF" record -e read-bytes:1024 -e write-bytes:1k -e io-time:100us --no-random \
	-o "$T/x.data" "$T/cp_io" "$T/in.bin" > "$T/out"
ok $? "record --no-random"
is "$(cat "$T/out")" "$(cat "$T/bare")" "the program's output is unchanged"
is "$(hits "$T/x.data" read-bytes big_reads)" 3000 "300 reads of 10240 bytes at interval 1024: 10 hits each"
is "$(hits "$T/x.data" read-bytes small_reads)" 1953 "20000 reads of 100 bytes: floor(2000000 / 1024) hits"
is "$(hits "$T/x.data" read-bytes stdio_reads)" 976 "fread counts its bytes: floor(1000000 / 1024)"
is "$(hits "$T/x.data" write-bytes writes)" 2000 "write-bytes: 2048000 bytes at 1 KiB, 2000 hits"
io=$("$CPPROF" -c 'resource io-time; threshold 0; function' "$T/cp_io" "$T/x.data" |
	awk '{ n = $2; sub(/\..*/, "", n) } n == "wait_pipe" { print $1 }')
ok $(awk -v f="${io:-0}" 'BEGIN { exit !(f > 0.8) }'; echo $?) "io-time: the 0.3 s wait on a pipe dominates ($io)"

"$CPPROF" record -e read-bytes:1024 -o "$T/r.data" "$T/cp_io" "$T/in.bin" > "$T/out"
tot=$(awk '$1 ~ /reads$/ { s += $2 } END { print s }' "$T/out")
prof=$("$CPPROF" -c 'threshold 0; function' "$T/cp_io" "$T/r.data")
for f in big_reads small_reads stdio_reads; do
	want=$(awk -v f=$f -v t="$tot" '$1 == f { print $2 / t }' "$T/out")
	got=$(printf '%s\n' "$prof" | awk -v f=$f '{ n = $2; sub(/\..*/, "", n) } n == f { print $1 }')
	ok $(awk -v a="${got:-9}" -v b="$want" 'BEGIN { d = a - b; exit !(d < 0.01 && d > -0.01) }'; echo $?) \
		"random intervals: $f got ${got:-nothing}, true byte share $want"
done
# The sampler's own work inside an interposed call (draining its rings
# after the real read returns) is the call's: dd of 4 KiB blocks showed
# io_kend 3.2%, kc_call_drain 1.3%, io_kbegin 0.7% of its samples.  Now
# they are read's and write's, as the program called them.
"$CPPROF" record -o "$T/dd.data" dd if=/dev/zero of=/dev/null bs=4k count=1000000 status=none
body=$("$CPPROF" -c 'threshold 0; body' "$T/dd.data")
unlike "$body" '^[0-9.]+ (io_[a-z_]+|kc_[a-z_]+|pf_[a-z_]+|th_[a-z_]+|unwind_[a-z_]+|walk_[a-z_]+|rule_[a-z_]+|c_get|hold_sig|release_sig|drain|credit|settle) \[' \
	"dd bs=4k: no sample named by the sampler's own functions"
like "$body" '^0\.[0-9]+ read \[' "... their samples are read's, the interposed call"

# stdio's lines and formatted output: fgets, getline, fprintf and fputs
# move their bytes inside libc, where the wrapped read and write do not
# see them (read-bytes had 0 samples of a program reading with fgets).
# Now they are counted as fread is, each at its caller; built plain and
# with _FORTIFY_SOURCE (Debian's packages: __fgets_chk, __fprintf_chk).
seq 1 400000 > "$T/nums.txt"
for how in plain fortify; do
	flags=
	[ $how = fortify ] && flags="-D_FORTIFY_SOURCE=2"
	cc -O2 -g $flags -o "$T/cp_stdio" "$TOP/tests/progs/cp_stdio.c" || exit 1
	"$T/cp_stdio" "$T/nums.txt" > "$T/bare"
	"$CPPROF" record -e read-bytes:1024 -e write-bytes:1024 --no-random -o "$T/s.data" \
		"$T/cp_stdio" "$T/nums.txt" > "$T/out"
	is "$(cat "$T/out")" "$(cat "$T/bare")" "stdio, $how: the program's output is unchanged"
	want=$(awk '{ printf "%d %d %d %d", int($1 / 1024), int(($1 + $2) / 1024) - int($1 / 1024),
		int($3 / 1024), int(($3 + $4) / 1024) - int($3 / 1024) }' "$T/out")
	got=$(for r in read-bytes:by_fgets read-bytes:by_getline write-bytes:out_printf write-bytes:out_fputs; do
		"$CPPROF" -c "resource ${r%:*}; threshold 0; function" "$T/s.data" |
			awk -v f="${r#*:}" '{ n = $2; sub(/\..*/, "", n) } n == f { gsub(/[][]/, "", $3); print $3 }'
	done | tr '\n' ' ')
	got=${got% }
	is "$got" "$want" "stdio, $how: fgets, getline, fprintf and fputs hits, a byte each at 1 KiB"
done
# A memory stream's bytes reach no file: counted once, where the program
# writes its buffer (fprintf to open_memstream counted them twice), and
# dprintf's as printf's.  1,000,000 lines of 8 bytes made in memory and
# written whole, then 200,000 dprintf of 8: 9,600,000 bytes, 9375 hits.
cat > "$T/memw.c" <<'CEOF'
#include <stdio.h>
#include <unistd.h>
int main(void)
{
	char *b;
	size_t n;
	FILE *m = open_memstream(&b, &n);
	for (int i = 0; i < 1000000; i++)
		fprintf(m, "%07d\n", i);
	fclose(m);
	for (size_t o = 0; o < n;)
		o += (size_t)write(1, b + o, n - o);
	for (int i = 0; i < 200000; i++)
		dprintf(2, "%07d\n", i);
	return 0;
}
CEOF
cc -O2 -o "$T/memw" "$T/memw.c" || exit 1
"$CPPROF" record -e write-bytes:1024 --no-random -o "$T/mw.data" "$T/memw" > /dev/null 2>&1
like "$("$CPPROF" -c resources "$T/mw.data")" '^\* write-bytes +Bytes Written +9375 samples' \
	"memory streams counted once, where their buffer is written; dprintf counted: 9375 hits"
done_testing
