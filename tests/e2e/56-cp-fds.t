# cpprof's descriptors stay out of the program's way: a thread's perf
# event took the lowest free number (3), which a program counts on being
# its own (a shell's `exec 3>file` would have closed it; a program that
# lists its descriptors, as Python's subprocess tests do, saw it).  Now
# from half the limit on (512 under 1024), below the keep's.
#
# And they stay cpprof's: a daemon closes every descriptor from 3 up
# (closefrom, close_range, a loop of close; Python's os.closerange), and
# then opens its own, which take the freed numbers.  cpprof's events went
# with them (no sample after that, nothing said), and a thread's exit
# closed its event's number, by then the program's file (one of its 700
# writes failed).  Now close() says EBADF on them, as if they were not
# open, and the ranges skip them (runtime/common/fds.c).
. "$(dirname "$0")/../lib.sh"
plan 11
CPPROF=$B/bin/cpprof
cd "$T" || exit 1
cat > fds.c <<'CEOF'
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
int main(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	volatile unsigned long x = 0;

	for (unsigned long i = 0; i < 50000000ul; i++) /* samples */
		x += i;
	while (d && (e = readdir(d)))
		if (e->d_name[0] != '.' && atoi(e->d_name) != dirfd(d))
			printf("%s\n", e->d_name);
	return 0;
}
CEOF
cc -O0 -o fds fds.c || exit 1
./fds > bare
"$CPPROF" record -o f.data ./fds > out
is "$?" 0 "the program ran"
is "$(awk '$1 < 512' out | sort -n | tr '\n' ' ')" "$(sort -n bare | tr '\n' ' ')" \
	"below 512, the descriptors it has bare, and none of cpprof's"
ok "$([ "$(awk '$1 >= 512' out | wc -l)" -ge 1 ]; echo $?)" \
	"its perf event and the keep's are there, from 512 on ($(awk '$1 >= 512' out | tr '\n' ' '))"

cc -O1 -g -pthread -o daemon "$TOP/tests/progs/cp_closefrom.c" || exit 1
for how in closefrom close_range close; do
	./daemon $how > bare.$how 2>&1
	"$CPPROF" record -o $how.data ./daemon $how > out.$how 2>&1
	is "$?/$(cat out.$how)" "0/$(cat bare.$how)" \
		"$how: the program's output as bare ($(tail -1 bare.$how)): none of its descriptors closed under it"
	prof=$("$CPPROF" -c function ./daemon $how.data 2>&1)
	n=$(printf '%s\n' "$prof" | awk '/ samples, sampled every / { print $1 }')
	burn=$(printf '%s\n' "$prof" | awk '$2 == "burn" { print $1 }')
	ok $(awk -v n="${n:-0}" -v b="${burn:-0}" 'BEGIN { exit !(n >= 200 && b >= 0.9) }'; echo $?) \
		"$how: sampled to the end: $n samples (0.3 s of CPU at 1 ms: >= 200), burn() $burn of them (>= 0.9)"
done

# Python: os.closerange(3, 4096), then 0.3 s of work.
PY=/usr/bin/python3
[ -x "$PY" ] || absent 2 "$PY (Debian's python3, scripts/install-deps.sh)"
cat > closed.py <<'PYEOF'
import os, time
os.closerange(3, 4096)
def spin(n):
    end = time.process_time() + n
    s = 0
    while time.process_time() < end:
        for i in range(10000):
            s += i * i
    return s
print(spin(0.3) > 0)
PYEOF
out=$("$CPPROF" record -o py.data "$PY" closed.py 2>&1)
is "$?/$out" "0/True" "python3 os.closerange: ran, output its own"
prof=$("$CPPROF" -c function py.data 2>&1)
n=$(printf '%s\n' "$prof" | awk '/ samples, sampled every / { print $1 }')
spin=$(printf '%s\n' "$prof" | awk '$2 == "spin" { print $1 }')
ok $(awk -v n="${n:-0}" -v b="${spin:-0}" 'BEGIN { exit !(n >= 200 && b >= 0.8) }'; echo $?) \
	"python3 os.closerange: sampled to the end: $n samples (>= 200; 9 before), spin() $spin (>= 0.8)"
done_testing
