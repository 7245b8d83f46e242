# The heap's peak, exact, by stack (issue 15, item 3): the monitor keeps
# the most bytes live at once and what each stack held at that moment,
# online (runtime/mprof/peak.h).  tests/progs/peak.c's peaks are known to
# the byte: the header's peak, the HEAP PEAK table, and export's
# peak_space and peak_objects must give them exactly.  With threads the
# peak is exact when each thread's changes pass MPROF_PEAK_SLACK (4096
# bytes by default), else within the bytes the other threads hold back
# (below the slack each), and exact again with MPROF_PEAK_SLACK=0.
# restart begins a new peak; a forked child goes on from its parent's.
# A file from before issue 15 (no peak counters) is still read.
. "$(dirname "$0")/../lib.sh"
plan 41
cc_prog "$T/peak" peak.c -pthread || exit 1
cc_prog "$T/peakrand" peakrand.c -pthread || exit 1
unset MPROF_PEAK_SLACK # the figures below are the default's (4096)
cd "$T" || exit 1
P=$T/peak
# head FILE: the header after "(pid N): "; peak FILE: its peak.
head1() { "$MPROF" "$P" "$1" | head -n 1 | sed 's/.*): //'; }
peak() { "$MPROF" "$P" "$1" | sed -n '1s/.*, peak \([0-9]*\) bytes live\( (the runs. peaks summed)\)\{0,1\}$/\1/p'; }
kept() { "$MPROF" "$P" "$1" | sed -n '1s/.* \([0-9]*\) bytes kept, .*/\1/p'; }
# table FILE: the HEAP PEAK table's rows, spaces squeezed.
table() {
	"$MPROF" "$P" "$1" | awk '/^-+ HEAP PEAK/ { t = 1; next } /^-+ / { t = 0 } t && NF' |
		sed 's/  */ /g; s/^ //'
}
total() { awk '{ s += $NF } END { printf "%d\n", s }'; }

# --- one thread: the peak is phase2's, reached inside it and all freed there
"$MPROF" run -o p.data "$P"
ok $? "the program runs under mprof"
is "$(head1 p.data)" \
	"104 allocations of 250777 bytes, 103 frees of 250000 bytes, 777 bytes kept, peak 150777 bytes live" \
	"the header: 777 bytes kept, peak 150777 (phase2's 3 x 50000 and main's 777)"
is "$(table p.data)" "peak bytes (%) objects kept bytes path
150000 (99) 3 0 main > phase2 > take
777 ( .) 1 777 main > take" \
	"HEAP PEAK: phase2 held 150000 bytes in 3 objects, main 777 in 1; phase1 nothing"
is "$("$MPROF" export --format folded --counter peak_space "$P" p.data | sort)" "main;phase2;take 150000
main;take 777" "export --counter peak_space: each stack's bytes at the peak"
is "$("$MPROF" export --format folded --counter peak_space "$P" p.data | total)" 150777 \
	"peak_space adds up to the peak"
is "$("$MPROF" export --format folded --counter peak_objects "$P" p.data | sort | tr '\n' ,)" \
	"main;phase2;take 3,main;take 1," "export --counter peak_objects: the objects at the peak"
is "$("$MPROF" dump p.data | awk '$1 == "counter" && $2 ~ /^peak/ { print $2, $3 }' | tr '\n' ,)" \
	"peak_bytes bytes,peak_objects count," "the data file names the two peak counters"
if [ -x "$B/tools/pprof" ]; then
	"$MPROF" export --format pprof -o p.pb.gz "$P" p.data
	is "$("$B/tools/pprof" -raw -sample_index=peak_space p.pb.gz 2> /dev/null |
		awk '/^Samples:/ { s = 1; getline; next } /^Locations/ { s = 0 }
		     s && /:/ { split($0, a, ":"); split(a[1], v, " "); t += v[6] } END { print t }')" 150777 \
		"pprof reads peak_space: 150777"
else
	absent 1 "no $B/tools/pprof (make check builds it)"
fi
is "$("$MPROF" -nopeaktable "$P" p.data | grep -c 'HEAP PEAK')" 0 "-nopeaktable leaves the table out"
# -depth groups the peak's chains as the leak table's
is "$("$MPROF" -depth 1 "$P" p.data | awk '/^-+ HEAP PEAK/ { t = 1; next } /^-+ / { t = 0 } t && /take$/' |
	sed 's/  */ /g; s/^ //')" "150777 (**) 4 777 ... > take" "-depth 1: one chain, take, holds the whole peak"

# --- realloc: the old block's free, then the new block
"$MPROF" run -o r.data "$P" realloc
is "$(head1 r.data)" \
	"4 allocations of 100777 bytes, 3 frees of 100000 bytes, 777 bytes kept, peak 60777 bytes live" \
	"realloc: 30000 grown to 60000 then shrunk to 10000: peak 60777"
is "$(table r.data | sed -n 2p)" "60000 (98) 1 0 main > grow" "realloc: grow held one object of 60000 at the peak"

# --- two threads, each change past the slack: exact.  pthread_create's own
# allocations stay live (the rest of what is kept besides main's 777):
# MPROF_FREERES=0 keeps them to the end (libc's __libc_freeres would free
# the joined thread's, after the peak), so the peak is 180000 + kept.
export MPROF_FREERES=0
"$MPROF" run -o t.data "$P" threads 40000
k=$(kept t.data)
is "$(peak t.data)" "$((k + 180000))" "threads: peak = 3 x 40000 held by the thread + 2 x 30000 by main + what is kept ($k)"
like "$(table t.data)" '^120000 \(66\) 3 0 .*start_thread > hold > take$' "threads: the thread's chain held 120000 in 3 objects"
like "$(table t.data)" '^60000 \(33\) 2 0 main > threads > beside > take$' "threads: main's chain 60000 in 2"
is "$("$MPROF" export --format folded --counter peak_space "$P" t.data | total)" "$(peak t.data)" \
	"threads: peak_space adds up to the peak"

# --- the thread holds 3 x 1000 back from main's view (below the slack):
# the peak is within the slack of the true one, kept + 63000; exact with
# MPROF_PEAK_SLACK=0.
"$MPROF" run -o s.data "$P" threads 1000
k=$(kept s.data) p=$(peak s.data)
ok $([ "$p" -le $((k + 63000)) ] && [ "$p" -gt $((k + 63000 - 4096)) ]; echo $?) \
	"threads, 3 x 1000 in the thread: peak $p within 4096 of $((k + 63000))"
is "$("$MPROF" export --format folded --counter peak_space "$P" s.data | total)" "$p" \
	"the stacks' shares still add up to the peak"
MPROF_PEAK_SLACK=0 "$MPROF" run -o z.data "$P" threads 1000
k=$(kept z.data)
is "$(peak z.data)" "$((k + 63000))" "MPROF_PEAK_SLACK=0: exact, $((k + 63000))"
like "$(table z.data)" '^3000 \( 4\) 3 0 .*start_thread > hold > take$' \
	"MPROF_PEAK_SLACK=0: the thread's 3 x 1000 are in the peak"

# --- 4 threads of 1000 x 100 bytes each, all held at once: each publishes
# every 4096 bytes and holds the rest back (under 4096 a thread, 5 threads
# with main's); exact with MPROF_PEAK_SLACK=0.
"$MPROF" run -o m.data "$P" many
k=$(kept m.data) p=$(peak m.data)
ok $([ "$p" -le $((k + 400000)) ] && [ "$p" -gt $((k + 400000 - 5 * 4096)) ]; echo $?) \
	"4 threads: peak $p within 5 x 4096 of $((k + 400000))"
MPROF_PEAK_SLACK=0 "$MPROF" run -o m0.data "$P" many
is "$(peak m0.data)" "$(($(kept m0.data) + 400000))" "4 threads, MPROF_PEAK_SLACK=0: exact"
unset MPROF_FREERES

# --- a random walk of 40 stacks (tests/progs/peakrand.c) against the
# program's own count of the peak and of each stack's bytes and objects
# then: the heap climbs past its old peak and falls back again and again,
# so stacks settle their shares after publishes of new peaks and of the
# slack, many times over.  With MPROF_PEAK_SLACK=0 every event publishes;
# with 3 threads taking turns under a lock, slack 0 is exact and the
# default within 3 x 4096 bytes.  The program counts its 40 sites' stacks
# (pthread_create's own allocations are live too).  by_site FILE COUNTER:
# "depth value," by site; rpeak FILE: the header's peak.
by_site() {
	"$MPROF" export --format folded --counter "$2" "$T/peakrand" "$1" |
		awk '{ n = gsub(/;site/, ";site"); if (n) v[n - 1] += $NF }
		     END { for (k in v) if (v[k]) print k, v[k] }' | sort -n | tr '\n' ,
}
rpeak() { "$MPROF" "$T/peakrand" "$1" | sed -n '1s/.*, peak \([0-9]*\) bytes live$/\1/p'; }
want_site() { awk -v c="$2" '$1 == "site" && $c { print $2, $c }' "$1" | sort -n | tr '\n' ,; }
walk() { # name slack seed events threads
	MPROF_PEAK_SLACK=$2 "$MPROF" run -o "$1.data" "$T/peakrand" "$3" "$4" ${5-} > "$1.truth"
	w=$(sed -n 's/^peak //p' "$1.truth")
	is "$(by_site "$1.data" peak_space | tr , '\n' | total)/$(by_site "$1.data" peak_space)/$(by_site "$1.data" peak_objects)" \
		"$w/$(want_site "$1.truth" 3)/$(want_site "$1.truth" 4)" \
		"random walk $1 ($4 events, seed $3${5:+, ${5-} threads}, slack $2): peak $w and every stack's bytes and objects at it"
}
walk w1 4096 1 100000
walk w2 4096 2 400000
walk w3 4096 3 60000
walk w4 0 4 60000
walk w5 0 5 60000 3
is "$("$MPROF" export --format folded --counter peak_space "$T/peakrand" w2.data | total)/$(rpeak w2.data)" \
	"$(sed -n 's/^peak //p' w2.truth)/$(sed -n 's/^peak //p' w2.truth)" \
	"random walk, one thread: the header's peak is the program's, and the shares add up to it"
"$MPROF" run -o w6.data "$T/peakrand" 6 60000 3 > w6.truth
w=$(sed -n 's/^peak //p' w6.truth) p=$(by_site w6.data peak_space | tr , '\n' | total)
ok $([ "$p" -le $((w + 3 * 4096)) ] && [ "$p" -ge $((w - 3 * 4096)) ]; echo $?) \
	"random walk, 3 threads, default slack: the sites' $p at the peak within 3 x 4096 of $w"
is "$("$MPROF" export --format folded --counter peak_space "$T/peakrand" w6.data | total)" "$(rpeak w6.data)" \
	"random walk, 3 threads: the shares add up to the peak"

# --- mprof_restart: FILE's profile and peak begin at the restart
LD_PRELOAD=$LIBMPROF/libmprof.so MPROF_OUT=r1.data "$P" restart r2.data
ok $? "restart: runs"
is "$(head1 r2.data)" \
	"100 allocations of 100000 bytes, 100 frees of 100000 bytes, 0 bytes kept, peak 100000 bytes live" \
	"restart: the new profile's peak is phase1's 100000, not the old phase2's"
is "$(table r2.data | sed -n 2p)" "100000 (**) 100 0 main > phase1 > take" "restart: phase1 held it in 100 objects"

# --- fork: the child's profile goes on from its parent's, peak included
"$MPROF" run -o f.data "$P" fork
is "$(peak f.data)" 150777 "fork: the parent's peak, 150777"
c=$(ls f.data.* 2> /dev/null | head -n 1)
is "$(peak "$c")" 200777 "fork: the child's peak, 200777: its 200000 and the 777 it inherited"
is "$("$MPROF" export --format folded --counter peak_space "$P" "$c")" "main;take 200777" \
	"fork: the child's peak is all main's (777 and 200000)"

# --- a file from before issue 15: no peak counters, read as before
"$B/tests/hostile" chain old.data 3
is "$("$MPROF" old.data | head -n 1 | sed 's/.*): //')" \
	"4 allocations of 64 bytes, 0 frees of 0 bytes, 64 bytes kept" "an old file: the header without a peak"
is "$("$MPROF" old.data | grep -c 'HEAP PEAK')" 0 "an old file: no peak table"
"$MPROF" export --format folded --counter peak_space old.data > o 2> e
like "$?/$(cat e)" '^2/.*no counter .peak_space. \(it has alloc_objects, alloc_space, inuse_objects, inuse_space\)$' \
	"an old file: export has no peak_space, and says which counters it has"
is "$("$MPROF" export --format folded --counter inuse_space old.data | total)" 64 "an old file: its other counters export as before"
is "$("$MPROF" merge p.data p.data -o pp.data && peak pp.data)" 301554 \
	"merge adds peaks up: two runs' 150777"
done_testing
