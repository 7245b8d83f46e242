# The corpus: real programs from other ecosystems (a Rust program, the JVM,
# ECL, Guile, node, perl, python3, sqlite3, git, bash, gcc), each run bare,
# under `mprof run` and under `cpprof record`.  Under each tool: the exit
# status, stdout and stderr are the bare run's, byte for byte; every data
# file written (forked children's FILE.PID too) is read by the tool with
# exit 0, given the program that wrote it; and the profile of the program
# named below names its real functions.  Every run is bounded by `timeout`
# (CORPUS_TIMEOUT seconds, 120 by default): a hang is a failure.
#
# scripts/install-deps.sh installs every runtime; a case is skipped only
# when its command is missing and this machine has no package for it.
. "$(dirname "$0")/../lib.sh"
CPPROF=$B/bin/cpprof
SRC=$TOP/tests/progs/corpus
LIMIT=${CORPUS_TIMEOUT:-120}
PER_CASE=11 # the bare run; five checks under each tool
plan $((12 * PER_CASE + 3))

# Nothing of the user's configuration reaches the programs.
export LC_ALL=C GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
unset JAVA_TOOL_OPTIONS _JAVA_OPTIONS JDK_JAVA_OPTIONS NODE_OPTIONS PERL5OPT PYTHONSTARTUP
[ -d "$HOME/.cargo/bin" ] && PATH=$PATH:$HOME/.cargo/bin

now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }

# case_off NAME REASON ok|not [COUNT]: the whole case in one verdict,
# COUNT (default PER_CASE) lines.
case_off() {
	_i=0
	while [ $_i -lt "${4:-$PER_CASE}" ]; do
		_i=$((_i + 1))
		if [ "$3" = ok ]; then _n=$((_n + 1)); echo "ok $_n - $1 # SKIP $2"; else fail "$1: $2"; fi
	done
}

# missing NAME CMD PKG [COUNT]: true, the case's COUNT lines reported, when
# CMD is not here: failed where Debian has PKG for this machine (then
# install-deps.sh should have installed it), skipped only where it has not.
missing() {
	command -v "$2" > /dev/null 2>&1 && return 1
	if apt-cache policy "$3" 2> /dev/null | grep -q 'Candidate: [0-9]'; then
		case_off "$1" "no $2 here, though package $3 is installable (scripts/install-deps.sh)" not "${4:-$PER_CASE}"
	else
		case_off "$1" "no $2 on this machine and no package $3 for it" ok "${4:-$PER_CASE}"
	fi
	return 0
}

# run MODE CMD...: one run of the case $C in $T/$C.d, bare or under a tool,
# stdin from $IN, bounded by $LIMIT.  Leaves $T/$C.MODE.{out,err,data*},
# status in $st, seconds in $dt.  $PREP runs before (in the case's
# directory), $POST after, with $mode set.
run() {
	mode=$1; shift
	_p=$T/$C.$mode
	case $mode in
	mprof) set -- "$MPROF" run -o "$_p.data" -- "$@" ;;
	cpprof) set -- "$CPPROF" record -o "$_p.data" -- "$@" ;;
	esac
	cd "$T/$C.d" || exit 1
	eval "$PREP"
	_t0=$(now)
	timeout -k 10 "$LIMIT" "$@" < "$IN" > "$_p.out" 2> "$_p.err"
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
		diff "$1" "$2" | head -10 | sed 's/^/#   /'; fi
}

# read_all MODE: read every data file of the run with its tool, given the
# executable each one names; leaves the view of $EXE's profile in
# $T/$C.MODE.view.  True when all were read with exit 0.
read_all() {
	_bad=0 _seen=0
	rm -f "$T/$C.$1.view"
	for _f in "$T/$C.$1.data" "$T/$C.$1.data".*; do
		[ -f "$_f" ] || continue
		_seen=$((_seen + 1))
		_exe=$(info "$_f" exe)
		if [ "$1" = mprof ]; then
			"$MPROF" "$_exe" "$_f" > "$_f.view" 2> "$_f.verr"
		else
			"$CPPROF" -c function "$_exe" "$_f" > "$_f.view" 2> "$_f.verr"
		fi
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
	[ -f "$T/$C.$1.data" ] && [ $_bad -eq 0 ]
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

# corpus CMD...: the case $C, run bare then under each tool.  Set before:
# EXPECT, the bare run's stdout (or EXPECT_RE, an ERE some line matches);
# ERR_RE, an ERE the bare stderr matches (default: stderr empty); IN,
# standard input (default /dev/null); EXE, the program whose profile must
# name functions (a forked child's, for gcc); M_NAMES, C_NAMES: EREs
# (space-separated) the mprof and cpprof views of EXE's profile match.
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
		head -5 "$_b.out" "$_b.err" | sed 's/^/#   /'; fi
	_times="bare $dt s"
	_bst=$st
	for _tool in mprof cpprof; do
		run $_tool "$@"
		_pre="$C under $_tool"
		if [ "$timed_out" = yes ]; then
			_times="$_times, $_tool timed out ($dt s)"
			fail "$_pre: exit status $_bst as bare"
			diag "timed out after $LIMIT s: a hang"
			for _what in "stdout identical" "stderr identical" "data files read" "functions named"; do
				fail "$_pre: $_what (no result: the run hung)"
			done
			continue
		fi
		_times="$_times, $_tool $dt s"
		is "$st" "$_bst" "$_pre: exit status $_bst as bare"
		same_file "$_b.out" "$T/$C.$_tool.out" "$_pre: stdout identical"
		same_file "$_b.err" "$T/$C.$_tool.err" "$_pre: stderr identical"
		read_all $_tool
		ok $? "$_pre: data files read with exit 0 ($nfiles)"
		if [ $_tool = mprof ]; then _res=$M_NAMES; else _res=$C_NAMES; fi
		set -f # the EREs are words, not file patterns
		# shellcheck disable=SC2086
		_miss=$(names "$T/$C.$_tool.view" $_res)
		set +f
		if [ -z "$_miss" ]; then pass "$_pre: functions named ($_res)"; else
			fail "$_pre: functions named ($_res)"
			if [ -f "$T/$C.$_tool.view" ]; then
				diag "/$_miss/ matches no line of the view of $EXE's profile:"
				head -20 "$T/$C.$_tool.view" | sed 's/^/#   /'
			else
				diag "no data file names $EXE"
			fi
		fi
	done
	diag "$C: $_times"
	EXPECT="" EXPECT_RE="" ERR_RE="" IN=/dev/null PREP="" POST=""
}

# new_case NAME: the case's directory.
new_case() { C=$1; mkdir -p "$T/$C.d"; }
IN=/dev/null PREP="" POST="" EXPECT="" EXPECT_RE="" ERR_RE=""

# A Rust program built by the test: std collections, threads.
new_case rust
if ! missing rust rustc rustc; then
	if timeout "$LIMIT" rustc -O -g -o "$T/corpus_rs" "$SRC/corpus.rs" 2> "$T/rustc.err"; then
		EXPECT='997 words, 800000 entries, w0=801 w1=804 w10=800'
		# Demangled, in the legacy scheme (no 17h<hash>E, ::h<hash> or
		# $u7b$ escapes left) and in v0 (no _R...: rustup's std allocates
		# through v0 names).
		EXE=$T/corpus_rs C_NAMES='corpus::count std::thread::'
		M_NAMES="$C_NAMES"' !17h[0-9a-f]{16}E !::h[0-9a-f]{16} !\$u[0-9a-f]{2}\$ !(^|[^A-Za-z0-9_])_R[A-Za-z0-9_]{8,}'
		corpus "$T/corpus_rs"
	else
		diag "$(head -5 "$T/rustc.err")"; case_off rust "rustc failed" not
	fi
fi

# The JVM: java -version (on stderr), and a small program.
new_case java-version
if ! missing java-version java openjdk-17-jre-headless; then
	ERR_RE='^openjdk version "[0-9]' EXPECT=""
	EXE=$(readlink -f "$(command -v java)")
	# Samples in Java code end at its frames (no CFI there): which of the
	# VM's functions are sampled varies, but some are, demangled and
	# short (no parameter list: Class::method [samples]).
	M_NAMES='os::malloc Threads::create_vm' C_NAMES='[A-Z][A-Za-z0-9_]*::[A-Za-z0-9_]+ \['
	corpus java -version
fi
new_case java
if ! missing java javac openjdk-17-jdk-headless; then
	if timeout "$LIMIT" javac -d "$T/classes" "$SRC/Corpus.java" 2> "$T/javac.err"; then
		EXPECT='4005 44999850000 10000 k-1=14'
		EXE=$(readlink -f "$(command -v java)")
		M_NAMES='os::malloc CompileBroker::' C_NAMES='CompileBroker::'
		corpus java -cp "$T/classes" Corpus
	else
		diag "$(head -5 "$T/javac.err")"; case_off java "javac failed" not
	fi
fi

# ECL running a Lisp file: mprof profiles it as a Lisp program (its Lisp
# objects, under the Lisp functions that made them: tests/e2e/89-lisp.t).
new_case ecl
if ! missing ecl ecl ecl; then
	EXPECT=$(printf '26623 308 271\n(308 282 279)')
	EXE=$(readlink -f "$(command -v ecl)") M_NAMES='collatz-len !cl_boot' C_NAMES='cl_load ecl_interpret'
	corpus ecl --norc --shell "$SRC/corpus.lisp"
fi

# Guile (Boehm GC too; stacks through its JIT code have no CFI).
new_case guile
if ! missing guile guile guile-3.0; then
	EXPECT=$(printf '505\n200000')
	EXE=$(readlink -f "$(command -v guile)") M_NAMES='scm_boot_guile scm_call_n' C_NAMES='scm_[a-z_]+'
	corpus guile -c '(use-modules (srfi srfi-1))
(define h (make-hash-table))
(for-each (lambda (i)
            (let ((k (modulo (* i i) 1009)))
              (hash-set! h k (cons i (hash-ref h k (list))))))
          (iota 200000))
(display (hash-count (const #t) h)) (newline)
(display (fold + 0 (map length (hash-map->list (lambda (k v) v) h)))) (newline)'
fi

new_case node
if ! missing node node nodejs; then
	EXPECT='5003 174925 ["k0","k1","k10"]'
	EXE=$(readlink -f "$(command -v node)") M_NAMES='v8::internal::' C_NAMES='node::Start'
	corpus node -e 'const m = new Map();
for (let i = 0; i < 300000; i++) {
	const k = "k" + (i * 7919 % 5003);
	m.set(k, (m.get(k) || []).concat([i]));
	if (m.get(k).length > 50) m.set(k, m.get(k).slice(25));
}
let n = 0;
for (const v of m.values()) n += v.length;
console.log(m.size, n, JSON.stringify([...m.keys()].sort().slice(0, 3)));'
fi

new_case perl
if ! missing perl perl perl; then
	EXPECT='1000 600000 x0=300'
	EXE=$(readlink -f "$(command -v perl)") M_NAMES='Perl_safesysmalloc Perl_hv_common' C_NAMES='Perl_runops_standard'
	corpus perl -e 'my (%h, %n);
for my $i (1 .. 300000) { my $k = "x" . ($i * 7 % 1000); $h{$k} .= "ab" x ($i % 3); $n{$k}++ }
my $len = 0; $len += length $_ for values %h;
my ($first) = sort keys %n;
print scalar(keys %h), " $len $first=$n{$first}\n";'
fi

# python3 with threads and a subprocess (pyenv's shim, where it is one,
# runs as bash scripts that exec the interpreter).
new_case python
if ! missing python python3 python3; then
	EXPECT=$(printf '%s\n%s' "[(3, [('0', 40), ('1', 40)]), (5, [('0', 40), ('1', 39)]), (7, [('0', 40), ('1', 39)]), (11, [('0', 40), ('1', 39)])]" 4999950000)
	EXE=$(python3 -c 'import os, sys; print(os.path.realpath(sys.executable))')
	M_NAMES='_PyObject_Malloc _PyEval_EvalFrameDefault' C_NAMES='_PyEval_EvalFrameDefault'
	corpus python3 "$SRC/corpus.py"
fi

# sqlite3: SQL from standard input, on a fresh database file.
new_case sqlite3
if ! missing sqlite3 sqlite3 sqlite3; then
	EXPECT=$(printf '50000|613|1250025000\nkey1|82|49984\nkey10|82|49898\nkey101|82|49982')
	IN=$SRC/corpus.sql PREP='rm -f corpus.db'
	EXE=$(readlink -f "$(command -v sqlite3)") M_NAMES='sqlite3VdbeExec' C_NAMES='sqlite3VdbeExec'
	corpus sqlite3 corpus.db
fi

# git: a repository of 200 commits with fixed authors and dates (so fixed
# hashes), made by fast-import; git log -p reads and diffs them all.
# Debian's git has no symbols: its own frames are git+offset.
new_case git
if ! missing git git git; then
	awk 'BEGIN {
		for (c = 1; c <= 200; c++) {
			printf "commit refs/heads/main\ncommitter Corpus <corpus@example.org> %d +0000\n", 1767225600 + 60 * c
			printf "data <<EOM\nstep %d\nEOM\n", c
			for (f = 0; f < 3; f++) {
				printf "M 644 inline f%d\ndata <<EOD\n", f
				for (i = 0; i < 400; i++) printf "line %d %d\n", i, i % (c + f + 2) ? i * 7 % 13 : c
				printf "EOD\n"
			}
		}
	}' > "$T/git.import"
	git init -q -b main "$T/git.d/repo" && git -C "$T/git.d/repo" fast-import --quiet < "$T/git.import"
	EXPECT_RE='^[0-9a-f]{7,} step 200$'
	EXE=$(readlink -f "$(command -v git)")
	M_NAMES='inflateInit2_ git\+0x[0-9a-f]+' C_NAMES='__libc_start_main git\+0x[0-9a-f]+'
	corpus git -C repo log -p --format='%h %s'
fi

# bash: a loop of builtins, then pipes (every stage a forked child).
new_case bash
if ! missing bash bash bash; then
	EXPECT=$(printf '90000\n    310 1\n    310 2\n    310 3\n3')
	EXE=$(readlink -f "$(command -v bash)") M_NAMES='xmalloc execute_command' C_NAMES='execute_command'
	corpus bash -c 's=0; for i in $(seq 1 30000); do s=$((s + i % 7)); done; echo "$s"
seq 1 30000 | awk "{ print \$1 % 97 }" | sort -n | uniq -c | sort -k1,1nr -k2,2n | sed -n "1,3p"
printf "%s\n" alpha beta gamma beta | sort | uniq | wc -l'
fi

# gcc compiling and linking a file: the names are cc1's, a forked and
# exec'd child; the executable must be the bare compile's, byte for byte.
new_case gcc
if ! missing gcc gcc gcc $((PER_CASE + 3)); then
	EXPECT="" PREP='rm -f hello' POST='[ -f hello ] && mv hello $T/hello.$mode'
	EXE=$(readlink -f "$(gcc -print-prog-name=cc1)") M_NAMES='toplev::main xmalloc' C_NAMES='toplev::main'
	corpus gcc -O2 -g -o hello "$SRC/corpus.c"
	is "$("$T/hello.bare" 2>&1)" "longest word: 5" "gcc bare: the executable runs"
	for _tool in mprof cpprof; do
		if cmp -s "$T/hello.bare" "$T/hello.$_tool"; then pass "gcc under $_tool: the same executable as bare"; else
			fail "gcc under $_tool: the same executable as bare"; fi
	done
fi
done_testing
