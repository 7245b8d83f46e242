# A program that lowers its address-space limit (RLIMIT_AS) while it runs
# goes on as it does bare: the keep's reservation (up to 64 GiB of
# address space, no memory) is cut to a quarter of the new limit
# (runtime/common/limits.c).  Before, Python's resource.setrlimit(
# RLIMIT_AS, 1 GiB) raised MemoryError under mprof run and cpprof record,
# and a C program's next large malloc failed.
. "$(dirname "$0")/../lib.sh"
plan 6
cd "$T" || exit 1
cat > lim.c <<'CEOF'
#define _GNU_SOURCE /* prlimit */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
int main(int argc, char **argv)
{
	struct rlimit r = { 1ul << 30, 1ul << 30 };
	char *p;

	if ((argc > 1 ? prlimit(0, RLIMIT_AS, &r, NULL) : setrlimit(RLIMIT_AS, &r)) != 0)
		return 3;
	p = malloc(200u << 20);
	if (!p)
		return 4;
	memset(p, 1, 200u << 20);
	printf("ok %d\n", p[12345]);
	return 0;
}
CEOF
cc -O0 -o lim lim.c || exit 1
out=$("$MPROF" run -o m.data ./lim; echo "rc=$?")
is "$out" "ok 1
rc=0" "mprof run: setrlimit(RLIMIT_AS, 1 GiB), then 200 MiB malloc'd"
is "$(info m.data ended)" "exit" "mprof run: the profile saved at exit"
out=$("$MPROF" run -o p.data ./lim prlimit; echo "rc=$?")
is "$out" "ok 1
rc=0" "mprof run: the same by prlimit"
out=$("$B/bin/cpprof" record -o c.data ./lim; echo "rc=$?")
is "$out" "ok 1
rc=0" "cpprof record: the same"
PY=/usr/bin/python3
if [ -x "$PY" ]; then
	prog='import resource; resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30)); x = [str(i) for i in range(200000)]; print("ok")'
	out=$("$MPROF" run -o y.data "$PY" -c "$prog" 2>&1; echo "rc=$?")
	is "$out" "ok
rc=0" "mprof run: python3's resource.setrlimit(RLIMIT_AS, 1 GiB), then its objects"
	out=$("$B/bin/cpprof" record -o z.data "$PY" -c "$prog" 2>&1; echo "rc=$?")
	is "$out" "ok
rc=0" "cpprof record: the same"
else
	absent 2 "$PY (Debian's python3, scripts/install-deps.sh)"
fi
done_testing
