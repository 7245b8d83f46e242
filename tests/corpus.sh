# tests/corpus.sh - the corpus tests' way of running a real program
# (tests/e2e/60-corpus.t, 61-corpus-more.t), sourced after lib.sh: each
# case is run bare, then under each tool of $TOOLS, every run bounded by
# `timeout` (CORPUS_TIMEOUT seconds, 120 by default: a hang is a
# failure).  Under each tool the exit status, stdout and stderr must be
# the bare run's, byte for byte; every data file written (forked
# children's FILE.PID too) is read by the tool with exit 0, given the
# program that wrote it; and the profile of the program named names its
# real functions.
#
# cfprof profiles programs built with -finstrument-functions, which no
# case is: as documented (cfprof(1), RECORDING), `cfprof record PROG`
# refuses such an ELF program (exit 2, one line, PROG not run), and runs
# a script that runs one, here $T/run.sh, which execs the case's command:
# the program runs with libcfprof and its sampler inside, identically,
# and its file reads, with 0 calls.
#
# A case whose program the loader runs in secure-execution mode (a
# setuid program run by another user: SECURE=1) ignores LD_PRELOAD: no
# collector enters it, no file is written; it must run as bare, the
# tool's own lines on stderr aside (their text is the launcher's).

CPPROF=$B/bin/cpprof
CFPROF=$B/bin/cfprof
SRC=$TOP/tests/progs/corpus
LIMIT=${CORPUS_TIMEOUT:-120}
# The tools each case runs under (a test may add cfprof after sourcing).
TOOLS="mprof cpprof"

# per_case: the checks of a case: the bare run, then five under each
# tool (four for a SECURE case: no file to read), and cfprof's refusal
# of the program.
per_case() {
	_c=1
	for _t in $TOOLS; do
		if [ -n "$SECURE" ]; then _c=$((_c + 4)); else _c=$((_c + 5)); fi
	done
	case " $TOOLS " in *" cfprof "*) _c=$((_c + 1)) ;; esac
	echo $_c
}

# Nothing of the user's configuration reaches the programs.
export LC_ALL=C GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
unset JAVA_TOOL_OPTIONS _JAVA_OPTIONS JDK_JAVA_OPTIONS NODE_OPTIONS PERL5OPT PYTHONSTARTUP \
	RUBYOPT PHP_INI_SCAN_DIR OCAMLRUNPARAM LUA_INIT LUA_INIT_5_4 TCLLIBPATH
[ -d "$HOME/.cargo/bin" ] && PATH=$PATH:$HOME/.cargo/bin

# The script cfprof record runs the case's command through.
printf '#!/bin/sh\nexec "$@"\n' > "$T/run.sh"
chmod 755 "$T/run.sh"

now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }

# case_off NAME REASON ok|not [COUNT]: the whole case in one verdict,
# COUNT (default per_case) lines: skipped (ok), else failed.
case_off() {
	if [ "$3" = ok ]; then skip "${4:-$(per_case)}" "$1: $2"; else absent "${4:-$(per_case)}" "$1: $2"; fi
}

# missing NAME CMD PKG [COUNT]: true, the case's COUNT lines reported, when
# CMD is not here: failed where Debian has PKG for this machine (then
# install-deps.sh should have installed it), skipped only where it has not.
missing() {
	command -v "$2" > /dev/null 2>&1 && return 1
	if apt-cache policy "$3" 2> /dev/null | grep -q 'Candidate: [0-9]'; then
		case_off "$1" "no $2 here, though package $3 is installable (scripts/install-deps.sh)" not "${4:-$(per_case)}"
	else
		case_off "$1" "no $2 on this machine and no package $3 for it" ok "${4:-$(per_case)}"
	fi
	return 0
}

# run MODE CMD...: one run of the case $C in $T/$C.d, bare or under a tool
# (cfdirect: cfprof record given the command itself), as $AS (a command
# prefix, e.g. setpriv), stdin from $IN, bounded by $LIMIT.  Leaves
# $T/$C.MODE.{out,err} and data files $DD/$C.MODE.data*, status in $st,
# seconds in $dt.  $PREP runs before (in the case's directory), $POST
# after, with $mode set.
run() {
	mode=$1; shift
	_p=$T/$C.$mode _d=$DD/$C.$mode.data
	case $mode in
	mprof) set -- "$MPROF" run -o "$_d" -- "$@" ;;
	cpprof) set -- "$CPPROF" record -o "$_d" -- "$@" ;;
	cfprof) set -- "$CFPROF" record -o "$_d" -- "$T/run.sh" "$@" ;;
	cfdirect) set -- "$CFPROF" record -o "$_d" -- "$@" ;;
	esac
	cd "$T/$C.d" || exit 1
	eval "$PREP"
	_t0=$(now)
	# shellcheck disable=SC2086
	timeout -k 10 "$LIMIT" $AS "$@" < "$IN" > "$_p.out" 2> "$_p.err"
	st=$?
	_t1=$(now)
	eval "$POST"
	cd "$T" || exit 1
	dt=$(secs "$_t0" "$_t1")
	timed_out=no
	if { [ $st -eq 124 ] || [ $st -eq 137 ]; } && [ "${dt%.*}" -ge "$LIMIT" ]; then timed_out=yes; fi
}

# same_file A B NAME: A and B are byte-identical.
same_file() {
	if cmp -s "$1" "$2"; then pass "$3"; else
		fail "$3"; diag "bare ($(wc -c < "$1") bytes) against this run ($(wc -c < "$2") bytes):"
		diff "$1" "$2" | head -10 | sed 's/^/#   /' >&2; fi
}

# read_all MODE: read every data file of the run with its tool, given the
# executable each one names; leaves the view of $EXE's profile in
# $T/$C.MODE.view.  True when all were read with exit 0.
read_all() {
	_bad=0 _seen=0
	rm -f "$T/$C.$1.view"
	for _f in "$DD/$C.$1.data" "$DD/$C.$1.data".*; do
		[ -f "$_f" ] || continue
		_seen=$((_seen + 1))
		_exe=$(info "$_f" exe)
		case $1 in
		mprof) "$MPROF" "$_exe" "$_f" > "$_f.view" 2> "$_f.verr" ;;
		cpprof) "$CPPROF" -c function "$_exe" "$_f" > "$_f.view" 2> "$_f.verr" ;;
		cfprof) "$CFPROF" -p "$_exe" "$_f" > "$_f.view" 2> "$_f.verr" ;;
		esac
		_rc=$?
		if [ $_rc -ne 0 ] || [ -s "$_f.verr" ]; then
			diag "$(basename "$_f") ($_exe): exit $_rc" "$(head -3 "$_f.verr")"
		fi
		[ $_rc -eq 0 ] || _bad=$((_bad + 1))
		if [ ! -f "$T/$C.$1.view" ] && [ "$(readlink -f "$_exe")" = "$(readlink -f "$EXE")" ]; then
			cp "$_f.view" "$T/$C.$1.view"
		fi
	done
	nfiles=$_seen
	[ -f "$DD/$C.$1.data" ] && [ $_bad -eq 0 ]
}

# names VIEW EREs...: every ERE matches a line of VIEW, but one written
# !ERE, which matches none.
names() {
	_v=$1; shift
	for _re in "$@"; do
		case $_re in
		!*) ! grep -Eq -- "${_re#!}" "$_v" 2> /dev/null || { echo "$_re"; return 1; } ;;
		*) grep -Eq -- "$_re" "$_v" 2> /dev/null || { echo "$_re"; return 1; } ;;
		esac
	done
}

# refused: cfprof record given the case's program itself refuses it, as
# documented: exit 2, one line, the program not run, no file.
refused() {
	run cfdirect "$@"
	_got="$st/$(wc -l < "$T/$C.cfdirect.err")/$(wc -c < "$T/$C.cfdirect.out")"
	if [ "$_got" = 2/1/0 ] && grep -q 'is not built with -finstrument-functions' "$T/$C.cfdirect.err" &&
		[ ! -e "$DD/$C.cfdirect.data" ]; then
		pass "$C under cfprof record (the program itself): refused as not instrumented, exit 2, not run"
	else
		fail "$C under cfprof record (the program itself): refused as not instrumented, exit 2, not run"
		diag "exit/lines of stderr/bytes of stdout: $_got" "$(head -3 "$T/$C.cfdirect.err")"
	fi
}

# corpus CMD...: the case $C, run bare then under each tool.  Set before:
# EXPECT, the bare run's stdout (or EXPECT_RE, an ERE some line matches);
# ERR_RE, an ERE the bare stderr matches (default: stderr empty); IN,
# standard input (default /dev/null); EXE, the program whose profile must
# name functions (a forked child's, for gcc); M_NAMES, C_NAMES: EREs
# (space-separated) the mprof and cpprof views of EXE's profile match;
# F_NAMES, cfprof's (default: its flat profile counts 0 calls); AS, DD,
# SECURE (above).
corpus() {
	run bare "$@"
	_b=$T/$C.bare
	_why=""
	[ $st -eq 0 ] || _why="exit $st"
	[ "$timed_out" = yes ] && _why="timed out after $LIMIT s"
	if [ -n "${EXPECT_RE:-}" ]; then
		grep -Eq -- "$EXPECT_RE" "$_b.out" || _why="$_why; no line of stdout matches /$EXPECT_RE/"
	elif [ "$(cat "$_b.out")" != "$EXPECT" ]; then
		_why="$_why; stdout is not '$EXPECT'"
	fi
	if [ -n "${ERR_RE:-}" ]; then
		grep -Eq -- "$ERR_RE" "$_b.err" || _why="$_why; no line of stderr matches /$ERR_RE/"
	elif [ -s "$_b.err" ]; then
		_why="$_why; stderr not empty"
	fi
	if [ -z "$_why" ]; then pass "$C bare: exit 0, the expected output"; else
		fail "$C bare: exit 0, the expected output"; diag "${_why#; }"
		head -5 "$_b.out" "$_b.err" | sed 's/^/#   /' >&2; fi
	_times="bare $dt s"
	_bst=$st
	for _tool in $TOOLS; do
		[ $_tool = cfprof ] && refused "$@"
		run $_tool "$@"
		_pre="$C under $_tool"
		if [ "$timed_out" = yes ]; then
			_times="$_times, $_tool timed out ($dt s)"
			fail "$_pre: exit status $_bst as bare"
			diag "timed out after $LIMIT s: a hang"
			for _what in "stdout identical" "stderr identical" "data files"; do
				fail "$_pre: $_what (no result: the run hung)"
			done
			[ -n "$SECURE" ] || fail "$_pre: functions named (no result: the run hung)"
			continue
		fi
		_times="$_times, $_tool $dt s"
		is "$st" "$_bst" "$_pre: exit status $_bst as bare"
		# A JVM that crashed in its own handler left its report.
		if [ "$st" != "$_bst" ]; then
			for _f in "$T/$C.d"/hs_err_pid*.log; do
				[ -f "$_f" ] && head -40 "$_f" | sed 's/^/#   /' >&2
			done
		fi
		same_file "$_b.out" "$T/$C.$_tool.out" "$_pre: stdout identical"
		if [ -n "${SECURE:-}" ]; then
			grep -v "^$_tool: " "$T/$C.$_tool.err" > "$T/$C.$_tool.err.own"
			same_file "$_b.err" "$T/$C.$_tool.err.own" "$_pre: stderr identical, the tool's own lines aside"
			_left=$(ls "$DD/$C.$_tool.data"* 2> /dev/null)
			is "$_left" "" "$_pre: no profile (secure execution ignores LD_PRELOAD)"
			continue
		fi
		same_file "$_b.err" "$T/$C.$_tool.err" "$_pre: stderr identical"
		read_all $_tool
		ok $? "$_pre: data files read with exit 0 ($nfiles)"
		_what="functions named"
		case $_tool in
		mprof) _res=$M_NAMES ;;
		cpprof) _res=$C_NAMES ;;
		cfprof) _res=${F_NAMES:-'; 0 calls$'} _what="no function instrumented" ;;
		esac
		set -f # the EREs are words, not file patterns
		# shellcheck disable=SC2086
		_miss=$(names "$T/$C.$_tool.view" $_res)
		set +f
		if [ -z "$_miss" ]; then pass "$_pre: $_what ($_res)"; else
			fail "$_pre: $_what ($_res)"
			if [ -f "$T/$C.$_tool.view" ]; then
				diag "/$_miss/ matches no line of the view of $EXE's profile:"
				head -20 "$T/$C.$_tool.view" | sed 's/^/#   /' >&2
			else
				diag "no data file names $EXE"
			fi
		fi
	done
	note "$C: $_times"
	EXPECT="" EXPECT_RE="" ERR_RE="" IN=/dev/null PREP="" POST="" AS="" DD=$T SECURE="" F_NAMES=""
}

# new_case NAME: the case's directory.
new_case() { C=$1; mkdir -p "$T/$C.d"; }
IN=/dev/null PREP="" POST="" EXPECT="" EXPECT_RE="" ERR_RE="" AS="" DD=$T SECURE="" F_NAMES=""
