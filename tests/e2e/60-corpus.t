# The corpus: real programs from other ecosystems (a Rust program, the JVM,
# ECL, Guile, node, perl, python3, sqlite3, git, bash, gcc), each run bare,
# under `mprof run` and under `cpprof record` (tests/corpus.sh: the
# checks; 61-corpus-more.t has more programs, and cfprof).  Under each
# tool: the exit status, stdout and stderr are the bare run's, byte for
# byte; every data file written (forked children's FILE.PID too) is read
# by the tool with exit 0, given the program that wrote it; and the
# profile of the program named below names its real functions.  Every
# run is bounded by `timeout` (CORPUS_TIMEOUT seconds, 120 by default):
# a hang is a failure.
#
# scripts/install-deps.sh installs every runtime; a case fails when its
# command is missing, and is skipped (said on stderr) only when this
# machine has no package for it.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/corpus.sh"
PER_CASE=$(per_case)
plan $((12 * PER_CASE + 3))

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
# runs as bash scripts that exec the interpreter); mprof shows its Python
# frames in place of the eval loop's, and so does cpprof (issue 25).
new_case python
if ! missing python python3 python3; then
	EXPECT=$(printf '%s\n%s' "[(3, [('0', 40), ('1', 40)]), (5, [('0', 40), ('1', 39)]), (7, [('0', 40), ('1', 39)]), (11, [('0', 40), ('1', 39)])]" 4999950000)
	EXE=$(python3 -c 'import os, sys; print(os.path.realpath(sys.executable))')
	M_NAMES='[[:space:]]corpus[.]work$ Thread[.]run.>.corpus[.]work !_PyEval_EvalFrameDefault' C_NAMES='[[:space:]]corpus[.]work[[:space:]] Thread[.]run !_PyEval_EvalFrameDefault'
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
	# About 30 CPU samples: zlib's inflate alone had none in one run of
	# four (its share 0.05); one of zlib's or libc's, named.
	M_NAMES='inflateInit2_ git\+0x[0-9a-f]+'
	C_NAMES='(inflate|adler32_z|_int_malloc|_IO_fputs|_IO_fwrite|__memchr[a-z_]*) git\+0x[0-9a-f]+'
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
