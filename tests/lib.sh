# tests/lib.sh - TAP helpers for the end-to-end tests (sourced by tests/e2e/*.t).
#
# Each test script: `. "$(dirname "$0")/../lib.sh"`, then `plan N`, then
# assertions.  $B is the build directory (MPROF_BUILD, default ./build), $T a
# fresh scratch directory removed at exit, $MPROF the mprof command.

set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
B=${MPROF_BUILD:-$TOP/build}
MPROF=$B/bin/mprof
LIBMPROF=$B/lib
T=$(mktemp -d /tmp/mprof-test.XXXXXX)
trap 'rm -rf "$T"' EXIT
_n=0
_failed=0

plan() { echo "1..$1"; }
pass() { _n=$((_n + 1)); echo "ok $_n - $1"; }
# A failure is said on stderr too, which prove prints without -v: the CI's
# log then names the check and its figures, not only its number.
fail() {
	_n=$((_n + 1)); _failed=$((_failed + 1)); echo "not ok $_n - $1"
	echo "$(basename "$0"): not ok $_n - $1" >&2
}
# Diagnostics on stderr too (as Test::More's): a CI log of prove without
# -v shows what a failed check got and wanted (91-leak-scan.t's failed
# once in CI with nothing to go on).
diag() { printf '%s\n' "$@" | sed 's/^/# /' >&2; }
# A figure for the verbose log only (Test::More's note).
note() { printf '%s\n' "$@" | sed 's/^/# /'; }

# ok COND-EXIT-STATUS NAME: `ok $? "name"` after a command, or ok_cmd.
ok() { if [ "$1" -eq 0 ]; then pass "$2"; else fail "$2"; fi; }
# is GOT WANT NAME
is() {
	if [ "$1" = "$2" ]; then pass "$3"; else
		fail "$3"; diag "got:  '$1'" "want: '$2'"; fi
}
# like TEXT REGEX NAME (grep -E)
like() {
	if printf '%s\n' "$1" | grep -Eq -- "$2"; then pass "$3"; else
		fail "$3"; diag "no line matches /$2/ in:"; printf '%s\n' "$1" | head -40 | sed 's/^/#   /' >&2; fi
}
unlike() {
	if printf '%s\n' "$1" | grep -Eq -- "$2"; then
		fail "$3"; diag "a line matches /$2/:"; printf '%s\n' "$1" | grep -E -- "$2" | head -5 | sed 's/^/#   /' >&2; else pass "$3"; fi
}

# No check is skipped silently (issue 22, item 9).  absent N WHY: N
# checks whose input is missing (a package scripts/install-deps.sh
# installs, a tool make check builds, a source it downloads) fail, WHY
# saying what is missing and where it comes from.  skip N WHY: N checks
# this machine or build cannot make (a kernel feature, a sanitizer
# build), skipped, WHY on stderr too, which prove prints.
absent() {
	diag "missing: $2"
	_i=0
	while [ $_i -lt "$1" ]; do fail "missing: $2"; _i=$((_i + 1)); done
}
skip() {
	echo "$(basename "$0"): $1 skipped: $2" >&2
	_i=0
	while [ $_i -lt "$1" ]; do _n=$((_n + 1)); echo "ok $_n # SKIP $2"; _i=$((_i + 1)); done
}

# cc_prog OUT SRC [CFLAGS...]: build a test program from tests/progs/.
cc_prog() {
	_out=$1 _src=$2; shift 2
	cc -g -O0 -o "$_out" "$TOP/tests/progs/$_src" -I"$TOP/include" "$@"
}

# dump_sum FILE COLUMN: sum of one counter column over all stacks of a data
# file, using `mprof dump` (counter columns start at field 4 of "stack" lines).
dump_sum() {
	"$MPROF" dump "$1" | awk -v c="$2" '$1 == "stack" { s += $(3 + c) } END { printf "%d\n", s }'
}
# info FILE KEY: a run fact from the INFO section.
info() { "$MPROF" dump "$1" | awk -v k="$2" '$1 == "info" && $2 == k { print $3 }'; }

done_testing() { [ "$_failed" -eq 0 ]; exit $?; }
