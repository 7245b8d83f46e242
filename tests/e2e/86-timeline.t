# Memory over time (issue 24, items 1-3): the monitor's timeline, `mprof
# timeline` (a chart, --csv), and temporary allocations.
#
# tests/progs/phases.c holds 10 MiB, then 30 MiB, then 5 MiB, with 200 ms
# of churn and sleep between: the timeline must have that shape, its peak
# (a point of its own) exactly the HEAP PEAK's, and it must end at 5 MiB.
# tests/progs/temps.c makes 1000 temporaries in loop, none in pairs and
# three by realloc in grow (heaptrack's definition, which counted 1001
# there before: a free between two no longer ended the run, and a realloc's
# free was never one): counted exactly, by the exact monitor and by
# the sampled one sampling every allocation, in the direct allocation
# table, folded --counter and pprof.  tests/progs/lives.c's objects live
# either not at all or to the end: the lifetimes (item 4) tell them
# apart.  Merged, two runs' timelines are side by side; diff draws the
# two curves.  A program killed by SIGKILL has its timeline salvaged.  The section's bad cases are the reader's unit test's
# (tests/unit/test_reader.c).
. "$(dirname "$0")/../lib.sh"
plan 42
cc_prog "$T/phases" phases.c || exit 1
cc_prog "$T/temps" temps.c || exit 1
cc_prog "$T/latepeak" tl_late_peak.c || exit 1
cc_prog "$T/slow" tl_slow.c || exit 1
cd "$T" || exit 1
MiB=1048576

# A peak after the last stored point (100000 then 50000 bytes, then a
# free): its allocated bytes are the end's, never fewer than live (it
# took the point before it's, 100000 beside 150000 live).
"$MPROF" run -o lp.data ./latepeak
ok $? "tl_late_peak runs under mprof"
is "$("$MPROF" timeline --csv lp.data | awk -F, '$5 == "peak" { print $2, $4 }')" "150000 150000" \
	"the peak's point: 150000 live of 150000 allocated"

# A heap that stays small (200 KB over 300 ms): points on the way up,
# by time (it had none: the chart held 2000 bytes to the peak).
"$MPROF" run -o sl.data ./slow
ok $? "tl_slow runs under mprof"
n=$("$MPROF" timeline --csv sl.data | awk -F, 'NR > 1 && $5 == "" && $2 >= 20000 && $2 <= 180000' | wc -l)
ok $([ "$n" -ge 3 ]; echo $?) "a small heap's timeline: $n points between 20000 and 180000 bytes (3 or more)"

"$MPROF" run -o ph.data ./phases
ok $? "phases runs under mprof"
"$MPROF" timeline --csv ph.data > ph.csv
ok $? "mprof timeline --csv"
is "$(head -n 1 ph.csv | cut -d, -f1-5)" "time_s,live_bytes,live_objects,allocated_bytes,mark" \
	"the CSV header"
# The shape: live bytes in MiB (rounded down) at each point, runs of
# equal values squeezed: up to 10, up to 30, down to 5.
shape=$(awk -F, -v M=$MiB 'NR > 1 { v = int($2 / M); if (v != last) printf "%s%d", n++ ? " " : "", v; last = v }' ph.csv)
like "$shape" '^(0 )?1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 29 28 27 26 25 24 23 22 21 20 19 18 17 16 15 14 13 12 11 10 9 8 7 6 5$' \
	"the curve: up to 10 MiB, up to 30, down to 5 (got: $shape)"
# The plateaus last: 10 MiB from its first point to the first above it,
# 30 from its first to the first below; 4 x 50 ms of sleep each.
span() { awk -F, -v M=$MiB -v lo="$1" -v hi="$2" 'NR > 1 { v = $2 / M
	if (!a && v >= lo) a = $1; if (a && !b && (v >= hi || v < lo)) b = $1 } END { printf "%d\n", (b - a) * 1000 }' ph.csv; }
p10=$(span 10 11)
p30=$(span 30 31)
ok $([ "$p10" -ge 190 ] && [ "$p30" -ge 190 ]; echo $?) \
	"the plateaus last: 10 MiB for $p10 ms, 30 MiB for $p30 ms (at least 190 each)"
peak_hdr=$("$MPROF" ./phases ph.data | sed -n '1s/.*, peak \([0-9]*\) bytes live$/\1/p')
is "$(awk -F, '$5 ~ /peak/ { print $2 }' ph.csv)/$peak_hdr" "31457380/31457380" \
	"the peak is a point: 30 MiB and a churn block, as the header says"
is "$(awk -F, '$5 ~ /peak/ { print $3 }' ph.csv)" "31" "the peak's point: 31 objects live"
# The peak's row gives its stacks' bytes too, from the peak counters (its
# stack columns were empty, where the chart has them: phase_one's 10 MiB
# and phase_two's 20 MiB).
is "$(awk -F, '$5 ~ /peak/ { s = ""; for (i = 6; i <= NF; i++) if ($i != "") s = s $i " "; print s }' ph.csv)" \
	"10485760 20971520 " "the peak's point: its stacks' bytes, from the peak counters"
is "$(tail -n 1 ph.csv | cut -d, -f2,3,5)" "5242880,5,end" "the last point: 5 MiB in 5 objects, the end"
is "$(tail -n 1 ph.csv | cut -d, -f4)" "$(info ph.data bytes)" "the last point: every byte allocated"
n=$(awk 'END { print NR - 1 }' ph.csv)
ok $([ "$n" -ge 50 ] && [ "$n" -le 514 ]; echo $?) "$n points: every MiB's move seen, bounded by the table (512, the peak and the end)"
"$MPROF" timeline ./phases ph.data > chart
like "$(sed -n 2p chart)" "points over 0\.[0-9]* s; peak 30MiB live at 0\.[0-9]* s \(\^\)$" "the chart's heading: the peak, marked ^ under its column"
like "$(grep '^   A ' chart)" 'A +20MiB +20MiB +main > phase_two$' "the key: A is phase_two, 20 MiB at the peak"
like "$(grep '^   B ' chart)" 'B +10MiB +10MiB +main > phase_one$' "B is phase_one, 10 MiB"
# 18 rows; the bottom one is phase_one's (B) from the start to the end,
# but where phase_two's (A) fills the chart's bottom.
is "$(awk 'substr($0, 10, 1) ~ /[|^]/' chart | wc -l | tr -d ' ')" 18 "18 rows of chart"
like "$(awk 'substr($0, 10, 1) ~ /[|^]/ { r = $0 } END { print substr(r, 11) }' chart)" '^B+A+B+$' \
	"its bottom row: phase_one's, phase_two's, phase_one's again"

# --- merge (item 6): the runs side by side; diff: the two curves
"$MPROF" run -o ph2.data ./phases
"$MPROF" timeline --csv ph2.data > ph2.csv
"$MPROF" merge ph.data ph2.data -o pm.data
"$MPROF" timeline --csv pm.data > pm.csv
is "$(awk 'END { print NR - 1 }' pm.csv)" "$(($(awk 'END { print NR - 1 }' ph.csv) + $(awk 'END { print NR - 1 }' ph2.csv)))" \
	"merge: every point of both runs"
is "$(awk -F, '$5 ~ /run/ { print NR - 1 }' pm.csv)" "$(($(awk 'END { print NR - 1 }' ph.csv) + 1))" \
	"merge: the second run begins after the first's last point (marked run)"
is "$(awk -F, 'NR > 1 && $5 ~ /peak/ { printf "%s ", $2 }' pm.csv)" "31457380 31457380 " "merge: both runs' peaks"
is "$(awk -F, 'NR > 1 { if ($1 + 0 < last) bad = 1; last = $1 + 0 } END { print bad + 0 }' pm.csv)" 0 \
	"merge: one time axis, the second run after the first"
is "$("$MPROF" timeline ./phases pm.data | awk '/^  key/ { k = 1; next } k && $1 ~ /^[A-H]$/ { printf "%s ", $3 }')" "- - " \
	"merge: the key gives no share of the peak (the runs' peaks are summed in the counters: no one point's), and a stack of both runs is one row"
"$MPROF" diff ./phases ph.data ph2.data > pd
like "$(grep -A3 '^--------- HEAP OVER TIME (BASE and NEW)' pd | grep '^BASE')" \
	'^BASE ph\.data: peak 30MiB at 0\.[0-9]+ s, 5\.0MiB live at the end \(0\.[0-9]+ s\)$' \
	"diff: BASE's peak and end"
like "$(grep -A3 '^--------- HEAP OVER TIME (BASE and NEW)' pd | grep '^NEW')" \
	'^NEW  ph2\.data: peak 30MiB at 0\.[0-9]+ s, 5\.0MiB live at the end \(0\.[0-9]+ s\)$' \
	"diff: NEW's"
is "$(sed -n '/^--------- HEAP OVER TIME/,$p' pd | awk 'substr($0, 10, 1) ~ /[|^]/ && /\*/' | wc -l | tr -d ' ')" 18 \
	"diff: the two curves in one chart, both up to the top (*)"

# --- temporaries
"$MPROF" run -o t.data ./temps
is "$("$MPROF" export --format folded --counter temp_objects ./temps t.data | sort)" "main;grow 3
main;loop 1000" "temp_objects: loop's 1000, grow's 3 (malloc, realloc, realloc, free), none of pairs' (each had another event between)"
is "$("$MPROF" export --format folded --counter temp_space ./temps t.data | sort)" "main;grow 1110
main;loop 24000" "temp_space: 24,000 and 1,110 bytes"
is "$("$MPROF" ./temps t.data | awk '/^-+ DIRECT/ { d = 1 } d && $NF == "loop" { print $(NF - 2) "/" $(NF - 1) }')" \
	"1000/1000" "the direct allocation table: loop's 1000 calls, all temporary"
MPROF_SAMPLE=1 MPROF_OUT=s.data LD_PRELOAD=$LIBMPROF/libmprof.so ./temps
is "$("$MPROF" export --format folded --counter temp_objects ./temps s.data | sort)" "main;grow 3
main;loop 1000" "sampled, every allocation a sample: the same 1003"

# --- lifetimes: shortlived's objects all die at once, longlived's all live
cc_prog "$T/lives" lives.c || exit 1
"$MPROF" run -o lv.data ./lives
lt() { "$MPROF" timeline ./lives lv.data | awk -v f="$1" '/^LIFETIMES/ { l = 1 } l && $NF == f'; }
# (By time: under 10 us, unless the machine stopped the program between
# its malloc and free; the bytes allocated meanwhile do not depend on it.)
like "$(lt shortlived)" '^ +[0-9]+ +[0-9%. ]+ +\| +100% +\| +main > shortlived$' \
	"LIFETIMES: every sample of shortlived's freed with under 4 KiB allocated meanwhile, none live"
like "$(lt shortlived | cut -c10-16)" '^ +[0-9]+%$' "most of them under 10 us"
like "$(lt longlived)" '^ +[0-9]+ +\| +\| +100% +main > longlived$' "and every one of longlived's is live"
n=$("$MPROF" dump lv.data | awk '$1 == "lifetime" { n += $3 } END { print n }')
ok $([ "$n" -ge 300 ] && [ "$n" -le 330 ]; echo $?) \
	"$n samples: one a 256 KiB the program allocated (84 MB: 320)"

# --- stacks printed the same are one row: F from three call sites
# (tests/progs/two_sites.c, nothing freed: 700 bytes), churn from two
# (each sample its own stack before: two rows reading main > churn)
cc_prog "$T/two" two_sites.c || exit 1
"$MPROF" run -o two.data ./two keep
is "$("$MPROF" timeline ./two two.data | awk '/^  key/ { k = 1; next } k && /^$/ { exit } k && /main > F$/ { print $2, $3 }')" \
	"700B 700B" "the key: F's three call sites one stack, 700 bytes most live and at the peak"
cat > churn2.c <<'C'
#include <stdlib.h>
__attribute__((noinline)) static void churn(int n)
{
	for (int i = 0; i < n; i++) {
		char *p = malloc(1000);
		__asm__ volatile("" : "+r"(p) :: "memory");
		p[0] = 1;
		free(p);
	}
}
int main(void)
{
	churn(20000);
	churn(20000);
	return 0;
}
C
cc -g -O0 -o churn2 churn2.c || exit 1
"$MPROF" run -o c2.data ./churn2
is "$("$MPROF" timeline ./churn2 c2.data | awk '/^LIFETIMES/ { l = 1 } l && / main > churn$/' | wc -l)" 1 \
	"LIFETIMES: churn's two call sites one row"

# --- a program killed: its timeline salvaged from the keep
cat > grow.c <<'C'
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
int main(void)
{
	for (int i = 0; i < 8; i++) {
		void *p = malloc(1 << 20);
		memset(p, 1, 1 << 20);
		usleep(10000);
	}
	kill(getpid(), SIGKILL);
	return 0;
}
C
cc -O2 -g -o grow grow.c || exit 1
"$MPROF" run -o g.data ./grow 2> /dev/null
"$MPROF" timeline --csv g.data > g.csv
ok $? "killed by SIGKILL: the salvaged profile has a timeline"
is "$(awk -F, 'NR > 1 { if ($2 > m) m = $2 } END { print m }' g.csv)" "8388608" \
	"the salvaged timeline reaches the 8 MiB the program held"
# One that stops allocating, then ends without its exit handlers (as a Go
# program does, by exit_group): its salvaged timeline ended at its last
# allocation (0.000 s of a 0.5 s run); it now ends with the heap at death.
cat > quiet.c <<'C'
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>
int main(void)
{
	for (int i = 0; i < 1000; i++)
		if (!malloc(1000))
			return 1;
	usleep(500000);
	syscall(SYS_exit_group, 0);
	return 0;
}
C
cc -O2 -g -o quiet quiet.c || exit 1
"$MPROF" run -o q.data ./quiet 2> /dev/null
"$MPROF" timeline --csv q.data > q.csv
last=$(tail -1 q.csv)
is "$(printf '%s' "$last" | cut -d, -f2-5)" "1000000,1000,1000000,end" \
	"exit_group after a quiet half second: the last point is the heap at death (${last%%,*} s)"
ok $(awk -v t="${last%%,*}" 'BEGIN { exit !(t >= 0.5) }'; echo $?) "... at the end of the run, not at the last allocation"
done_testing
