#!/bin/sh
# install-deps.sh - install the Debian 12 packages the project needs, if any
# are missing.  Called by `make demo` and `make check`; cheap when nothing is
# missing (it only asks dpkg).  Needs root (or sudo) only to install.
set -eu

# Build: compiler, make, elfutils' libdw/libelf (symbols, DWARF types),
# libedit (cpprof's command loop), libiberty (the demangler: C++, Rust).
# libc6-dbg: names for libc's internal frames (qsort's msort_with_tmp, ...).
# Tests: valgrind (the leak figures are checked against it), perl's prove;
# clang and its runtime (libFuzzer, ASan, UBSan) for the fuzz target that
# make check builds and runs (tests/e2e/58-fuzz.t).
# Benchmarks (make bench): python3 runs bench/run, time gives peak RSS,
# heaptrack and valgrind are the tools compared, jq is a real workload.
# bench/cpprof/run compares cpprof record with perf record (linux-perf) and
# the gperftools CPU profiler (libprofiler, google-pprof); no test needs them.
# bench/run's primes section compares cfprof record with gcc -pg + gprof
# (binutils, already there with gcc) and uftrace record (uftrace); no test
# needs uftrace either.  golang-go and golang-github-google-pprof-dev: make
# check builds the real pprof from Debian's sources to read what `export
# --format pprof` writes (zlib1g-dev: that export is gzip'd).  chromium
# and python3-websocket: tests/e2e/84-report.t opens the HTML report in
# headless Chromium and drives it over the DevTools protocol.
# tests/e2e/19-rt-sizes.t runs the monitor over two other allocators,
# tcmalloc (libtcmalloc-minimal4, with libgoogle-perftools-dev) and
# jemalloc (libjemalloc2), whose smallest objects lie 8 bytes apart.
PKGS="gcc g++ make libc6-dev libc6-dbg libdw-dev libelf-dev valgrind perl clang libclang-rt-14-dev python3 time heaptrack jq libedit-dev libiberty-dev linux-perf google-perftools libgoogle-perftools-dev uftrace curl golang-go golang-github-google-pprof-dev zlib1g-dev chromium python3-websocket libjemalloc2"

# The corpus test (tests/e2e/60-corpus.t) runs programs of other runtimes
# (and perl, python3, bash, gcc from the list above: it takes the python3
# first on PATH): each COMMAND:PACKAGE pair installs Debian's package only
# when the command is missing, so a runtime installed another way (node
# from nodesource, rustc from rustup) is used as it is, never doubled.
CMDS="rustc:rustc java:openjdk-17-jre-headless javac:openjdk-17-jdk-headless ecl:ecl guile:guile-3.0 node:nodejs sqlite3:sqlite3 git:git"

# Sources of real programs that tests build with -finstrument-functions
# (tests/e2e/74-cf-lua.t): Debian's own source tarballs, checked by
# SHA-256, kept in CORPUS_SRC.  A failed download is a warning: the test
# then says it skipped, and why.
CORPUS_SRC=${CORPUS_SRC:-${HOME:-/root}/.cache/profiler-corpus}
SOURCES="lua5.4_5.4.4.orig.tar.gz:pool/main/l/lua5.4:164c7849653b80ae67bec4b7473b884bf5cc8d2dca05653475ec2ed27b9ebf61"
fetch_sources() {
	for s in $SOURCES; do
		f=${s%%:*} rest=${s#*:}
		dir=${rest%%:*} sum=${rest#*:}
		[ -f "$CORPUS_SRC/$f" ] && continue
		mkdir -p "$CORPUS_SRC" || return 0
		if curl -fsS -o "$CORPUS_SRC/$f.tmp" "http://deb.debian.org/debian/$dir/$f" 2>/dev/null &&
			echo "$sum  $CORPUS_SRC/$f.tmp" | sha256sum -c --status; then
			mv "$CORPUS_SRC/$f.tmp" "$CORPUS_SRC/$f"
		else
			rm -f "$CORPUS_SRC/$f.tmp"
			echo "install-deps: warning: could not fetch $f from deb.debian.org" >&2
		fi
	done
}

missing=""
for p in $PKGS; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing="$missing $p"
	fi
done
for cp in $CMDS; do
	c=${cp%%:*}
	# rustup's rustc may be off this shell's PATH; the test looks there too.
	if ! command -v "$c" >/dev/null 2>&1 && ! { [ "$c" = rustc ] && [ -x "${HOME:-/root}/.cargo/bin/rustc" ]; }; then
		missing="$missing ${cp#*:}"
	fi
done
if [ -z "$missing" ]; then
	fetch_sources
	exit 0
fi

echo "install-deps: installing:$missing"
if [ "$(id -u)" -eq 0 ]; then
	SUDO=""
elif command -v sudo >/dev/null 2>&1; then
	SUDO="sudo"
else
	echo "install-deps: missing packages:$missing; run as root: apt-get install -y$missing" >&2
	exit 2
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
fetch_sources
