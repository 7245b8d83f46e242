# The monitor never changes the program's output or exit status, writes the
# profile to the directory the program started in, and on trouble (here:
# the output file cannot be written) says one line on stderr and nothing more.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/rt.sh"
plan 33

rt_build exit rt_exit.c
mkdir "$T/run" "$T/elsewhere"
cd "$T/run" || exit 1
want=$("$T/exit" 3 2>&1); want_st=$?
is "$want_st" 3 "bare: exit status 3"
for m in $RT_MODES; do
	rm -f "$T"/run/*.data* "$T"/elsewhere/*
	got=$(rt_run $m exit 3 2>&1); st=$?
	is "$st" 3 "$m: exit status unchanged"
	is "$got" "$want" "$m: stdout and stderr unchanged"
	ok $([ -f "$T/run/mprof.data" ]; echo $?) "$m: mprof.data in the current directory"
	is "$(rt_bin mprof.data 32)" "32 5 5 160 160" "$m: the program's allocations"

	rm -f mprof.data
	got=$(rt_run $m exit 0 "$T/elsewhere" 2>&1); st=$?
	is "$st/$got" "0/$want" "$m: exit(0) after chdir: output unchanged"
	ok $([ -f "$T/run/mprof.data" ] && [ -z "$(ls "$T/elsewhere")" ]; echo $?) \
		"$m: mprof.data in the directory the program started in, not the one it ended in"
	rm -f mprof.data
	MPROF_OUT=rel.data rt_run $m exit 0 "$T/elsewhere" >/dev/null 2>&1
	ok $([ -f "$T/run/rel.data" ]; echo $?) "$m: a relative MPROF_OUT is resolved at start"

	got=$(MPROF_OUT="$T/missing/dir/x.data" rt_run $m exit 4 2>&1); st=$?
	is "$st" 4 "$m: unwritable output: exit status unchanged"
	like "$got" "^mprof: cannot write $T/missing/dir/x.data: ENOENT; profiling stopped\$" \
		"$m: one line says why"
	is "$(printf '%s\n' "$got" | grep -v '^mprof: ')" "$want" "$m: and the rest is unchanged"
done
# The line in one write: a server's workers that stop at once share a
# log, and its five parts came out interleaved (nginx's error.log).
if command -v strace > /dev/null; then
	MPROF_OUT="$T/missing/dir/x.data" strace -qq -f -e trace=write -e signal=none -o "$T/st" \
		env LD_PRELOAD="$LIBMPROF/libmprof.so" "$T/exit" 4 > /dev/null 2>&1
	is "$(grep -c 'write(2, "mprof: cannot write ' "$T/st")/$(grep -c 'write(2, "; profiling' "$T/st")" "1/0" \
		"the monitor's line goes to stderr in one write"
else
	absent 1 "strace (scripts/install-deps.sh)"
fi
ok $([ -z "$(ls "$T/run" "$T/elsewhere" | grep '\.tmp\.')" ]; echo $?) "no temporary files left"
done_testing
