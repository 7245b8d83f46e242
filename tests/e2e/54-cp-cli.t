# cpprof list and the argument checks of cpprof record: a bad argument is
# one line on stderr and exit status 2, before anything runs; --help is
# the usage on standard output, exit 0 (issue 22, item 8).
. "$(dirname "$0")/../lib.sh"
plan 46
CPPROF=$B/bin/cpprof
cd "$T" || exit 1

out=$("$CPPROF" list); ok $? "list: exit 0"
like "$out" '^  cpu +ns +1ms +thread CPU time; (perf task-clock|POSIX CPU-time timer)' "list: cpu, its gtick and default"
like "$out" '^  read-bytes +bytes +4096 ' "list: read-bytes"
out=$(CPPROF_NO_PERF=1 "$CPPROF" list)
like "$out" '^  cpu .*POSIX CPU-time timer, fires at scheduler ticks \(perf_event_open disabled by CPPROF_NO_PERF\)$' \
	"list without perf: cpu through timers, and why"
like "$out" '^not available here:$' "list without perf: a section of what is missing"
like "$out" '^  page-faults +perf_event_open disabled by CPPROF_NO_PERF$' "list without perf: page-faults, and why"

# bad CMD...: exit 2, exactly one line on stderr, nothing run.
bad() {
	"$CPPROF" record "$@" touch "$T/ran" > /dev/null 2> "$T/err"
	st=$?
	is "$st/$(wc -l < "$T/err")/$([ -e "$T/ran" ] && echo ran)" "2/1/" "record $*: exit 2, one line"
}
bad -e nosuch
like "$(cat "$T/err")" "^cpprof: record: unknown resource 'nosuch' \(cpprof list shows them\)$" "unknown resource: named"
bad -e cpu:0
bad -e cpu:1xs
bad -e read-bytes:-5
bad -e cpu,nosuch
like "$(cat "$T/err")" "^cpprof: record: unknown resource 'nosuch' \(cpprof list shows them\)$" "-e cpu,nosuch: the unknown one named"
bad -e cpu,
# One interval a resource: a second, different one is refused, where it
# used to replace the first without a word.
bad -e cpu:1ms,cpu:2ms
like "$(cat "$T/err")" "^cpprof: record: -e names cpu twice, with different intervals" "-e cpu:1ms,cpu:2ms: refused, named"
bad -e syscalls:5 -e syscalls:6
# -e takes a list, as perf's does: each resource with its own interval.
"$CPPROF" record -e cpu:2ms,syscalls:10 -o "$T/list.data" sh -c 'i=0; while [ $i -lt 300 ]; do i=$((i+1)); /bin/true; done' 2> "$T/err"
res=$("$CPPROF" -c resources "$T/list.data" 2>&1 | awk '{ sub(/^\* /, ""); print $1, $(NF - 1) }' | tr '\n' ' ')
is "$?/$res" "0/cpu 2000000 syscalls 10 " "-e cpu:2ms,syscalls:10: both resources, each at its interval"
bad --frobnicate
"$CPPROF" record > /dev/null 2> "$T/err"
is "$?/$(cat "$T/err")" "2/cpprof: record: no program given (usage: cpprof record [-e RESOURCE[:INTERVAL]]... [-o FILE] [--no-random] [--] PROG [ARGS...])" \
	"no program: usage"
for v in record list; do
	"$CPPROF" $v --help > "$T/out" 2> "$T/err"
	is "$?/$(head -1 "$T/out" | awk '{ print $1, $2, $3 }')/$(wc -c < "$T/err")" "0/usage: cpprof $v/0" \
		"cpprof $v --help: the usage on standard output, exit 0"
done
like "$(cat "$T/out")" "^Lists the resources" "and says what the verb does"
# The command loop's threshold takes a fraction, not anything strtod does.
"$CPPROF" record -o "$T/t.data" true 2> /dev/null
"$CPPROF" -c 'threshold nan; threshold 0x1p-2' "$T/t.data" > /dev/null 2> "$T/err"
is "$?/$(cat "$T/err")" "2/cpprof: threshold: bad argument 'nan' (help shows the usage)" \
	"threshold nan: a bad argument (a hexadecimal fraction is one)"
# A resource the file lacks: which it has (it said "bad argument 'real'"
# and sent the user to the usage); resource alone lists them.
"$CPPROF" -c 'resource real; function' "$T/t.data" > "$T/out" 2> "$T/err"
is "$?/$(cat "$T/err")" "2/cpprof: resource: this profile has no resource 'real'; it has: cpu (cpprof record -e NAME samples another)" \
	"resource real in a cpu profile: says which it has"
"$CPPROF" -c 'resource' "$T/t.data" > "$T/out" 2> "$T/err"
like "$?/$(cat "$T/out")$(cat "$T/err")" '^0/\* cpu +CPU Time +[0-9]+ samples' "resource alone: lists the resources"
# No file named and none of the defaults here: the message says what to give.
mkdir -p "$T/nothing" && (cd "$T/nothing" && "$CPPROF" -c down) > /dev/null 2> "$T/err"
is "$?/$(cat "$T/err")" "2/cpprof: no cpprof.data or mprof.data here: give the profile's file (cpprof record PROG writes cpprof.data)" \
	"no profile here: both default names in the message, and how to make one"
"$CPPROF" record -o "$T/x.data" "$T/no/such/prog" 2> "$T/err"
is "$?/$(cat "$T/err")" "127/cpprof: record: cannot run $T/no/such/prog: No such file or directory" "a program that cannot run: 127"
mkdir -p "$T/adir"
"$CPPROF" record -o "$T/x.data" "$T/adir" 2> "$T/err"
is "$?/$(cat "$T/err")" "126/cpprof: record: cannot run $T/adir: Permission denied" "a program found but not runnable (a directory): 126, as shells say"
# An output file whose directory is not there: said before the run (the
# whole program ran, then the save failed, in two lines), exit 2.
rm -f "$T/ran"
"$CPPROF" record -o "$T/no/such/dir/x.data" sh -c "touch $T/ran" 2> "$T/err"
is "$?/$(cat "$T/err")/$([ -e "$T/ran" ] && echo ran)" "2/cpprof: record: cannot write $T/no/such/dir/x.data: $T/no/such/dir: No such file or directory/" \
	"-o in no directory: exit 2, one line, before the program runs"
mkdir -p "$T/adir2"
"$CPPROF" record -o "$T/adir2" sh -c "touch $T/ran" 2> "$T/err"
is "$?/$(cat "$T/err")/$([ -e "$T/ran" ] && echo ran)" "2/cpprof: record: cannot write $T/adir2: it is a directory (-o names the file)/" \
	"-o a directory: exit 2, one line, before the program runs"

# A program the sampler cannot enter (statically linked): said, and its
# exit status still passed through.
printf 'int main(void) { return 4; }\n' > "$T/st.c"
if cc -static -o "$T/st" "$T/st.c" 2> /dev/null; then
	"$CPPROF" record -o "$T/st.data" "$T/st" 2> "$T/err"
	is "$?/$(cat "$T/err")" "4/cpprof: record: $T/st wrote no profile to $T/st.data ($T/st is statically linked: no loader runs to preload libcpprof.so)" \
		"a static program: no profile, said so; exit status 4"
else
	absent 1 "no static libc to link with (libc6-dev, which scripts/install-deps.sh installs)"
fi

# Installed: cpprof record finds libcpprof.so in ../lib.
make -s -C "$TOP" install PREFIX="$T/inst" B="$B" > /dev/null 2>&1
ok $([ -f "$T/inst/lib/libcpprof.so" ] && [ -f "$T/inst/share/man/man1/cpprof.1" ]; echo $?) "make install: libcpprof.so and cpprof.1"
(cd "$T" && "$T/inst/bin/cpprof" record -e read-bytes:1 -o i.data cat /dev/null && [ -f i.data ]); ok $? "installed cpprof record finds its sampler (the data file is written)"
# A stripped program: main has no name.  down and up had no default root
# but main (a name the model always knows) and printed an empty profile,
# saying nothing.  Now the function glibc's __libc_start_call_main calls
# is main, named or not; and where no stack shows it (no CFI to walk out
# of the program's code), they say so, with the outermost functions to
# choose from, and exit 2 in batch mode.
cc -O1 -g -o epis "$TOP/tests/progs/cp_epilogue.c" && strip epis || exit 1
"$CPPROF" record -o e.data ./epis > /dev/null
"$CPPROF" -c down ./epis e.data > out 2> err
# (On a loaded machine a sample may land in the loader before main: 0.99.)
rc=$? first=$(sed -n 5p out)
like "$rc/$(cat err)/$(printf '%s' "$first" | sed 's/0x[0-9a-f]*/X/')" '^0//(1\.00000|0\.99[0-9]{3}) \(epis\+X\) \[[0-9]+\]$' \
	"stripped: down's root is main, named by the module and its entry"
like "$(cat out)" '^0\.9[0-9]+ \(epis\+0x[0-9a-f]+ epis\+0x[0-9a-f]+ epis\+0x[0-9a-f]+\) ' \
	"... from it, caller() and leaf(), most of the samples"
cc -O1 -fno-asynchronous-unwind-tables -fno-unwind-tables -o nocfi "$TOP/tests/progs/cp_epilogue.c" &&
	strip nocfi || exit 1
"$CPPROF" record -o n.data ./nocfi > /dev/null
"$CPPROF" -c down ./nocfi n.data > out 2> err
is "$?/$(cat out)/$(wc -l < err)" "2//1" "no CFI: down with no main: nothing on stdout, one line, exit 2"
like "$(cat err)" "^cpprof: no root function: no stack passes through main \(the outermost functions: nocfi\+0x.*\); give one" \
	"no CFI: the line names the outermost functions"
# __libc_start_call_main calls exit too: a stripped program whose every
# sample is in exit's handlers has no main on any stack, and exit is not
# taken for it (it was, in CI: samples past main's return; down printed
# exit's paths, exit 0).
cc -O1 -o xf "$TOP/tests/progs/cp_exitflush.c" && strip xf || exit 1
(sleep 0.3) | "$CPPROF" record -e real -o x.data ./xf || exit 1
"$CPPROF" -c down ./xf x.data > out 2> err
is "$?/$(cat out)/$(grep -c 'no stack passes through main' err)" "2//1" \
	"exit's paths only: no root is taken for main (exit is libc's, not the program's)"
like "$("$CPPROF" -c 'down exit' ./xf x.data)" '^1\.00000 \(exit __run_exit_handlers getchar ' \
	"... and they are there, from exit"
# A profile with no sample at all: down is empty, as function is, not an
# error that asks for a root no stack could have.
"$CPPROF" record -e read-bytes -o none.data true || exit 1
"$CPPROF" -c down none.data > out 2> err
is "$?/$(sed -n 2p out)/$(cat err)" "0/0 samples, sampled every 4096 gticks/" "no sample: down prints an empty profile, exit 0"
cc -O1 -pthread -o stripped "$TOP/tests/progs/cp_threads.c" && strip stripped || exit 1
"$CPPROF" record -o s.data ./stripped > /dev/null
"$CPPROF" -c 'down main' ./stripped s.data > out 2> err
like "$?/$(cat err)" "^2/cpprof: no function named 'main' in this profile \\(the program has no symbols: its main is stripped\\+0x[0-9a-f]+, the default root\\)\$" \
	"stripped: down main: no such function, said, and which one is main"
main=$(sed -n 's/.*its main is \([^,]*\),.*/\1/p' err)
out=$("$CPPROF" -c "down $main" ./stripped s.data)
like "$out" "^0\\.[0-9]+ \\($(printf %s "$main" | sed 's/+/\\+/')\\) \\[[1-9][0-9]*\\]\$" \
	"... and down that function shows main's samples"
# diff's root is down's: the stripped main, not "main" (an empty table,
# exit 0).
"$CPPROF" record -o e2.data ./epis > /dev/null
"$CPPROF" diff ./epis e.data e2.data > out 2> err
like "$?/$(cat err)/$(head -n 1 out)" "^0//Call path fractions of cpu, downward from epis\+0x[0-9a-f]+: " \
	"stripped: diff starts from main, named by the module and its entry"
out=$("$CPPROF" -c 'down start_thread' ./stripped s.data)
like "$out" '^0\.[0-9]+ \(start_thread stripped\+0x[0-9a-f]+\) \[[0-9]+\]$' \
	"stripped: down from a function it names: the threads' paths"
# Commands from an input that is not a terminal and holds none (a script,
# an editor): nothing was printed and nothing said.
"$CPPROF" "$T/t.data" < /dev/null > "$T/out" 2> "$T/err"
is "$?/$(cat "$T/out")/$(cat "$T/err")" "0//cpprof: no commands on standard input (not a terminal): give them with -c, as -c 'function; down'" \
	"no commands on a non-terminal input: one line says how to give them"
done_testing
