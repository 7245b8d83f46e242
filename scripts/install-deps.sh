#!/bin/sh
# install-deps.sh - install the Debian 12 packages the project needs, if any
# are missing.  Called by `make demo` and `make check`; cheap when nothing is
# missing (it only asks dpkg).  Needs root (or sudo) only to install.
set -eu

# Build: compiler, make, elfutils' libdw/libelf (symbols, DWARF types),
# libedit (cpprof's command loop).
# libc6-dbg: names for libc's internal frames (qsort's msort_with_tmp, ...).
# Tests: valgrind (the leak figures are checked against it), perl's prove.
# Benchmarks (make bench): python3 runs bench/run, time gives peak RSS,
# heaptrack and valgrind are the tools compared, jq is a real workload.
# bench/cpprof/run compares cpprof record with perf record (linux-perf) and
# the gperftools CPU profiler (libprofiler, google-pprof); no test needs them.
PKGS="gcc g++ make libc6-dev libc6-dbg libdw-dev libelf-dev valgrind perl python3 time heaptrack jq libedit-dev linux-perf google-perftools libgoogle-perftools-dev"

missing=""
for p in $PKGS; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing="$missing $p"
	fi
done
[ -z "$missing" ] && exit 0

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
