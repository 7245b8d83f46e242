# The profile of a program image that execs: an image that spent 10 ms
# of CPU time or more (since its exec, or the fork that made its process)
# has its profile written aside as it goes, FILE.exec1 (FILE.PID.exec1
# in a forked child; .exec2 for the next image of the process that does
# the same), while the image it execs writes FILE as before.  Before,
# the new image's profile replaced it: a shell's loop before `exec prog`
# was lost.  An image that execs at once (a shell's or make's child)
# writes nothing more; a failed exec's file is removed, and the image
# records on.  tests/progs/rt_execs.c: each stage N:SIZE:MS allocates N
# objects of SIZE bytes and burns MS ms of CPU before it execs the next.
. "$(dirname "$0")/../lib.sh"
plan 23
cd "$T" || exit 1
CPPROF=$B/bin/cpprof
CFPROF=$B/bin/cfprof
cc -g -O0 -o execs "$TOP/tests/progs/rt_execs.c" || exit 1
printf 'not a program\n' > notexec && chmod +x notexec

# sizes FILE: "SIZE=COUNT" of the bins of 55, 56, 66 and 77 bytes in FILE.
sizes() {
	"$MPROF" dump "$1" 2>&1 |
		awk '$1 == "bin" && ($2 == 55 || $2 == 56 || $2 == 66 || $2 == 77) { printf "%s%s=%s", s, $2, $3; s = " " }'
}
info() { "$MPROF" dump "$2" | sed -n "s/^info $1 //p"; }
files() { ls "$@" 2>/dev/null | tr '\n' ' '; }

# 1-5: three images, the first two burning 60 ms each.
out=$("$MPROF" run -o a.data ./execs 300:55:60 200:66:60 7:77:0 2> a.err)
is "$out/$(cat a.err)/$(files a.data*)" "//a.data a.data.exec1 a.data.exec2 " \
	"chain: the last image's file, and one aside for each image before; nothing said"
is "$(sizes a.data)/$(sizes a.data.exec1)/$(sizes a.data.exec2)" "77=7/55=300/66=200" \
	"chain: each file holds its own image's allocations only"
is "$(info reason a.data.exec1)/$(info ended a.data.exec1)/$(info cmdline a.data.exec2)" \
	"exec/exec'd ./execs/./execs 200:66:60 7:77:0" "chain: INFO says the image exec'd, and which image it was"
like "$("$MPROF" a.data.exec1 | head -1)" "^mprof: \\./execs 300:55:60 200:66:60 7:77:0 \\(pid [0-9]+; exec'd \\./execs\\): " \
	"chain: the tables' first line says how the image ended"
# With --leaks, a file aside has no scan, and says why; the last image's
# end has its scan.
"$MPROF" run --leaks -o lk.data ./execs 300:55:60 7:77:0 > /dev/null 2>&1
is "$(info leak_scan lk.data.exec1)/$(info leak_scan lk.data)" "skipped: written as the program exec'd another/complete" \
	"--leaks: the image that exec'd, no scan and why; the last one's, complete"
"$MPROF" export --format pprof -o a.pb.gz a.data.exec1 && [ -s a.pb.gz ]
ok $? "chain: the file aside exports"

# 6: an image that execs at once writes nothing aside.
rm -f a.data*
"$MPROF" run -o a.data ./execs 300:55:0 7:77:0
is "$(files a.data*)/$(sizes a.data)" "a.data /77=7" "quick: no file aside for an image that spent under 10 ms"

# 7-8: a failed exec (ENOEXEC): its file aside goes, the image records on,
# and the exec after it gets the first number.
rm -f a.data*
out=$("$MPROF" run -o a.data ./execs 300:55:60:fail 7:77:0)
is "$out/$(files a.data*)" "exec failed: errno 8/a.data a.data.exec1 " \
	"fail: the program sees its errno; one file aside, for the exec that worked"
is "$(sizes a.data.exec1)/$(sizes a.data)" "55=300 56=300/77=7" \
	"fail: the image recorded on after its failed exec"

# 9-10: a forked child works, then execs.
rm -f a.data*
out=$("$MPROF" run -o a.data ./execs 0:1:0:fork 300:55:60 7:77:0)
kid=$(echo "$out" | awk '$1 == "child" { print $2 }')
is "$(files a.data*)" "a.data a.data.$kid a.data.$kid.exec1 " "fork: the child's image writes FILE.PID.exec1"
is "$(sizes a.data)/$(sizes a.data.$kid.exec1)/$(sizes a.data.$kid)" "/55=300/77=7" \
	"fork: the child's image's allocations, then the exec'd image's"

# 11-12: the exec'd image dies by SIGKILL: the launcher writes its file
# from the keep, and the file aside stays.
rm -f a.data*
"$MPROF" run -o a.data ./execs 300:55:60 7:77:0:kill 2> k.err
is "$?/$(info reason a.data)/$(sizes a.data)" "137/salvage/77=7" \
	"kill: the exec'd image's profile, from the keep"
is "$(sizes a.data.exec1)/$(info ended a.data.exec1)" "55=300/exec'd ./execs" \
	"kill: the image before's, aside"

# 13: the launcher's line names the image that died (before: sh).
"$MPROF" run -o s.data sh -c 'exec ./execs 7:77:0:kill' 2> s.err
like "$(cat s.err)" "^mprof: run: \\./execs ended without saving its profile \\(killed by signal 9 \\(SIGKILL\\)\\); written to .*/s\\.data from its keep\$" \
	"kill: the launcher names the image that died, not the one it started"

# 14: without the launcher (the library preloaded), the same.
rm -f a.data*
MPROF_OUT=a.data LD_PRELOAD=$LIBMPROF/libmprof.so ./execs 300:55:60 7:77:0
is "$(files a.data*)/$(sizes a.data.exec1)/$(sizes a.data)" "a.data a.data.exec1 /55=300/77=7" \
	"preloaded: the file aside, and the last image's"

# 15: the sampled monitor too.
rm -f a.data*
"$MPROF" run --sample=1 -o a.data ./execs 300:55:60 7:77:0
is "$(files a.data*)/$(info sample_bytes a.data.exec1)" "a.data a.data.exec1 /1" \
	"sampled: the file aside"

# 16-18: cpprof.
"$CPPROF" record -o c.data ./execs 300:55:60 7:77:0
prof=$("$CPPROF" -c 'function' c.data.exec1)
burn=$(printf '%s\n' "$prof" | awk '$2 == "burn" { print $1 }')
ok $(awk -v b="${burn:-0}" 'BEGIN { exit !(b >= 0.9) }'; echo $?) \
	"cpprof: the image before the exec, aside: burn ${burn:-none} of its samples (>= 0.9)"
like "$prof" "^run ended: exec'd \\./execs\$" "cpprof: it says how the image ended"
rm -f c.data*
"$CPPROF" record -o c.data ./execs 300:55:0 7:77:0
is "$(files c.data*)" "c.data " "cpprof: nothing aside for an image that execs at once"

# 19-21: cfprof, the program built with -finstrument-functions.
cc -O2 -g -finstrument-functions -o execs_cf "$TOP/tests/progs/rt_execs.c" || exit 1
"$CFPROF" record -o f.data ./execs_cf 300:55:60 7:77:0
is "$(files f.data*)" "f.data f.data.exec1 " "cfprof: the file aside, and the last image's"
aside=$("$CFPROF" f.data.exec1)
is "$(printf '%s\n' "$aside" | awk '$NF == "burn" || $NF == "stage_alloc" { print $NF, $3 }' | sort | tr '\n' ' ')" \
	"burn 1 stage_alloc 1 " "cfprof: the image before's calls, aside"
like "$aside" "^run ended: exec'd \\./execs_cf\$" "cfprof: it says how the image ended"
# 22: a failed exec's save, then the exit's: a direct recursion's calls
# (counted on its entry's node, summed by each save) are counted once.
rm -f f.data*
"$CFPROF" record -o f.data ./execs_cf 1:8:60:fail > /dev/null
is "$(files f.data*)/$("$CFPROF" -p ./execs_cf f.data | awk '$NF == "countdown" { print $3 }')" "f.data /202" \
	"cfprof: after a failed exec's save, countdown's 2 x 101 calls counted once"
