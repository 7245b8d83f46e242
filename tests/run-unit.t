# Runs every unit test binary (TAP from C) as one TAP stream of subtests.
. "$(dirname "$0")/lib.sh"
set -- "$B"/tests/test_*
plan $#
for t in "$@"; do
	out=$("$t" 2>&1); st=$?
	if [ $st -eq 0 ] && ! printf '%s\n' "$out" | grep -q '^not ok'; then pass "$(basename "$t")"
	else fail "$(basename "$t") (exit $st)"; printf '%s\n' "$out" | grep -v '^ok' | head -30 | sed 's/^/#   /' >&2; fi
done
done_testing
