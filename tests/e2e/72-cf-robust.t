# cfprof record never changes what the program does and stays exact where
# the hooks' logical stack is hard to keep: a forked child writes FILE.PID
# with its own calls only; recursion 100000 deep (twice, in a thread with
# a 64 MB stack) keeps exact counts, passes the exit status through (3),
# and the file stays bounded (the logical tree is capped, counts are not),
# and killed at the bottom, the profile from the keep has every call;
# signal handlers run instrumented code while the main path does (a timer
# every 100 us, and raise): no crash, the output unchanged, the main
# path's counts exact; instrumented functions on a coroutine's stack
# (swapcontext, gcc and clang): counts exact; a program linked with
# -lcfprof instead of preloaded.
. "$(dirname "$0")/../lib.sh"
plan 35
CFPROF=$B/bin/cfprof
CPPROF=$B/bin/cpprof
cd "$T" || exit 1

. "$TOP/tests/cf.sh"

# --- cf_fork: the child calls child_work 2000 times, the parent parent_work 1500
cf_build cf_fork cf_fork.c || exit 1
./cf_fork > fk.bare 2>&1
"$CFPROF" record -o fk.data ./cf_fork > fk.out 2> fk.err
st=$?
child=$(truth fk.out child_pid)
is "$st/$(grep -v child_pid fk.out)/$(cat fk.err)" "0/$(grep -v child_pid fk.bare)/" \
	"fork: exit 0, the program's output, nothing on stderr"
is "$(ls fk.data*)" "$(printf 'fk.data\nfk.data.%s' "$child")" "fork: the child writes FILE.PID"
p=$(info fk.data pid)
is "$(info fk.data.$child pid)/$([ -n "$p" ] && [ "$p" != "$child" ] && echo parent)" "$child/parent" \
	"fork: mprof dump reads both files: FILE.PID is the child's, FILE the parent's"
flat=$("$CFPROF" -p ./cf_fork fk.data.$child)
is "$(flat "$flat" child_work 3)" 2000 "fork: child's file: child_work called 2000 times"
is "$(flat "$flat" parent_work 3)" "" "fork: child's file: none of the parent's calls"
g=$("$CFPROF" -q ./cf_fork fk.data.$child)
is "$(graph "$g" child_work callers)" "2000/2000 spawn" "fork: child's file: called from spawn, where fork returned"
flat=$("$CFPROF" -p ./cf_fork fk.data)
is "$(flat "$flat" parent_work 3)/$(flat "$flat" spawn 3)" "1500/1" "fork: parent's file: parent_work called 1500 times, spawn once"
is "$(flat "$flat" child_work 3)" "" "fork: parent's file: none of the child's calls"

# --- cf_spawn: the shells and tools it runs, not instrumented, write no
# file (make's 300 jobs wrote 302 files of no calls); its own does.  Nor
# does the launcher write one from the keep of a forked child that exec'd
# a shell (gawk's pipe: `cfprof merge FILE FILE.*` refused its file).
cf_build cf_spawn cf_spawn.c || exit 1
"$CFPROF" record -o sp.data ./cf_spawn > sp.out 2> sp.err
is "$?/$(cat sp.out)/$(cat sp.err)/$(ls sp.data*)" "0/work 100//sp.data" \
	"spawn: the shells and tools it ran write no file; its own is there, nothing on stderr"
is "$(flat "$("$CFPROF" -p ./cf_spawn sp.data)" work 3)" 100 "spawn: work called 100 times"
# The same shells killed (SIGKILL): the launcher writes no file from their
# keeps either (a keep with no thread's tree).  The ones system() ran had
# no keep, and wrote nothing, before each image had one.
mkdir spk
"$CFPROF" record -o spk/k.data ./cf_spawn kill > spk.out 2> spk.err
is "$?/$(cat spk.out)/$(cat spk.err)/$(ls spk)" "0/work 100//k.data" \
	"spawn, the shells killed: no file written from their keeps; the program's own is there"

# --- cf_deep: recursion 100000 deep, twice, then 1000 calls of leaf
cf_build cf_deep cf_deep.c -pthread || exit 1
record deep ./cf_deep
is "$(cat deep.err)" "" "deep: nothing on stderr"
flat=$("$CFPROF" -p ./cf_deep deep.data)
is "$(flat "$flat" down 3)/$(flat "$flat" leaf 3)/$(flat "$flat" run 3)" \
	"$(truth deep.bare down)/$(truth deep.bare leaf)/1" "deep: down, leaf, run called 200002, 1000 and 1 times"
g=$("$CFPROF" -q ./cf_deep deep.data)
is "$(graph "$g" down primary)" "2+200000" "deep: down called 2+200000"
is "$(graph "$g" leaf callers)" "1000/1000 run" "deep: once the recursion returned, leaf is called from run (1000/1000)"
sz=$(wc -c < deep.data)
ok $([ "$sz" -lt 1048576 ]; echo $?) "deep: the file is bounded by the capped tree, not the depth ($sz bytes)"
"$CPPROF" -c 'threshold 0; body; down run' ./cf_deep deep.data > deep.cp 2>&1
ok $? "deep: cpprof reads the file (body, down run)"

# Killed at the bottom of the second recursion: the profile comes from the
# keep (lib/run/salvage_cfprof.c), with the 200001 calls running, counted in
# the recursion's entry (tree.h: rcalls), as the save counts them.
"$CFPROF" record -o deepk.data ./cf_deep kill > deepk.out 2> /dev/null
is "$?/$(info deepk.data ended)" "137/killed" "deep, killed at the bottom: SIGKILL's status, INFO ended from the keep"
g=$("$CFPROF" -q ./cf_deep deepk.data)
is "$(graph "$g" down primary)" "2+$(($(truth deepk.out down) - 2))" "deep, killed at the bottom: down called 2+200000, as the program counted"

# --- cf_sig: SIGALRM every 100 us and raise(SIGUSR1), both handlers instrumented
cf_build cf_sig cf_sig.c || exit 1
./cf_sig > sig.bare 2> sig.bare.err
"$CFPROF" record -o sig.data ./cf_sig > sig.out 2> sig.err
st=$?
is "$st/$(grep -v async_work sig.out)/$(cat sig.err)" "0/$(grep -v async_work sig.bare)/" \
	"sig: exit 0, the program's output (but for the count of timer signals), nothing on stderr"
flat=$("$CFPROF" -p ./cf_sig sig.data)
is "$(flat "$flat" main_work 3)" "$(truth sig.bare main_work)" "sig: main_work called $(truth sig.bare main_work) times"
is "$(flat "$flat" sync_work 3)" "$(truth sig.bare sync_work)" \
	"sig: sync_work (from raise, never inside a hook) called $(truth sig.bare sync_work) times"
n=$(flat "$flat" async_work 3) want=$(truth sig.out async_work)
ok $([ "${n:-0}" -le "${want:-0}" ]; echo $?) "sig: async_work counted at most as often as it ran (${n:-0} <= ${want:-?})"
g=$("$CFPROF" -q ./cf_sig sig.data)
is "$(graph "$g" main_work callers)" "500000/500000 main" "sig: main_work's caller is main, 500000/500000"
# --- cf_coro: a generator on its own stack (makecontext/swapcontext)
for cc in cc clang; do
	command -v $cc > /dev/null || { absent 3 "coro-$cc: no $cc (scripts/install-deps.sh installs gcc and clang)"; continue; }
	CC=$cc cf_build cf_coro_$cc cf_coro.c || exit 1
	record coro-$cc ./cf_coro_$cc 20000
	is "$(cat coro-$cc.err)" "" "coro-$cc: nothing on stderr"
	flat=$("$CFPROF" -p ./cf_coro_$cc coro-$cc.data)
	is "$(flat "$flat" generator 3)/$(flat "$flat" produce 3)/$(flat "$flat" step 3)/$(flat "$flat" consume 3)" \
		"1/20000/20000/20000" "coro-$cc: generator, produce, step, consume called 1, 20000, 20000, 20000 times"
done

# --- cf_sevthread: 3000 SIGEV_THREAD timer expiries, each on a thread glibc
# makes with its internal pthread_create.  The sampler never sets such a
# thread up, so its release at exit never came: each kept its 24 MiB of
# frames, its table and its pairs (20,000 of them: 540 MB resident, 2,600
# mappings).  The calls are counted all the same.
cf_build cf_sevthread cf_sevthread.c -pthread || exit 1
"$CFPROF" record -o sev.data ./cf_sevthread 3000 > sev.out 2> sev.err || exit 1
is "$(truth sev.out handle)/$(flat "$("$CFPROF" -p ./cf_sevthread sev.data)" handle 3)" "3000/3000" \
	"timer threads glibc makes: handle() counted 3000 times"
ok $([ "$(truth sev.out maps)" -lt 40 ] && [ "$(truth sev.out vmsize_kb)" -lt 1048576 ]; echo $?) \
	"... and each one's state released at its exit ($(truth sev.out maps) mappings, $(truth sev.out vmsize_kb) kB more after 3000; 372 and 74 GB before)"

# --- linked with -lcfprof, not preloaded: CFPROF_OUT names the file
${CC:-cc} -O2 -g -finstrument-functions -o cf_linked "$TOP/tests/progs/cf_calls.c" -L"$B/lib" \
	-lcfprof -Wl,-rpath,"$B/lib" || exit 1
./cf_linked > linked.out 2> linked.err
st=$?
is "$st/$(cat linked.err)/$(ls cfprof.data 2> /dev/null)" "0//cfprof.data" \
	"-lcfprof: exit 0, nothing on stderr, ./cfprof.data written without cfprof record"
flat=$("$CFPROF" -p ./cf_linked cfprof.data)
is "$(flat "$flat" square 3)/$(flat "$flat" cmp 3)" "$(truth linked.out square)/$(truth linked.out cmp)" \
	"-lcfprof: square and cmp counted as the program counted them"
done_testing
