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
# jemalloc (libjemalloc2), whose smallest objects lie 8 bytes apart;
# bench/run compares with jemalloc's own heap profiler (Debian builds
# libjemalloc2 with profiling: MALLOC_CONF=prof:true).
PKGS="gcc g++ make libc6-dev libc6-dbg libdw-dev libelf-dev valgrind perl clang libclang-rt-14-dev python3 time heaptrack jq libedit-dev libiberty-dev linux-perf google-perftools libgoogle-perftools-dev uftrace golang-go golang-github-google-pprof-dev zlib1g-dev chromium python3-websocket libjemalloc2 python3-dev strace"

# The corpus tests (tests/e2e/60-corpus.t, 61-corpus-more.t) run programs
# of other runtimes (and perl, python3, bash, gcc from the list above: it
# takes the python3 first on PATH): each COMMAND:PACKAGE pair installs
# Debian's package only when the command is missing, so a runtime
# installed another way (node from nodesource, rustc from rustup) is used
# as it is, never doubled.
CMDS="rustc:rustc java:openjdk-17-jre-headless javac:openjdk-17-jdk-headless ecl:ecl guile:guile-3.0 node:nodejs sqlite3:sqlite3 git:git gfortran:gfortran tclsh:tcl ruby:ruby php:php-cli ocamlopt:ocaml-nox lua5.4:lua5.4"

# Sources of real programs that tests build with -finstrument-functions
# (tests/e2e/74-cf-lua.t): Debian's source packages, downloaded with
# `apt-get source --download-only` (apt checks each file against the
# archive's signed index; the test builds the upstream tarball, as
# upstream's Makefile does, not Debian's libtool build) into
# CORPUS_SRC/PACKAGE/, from the mirrors this machine already uses: no
# host is named here.  Where apt knows no deb-src entries, the deb
# entries of the machine's own sources are mirrored as deb-src in files
# of ours (SRC_LIST, SRC_SOURCES).  A source that cannot be got is a
# warning here; the test that needs it fails, saying why.
CORPUS_SRC=${CORPUS_SRC:-${HOME:-/root}/.cache/profiler-corpus}
SOURCES="lua5.4"
SRC_LIST=/etc/apt/sources.list.d/profiler-toolkit-src.list
SRC_SOURCES=/etc/apt/sources.list.d/profiler-toolkit-src.sources

# deb_src: SRC_LIST and SRC_SOURCES from the enabled deb entries of the
# one-line files and of the deb822 ones, then apt-get update.
deb_src() {
	lists="" stanzas=""
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -f "$f" ] && [ "$f" != "$SRC_LIST" ] && lists="$lists $f"
	done
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] && [ "$f" != "$SRC_SOURCES" ] && stanzas="$stanzas $f"
	done
	# shellcheck disable=SC2086
	[ -z "$lists" ] || sed -n 's/^[[:space:]]*deb[[:space:]]/deb-src /p' $lists |
		$SUDO tee "$SRC_LIST.tmp" > /dev/null
	# A stanza is a paragraph; one whose Types has deb and is enabled is
	# copied with Types: deb-src.
	# shellcheck disable=SC2086
	[ -z "$stanzas" ] || awk 'BEGIN { RS = "" }
		{
			deb = 0; off = 0; out = ""
			n = split($0, line, "\n")
			for (i = 1; i <= n; i++) {
				if (line[i] ~ /^Types:/) {
					deb = line[i] ~ /[: ]deb( |$)/
					line[i] = "Types: deb-src"
				}
				if (line[i] ~ /^Enabled:[[:space:]]*no/) off = 1
				out = out line[i] "\n"
			}
			if (deb && !off) printf "%s\n", out
		}' $stanzas | $SUDO tee "$SRC_SOURCES.tmp" > /dev/null
	for f in "$SRC_LIST" "$SRC_SOURCES"; do
		if [ -s "$f.tmp" ]; then $SUDO mv "$f.tmp" "$f"; else $SUDO rm -f "$f.tmp"; fi
	done
	$SUDO apt-get update -qq || true
}

fetch_sources() {
	for pkg in $SOURCES; do
		[ -d "$CORPUS_SRC/$pkg" ] && continue
		if ! apt-get source --print-uris "$pkg" > /dev/null 2>&1; then
			if [ -n "$NO_ROOT" ]; then
				echo "install-deps: warning: apt knows no source of $pkg; run as root to add deb-src entries" >&2
				continue
			fi
			deb_src
		fi
		rm -rf "$CORPUS_SRC/$pkg.tmp"
		mkdir -p "$CORPUS_SRC/$pkg.tmp" &&
			if (cd "$CORPUS_SRC/$pkg.tmp" && apt-get source --download-only -qq "$pkg" > ../"$pkg".log 2>&1); then
				mv "$CORPUS_SRC/$pkg.tmp" "$CORPUS_SRC/$pkg"
			else
				echo "install-deps: warning: cannot get the source of $pkg: apt-get source $pkg failed:" >&2
				tail -3 "$CORPUS_SRC/$pkg.log" >&2
				rm -rf "$CORPUS_SRC/$pkg.tmp"
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
NO_ROOT=""
if [ "$(id -u)" -eq 0 ]; then
	SUDO=""
elif command -v sudo >/dev/null 2>&1; then
	SUDO="sudo"
else
	SUDO="" NO_ROOT=1
fi
if [ -z "$missing" ]; then
	fetch_sources
	exit 0
fi

echo "install-deps: installing:$missing"
if [ -n "$NO_ROOT" ]; then
	echo "install-deps: missing packages:$missing; run as root: apt-get install -y$missing" >&2
	exit 2
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
fetch_sources
