# A cgo program under cpprof record (issue 22): Go requires SA_ONSTACK of
# every signal handler in the process, and a handler that runs on a
# goroutine's few KiB of stack corrupts it ("unexpected return pc",
# "fatal error: fault", exit 2, the output lost).  tests/progs/sig_cgo.go's
# goroutines call C's strdup and free in a loop; sampled for cpu, real and
# page-faults, with perf and with timers only, it must print what it
# prints bare, exit as bare, and leave a data file that names its Go and C
# functions.  Built with Debian's golang-go (scripts/install-deps.sh):
# without go this test fails, it never skips.
. "$(dirname "$0")/../lib.sh"
N=16
plan $N
CPPROF=$B/bin/cpprof
cd "$T" || exit 1

if ! command -v go > /dev/null; then
	fail "go not found: this test needs Debian's golang-go (make deps, scripts/install-deps.sh)"
	i=1
	while [ $i -lt $N ]; do fail "not run: no go"; i=$((i + 1)); done
	exit 1
fi
# No network, no module, every cache in the scratch directory.
mkdir cgo && cp "$TOP/tests/progs/sig_cgo.go" cgo/ || exit 1
(cd cgo && env GOCACHE="$T/gocache" GOPATH="$T/gopath" GO111MODULE=off GOFLAGS=-buildvcs=false \
	GOPROXY=off GOTOOLCHAIN=local CGO_ENABLED=1 go build -o "$T/sig_cgo" sig_cgo.go) > build.err 2>&1
st=$?
is "$st" 0 "go build of tests/progs/sig_cgo.go"
[ "$st" = 0 ] || { diag "$(cat build.err)"; exit 1; }

./sig_cgo > bare 2> bare.err
is "$?/$(tail -n 1 bare)" "0/total 29999952" "bare: exit 0, the total"

# run NAME [ENV...] -- RECORD-ARGS...: cpprof record, the output compared
# with the bare run's; then the data file read, naming Go's and C's frames.
run() {
	r_n=$1; shift
	env "$@" ./sig_cgo > "$r_n.out" 2> "$r_n.err" < /dev/null
	r_st=$?
	is "$r_st/$(cat "$r_n.out")" "0/$(cat bare)" "$r_n: exit status and stdout as in a bare run"
	[ "$r_st" = 0 ] || diag "$(head -n 20 "$r_n.err")"
}
check() {
	out=$("$CPPROF" -c "resource $2; threshold 0; function" ./sig_cgo "$1.data" 2>&1)
	st=$?
	miss=
	for f in $3; do printf '%s\n' "$out" | grep -qF -- "$f" || miss="$miss $f"; done
	is "$st/$miss" "0/" "$1: the data file reads; $2 names$(printf ' %s' $3)"
}

run perf "$CPPROF" record -e cpu:100us -e real:100us -e page-faults:10 -o perf.data
check perf cpu 'main.dupLoop Cfunc_strdup'
check perf real 'main.dupLoop Cfunc_strdup'
check perf page-faults 'runtime.'
# CPU-time timers fire at scheduler ticks: some 70 distinct samples in
# all, too few to be sure of a function with 1% of the time.  Go's
# runtime and cgo's wrappers (_Cfunc_strdup, _strlen, _free) have more.
run noperf CPPROF_NO_PERF=1 "$CPPROF" record -e cpu:100us -e real:100us -o noperf.data
check noperf cpu 'runtime. _Cfunc_'
check noperf real 'runtime. _Cfunc_'
# One resource at a time, as the issue found it failing with each.
# Page faults are few (the heap grows, then is reused): they land in
# Go's runtime.
for e in cpu:100us:Cfunc_strdup real:100us:Cfunc_strdup page-faults:10:runtime.; do
	r=${e%%:*} f=${e##*:}
	run "$r" "$CPPROF" record -e "${e%:*}" -o "$r.data"
	check "$r" "$r" "$f"
done

# Returning from main, Go exits with its own exit_group: no destructor
# runs, so no data file, but the program must not notice.
./sig_cgo goexit > goexit.bare 2> /dev/null
bst=$?
"$CPPROF" record -e cpu:100us -e real:100us -e page-faults:10 -o goexit.data ./sig_cgo goexit \
	> goexit.out 2> goexit.err
is "$?/$(cat goexit.out)" "$bst/$(cat goexit.bare)" "goexit: exit status and stdout as in a bare run"
done_testing
