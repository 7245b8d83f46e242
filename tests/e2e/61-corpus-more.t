# More of the corpus (issue 22, item 10), as 60-corpus.t runs it
# (tests/corpus.sh), under cfprof too: a Fortran program (gfortran,
# allocatable arrays), Tcl (lists, dicts), Ruby, PHP's CLI, an OCaml
# program (ocamlopt), Lua 5.4 (tables, a coroutine), a cgo Go program
# that ends with Go's own exit, a ucontext coroutine, and a setuid-root
# program run by an unprivileged user, which the loader runs in secure
# execution, ignoring LD_PRELOAD: under every tool it runs as bare and
# no profile is written.  The runtimes' own functions are named: where
# Debian strips them (libgfortran's internals), as module+offset.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/corpus.sh"
TOOLS="mprof cpprof cfprof"
PER_CASE=$(per_case)
SECURE=1
plan $((8 * PER_CASE + $(per_case)))
SECURE=""

# gfortran: MAIN__ allocates; libgfortran's own allocations (its units,
# at start-up and for the print) come from its internal functions.
new_case gfortran
if ! missing gfortran gfortran gfortran; then
	cp "$SRC/corpus.f90" "$T/gfortran.d/"
	if (cd "$T/gfortran.d" && timeout "$LIMIT" gfortran -O2 -g -o "$T/corpus_f" corpus.f90) 2> "$T/gfortran.err"; then
		EXPECT='total 6433069154 grown 200'
		EXE=$T/corpus_f M_NAMES='MAIN__ libgfortran\.so\.[0-9]+\+0x[0-9a-f]+' C_NAMES='MAIN__'
		corpus "$T/corpus_f"
	else
		diag "$(head -5 "$T/gfortran.err")"; case_off gfortran "gfortran failed" not
	fi
fi

new_case tclsh
if ! missing tclsh tclsh tcl; then
	EXPECT='20000 997 w0 w1 w2 61'
	EXE=$(readlink -f "$(command -v tclsh)") M_NAMES='TclpAlloc Tcl_MainEx' C_NAMES='Tcl_MainEx'
	corpus tclsh "$SRC/corpus.tcl"
fi

new_case ruby
if ! missing ruby ruby ruby; then
	EXPECT='1009 138894 k0,k1,k10'
	EXE=$(readlink -f "$(command -v ruby)") M_NAMES='ruby_options rb_define_class' C_NAMES='ruby_options'
	corpus ruby "$SRC/corpus.rb"
fi

# PHP's CLI, with no php.ini of the machine's (-n).
new_case php
if ! missing php php php-cli; then
	EXPECT='1009 300000 k0,k1,k10'
	EXE=$(readlink -f "$(command -v php)") M_NAMES='__zend_malloc php_module_startup' C_NAMES='php_module_startup'
	corpus php -n "$SRC/corpus.php"
fi

# ocamlopt's program: its runtime's major heap and tables come from malloc.
new_case ocaml
if ! missing ocaml ocamlopt ocaml-nox; then
	cp "$SRC/corpus.ml" "$T/ocaml.d/"
	if (cd "$T/ocaml.d" && timeout "$LIMIT" ocamlopt -g -o "$T/corpus_ml" corpus.ml) 2> "$T/ocamlopt.err"; then
		EXPECT='1009 100000 k0=100,k1=99,k10=99'
		EXE=$T/corpus_ml M_NAMES='caml_alloc_for_heap caml_init_major_heap' C_NAMES='caml_main'
		corpus "$T/corpus_ml"
	else
		diag "$(head -5 "$T/ocamlopt.err")"; case_off ocaml "ocamlopt failed" not
	fi
fi

# Debian's lua5.4 is stripped but for its API (lua_*, luaL_*).
new_case lua5.4
if ! missing lua5.4 lua5.4 lua5.4; then
	EXPECT=$(printf '1009\t50000\tk0\tk1\tk10')
	EXE=$(readlink -f "$(command -v lua5.4)") M_NAMES='lua_newstate luaL_openlibs' C_NAMES='lua_pcallk'
	corpus lua5.4 "$SRC/corpus.lua"
fi

# A cgo program (tests/progs/sig_cgo.go: goroutines calling C's strdup
# and free) that ends with Go's own exit, a raw exit_group: its profile is
# the keep's (tests/e2e/96-keep.t), and Go's signal handling must survive
# the sampler's (SA_ONSTACK, tests/e2e/59-sig-cgo.t).
new_case cgo
if ! missing cgo go golang-go; then
	cp "$TOP/tests/progs/sig_cgo.go" "$T/cgo.d/"
	if (cd "$T/cgo.d" && env GOCACHE="$B/tools/gocache" GOPATH="$T/gopath" GO111MODULE=off \
		GOFLAGS=-buildvcs=false GOPROXY=off GOTOOLCHAIN=local CGO_ENABLED=1 \
		timeout "$LIMIT" go build -o "$T/corpus_cgo" sig_cgo.go) > "$T/cgo.err" 2>&1; then
		EXPECT_RE='^total 29999952$'
		EXE=$T/corpus_cgo M_NAMES='strdup x_cgo_init' C_NAMES='runtime\.'
		corpus "$T/corpus_cgo" goexit
		EXPECT_RE=""
	else
		diag "$(head -5 "$T/cgo.err")"; case_off cgo "go build failed" not
	fi
fi

# A ucontext coroutine on a 4 KiB stack amid canaries (tests/progs/
# sig_coro.c): no collector writes below it (tests/e2e/59-sig-coro.t).
new_case coroutine
if cc -O2 -g -o "$T/corpus_coro" "$TOP/tests/progs/sig_coro.c"; then
	EXPECT=$(printf 'rounds 1500\nsum 3263422220976\ncanary 0')
	ERR_RE='^sig_coro: [0-9]+ bytes of the coroutine.s stack used$'
	EXE=$T/corpus_coro M_NAMES='main' C_NAMES='crunch'
	corpus "$T/corpus_coro"
	ERR_RE=""
else
	case_off coroutine "cc failed" not
fi

# A setuid-root program (tests/progs/corpus/suid.c) run as nobody, the
# tools too: its directory is nobody's, so a file could be written there.
new_case suid
SECURE=1
if cc -O2 -o "$T/suid.d/suid" "$SRC/suid.c" && chown root:root "$T/suid.d/suid" &&
	chmod 4755 "$T/suid.d/suid" && chown nobody "$T/suid.d" && chmod 711 "$T"; then
	EXPECT='euid 0 ruid 65534 sum 499500' AS="setpriv --reuid=nobody --regid=nogroup --clear-groups"
	DD=$T/suid.d SECURE=1
	corpus ./suid
else
	case_off suid "cannot make a setuid-root program (not root?)" not "$(per_case)"
fi
SECURE=""
done_testing
