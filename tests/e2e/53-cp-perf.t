# Resources counted by perf events, each overflow signalling the thread
# that caused it: page faults in a function that touches 20480 fresh pages,
# system calls (the raw_syscalls:sys_exit tracepoint) in one making 20000.
. "$(dirname "$0")/../lib.sh"
plan 8
CPPROF=$B/bin/cpprof
cc -O2 -g -o "$T/cp_faults" "$TOP/tests/progs/cp_faults.c" || exit 1

# hits DATA RESOURCE FUNCTION: the function's samples (body + descendants).
hits() {
	"$CPPROF" -c "resource $2; threshold 0; function" "$T/cp_faults" "$1" |
		awk -v f="$3" '{ n = $2; sub(/\..*/, "", n) } n == f { gsub(/[][]/, "", $3); print $3 }'
}
# within GOT LO HI
within() { [ "${1:-0}" -ge "$2" ] && [ "${1:-0}" -le "$3" ]; }

"$CPPROF" record -e page-faults:10 -e minor-faults:10 --no-random -o "$T/f.data" "$T/cp_faults" > "$T/out"
is "$?/$(cat "$T/out")" "0/ok" "record: exit 0, output unchanged"
n=$(hits "$T/f.data" page-faults touch_pages)
ok $(within "$n" 2040 2060; echo $?) "20480 fresh pages at interval 10: ~2048 hits in touch_pages ($n)"
n=$(hits "$T/f.data" minor-faults touch_pages)
ok $(within "$n" 2040 2060; echo $?) "minor-faults alongside, at the same interval: ~2048 ($n)"
"$CPPROF" record -e page-faults:10 -o "$T/r.data" "$T/cp_faults" > /dev/null
n=$(hits "$T/r.data" page-faults touch_pages)
ok $(within "$n" 1945 2150; echo $?) "random intervals: within 5% ($n)"

# syscalls needs tracefs for the tracepoint's id.  As root on a machine that
# has it but does not mount it (CI's VMs), mount it for this test and
# unmount it after, so the resource is tested rather than skipped.
if [ "$(id -u)" = 0 ] && [ -d /sys/kernel/tracing ] && [ ! -e /sys/kernel/tracing/events ] &&
	mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null; then
	trap 'umount /sys/kernel/tracing 2>/dev/null; rm -rf "$T"' EXIT
fi
if "$CPPROF" list | sed '/^not available/q' | grep -q '^  syscalls '; then
	"$CPPROF" record -e syscalls:10 --no-random -o "$T/s.data" "$T/cp_faults" > "$T/out"
	is "$?/$(cat "$T/out")" "0/ok" "syscalls: exit 0, output unchanged"
	n=$(hits "$T/s.data" syscalls many_syscalls)
	ok $(within "$n" 1990 2010; echo $?) "20000 syscalls at interval 10: ~2000 hits ($n)"
	"$CPPROF" record -e syscalls:10 -e cpu -o "$T/s2.data" "$T/cp_faults" > /dev/null
	n=$(hits "$T/s2.data" syscalls many_syscalls)
	ok $(within "$n" 1900 2100; echo $?) "random, with cpu sampled too (its reads are not counted): within 5% ($n)"
	like "$("$CPPROF" -c 'resource syscalls; down main' "$T/cp_faults" "$T/s2.data")" \
		'^(1\.0|0\.99)[0-9]+ \(main many_syscalls syscall\) \[[0-9]+\]$' "syscalls: the path down to glibc's syscall()"
else
	skip 4 "syscalls: $("$CPPROF" list | grep '^  syscalls' | sed 's/^ *syscalls *//' || echo 'not available here')"
fi
done_testing
