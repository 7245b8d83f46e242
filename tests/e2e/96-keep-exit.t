# A program whose runtime's save at exit fails (it gave up the right to
# write the file: setuid to nobody, as a daemon does) is salvaged by the
# launcher, and INFO ended says its exit handlers ran: it said "exit status
# 0 without exit handlers (exit_group)", which the program never called.
. "$(dirname "$0")/../lib.sh"
plan 3
cd "$T" || exit 1
if [ "$(id -u)" != 0 ]; then
	skip 3 "setuid to nobody needs root"
	done_testing
fi
chmod 755 "$T"
cat > su.c <<'CEOF'
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
static void *volatile k[100];
int main(void)
{
	for (int i = 0; i < 100; i++)
		k[i] = malloc(123);
	if (setuid(65534) != 0)
		return 9;
	printf("dropped\n");
	return 0;
}
CEOF
cc -O0 -o su su.c || exit 1
out=$("$MPROF" run -o s.data ./su 2> s.err; echo "rc=$?")
is "$out" "dropped
rc=0" "the program's output and status"
is "$(info s.data reason)/$("$MPROF" dump s.data | sed -n 's/^info ended //p')" \
	"salvage/exit status 0; its runtime's save at exit did not finish" \
	"salvaged; INFO ended says the exit handlers ran and the save did not finish"
is "$("$MPROF" dump s.data | awk '$1 == "bin" && $2 == 123 { print $3 }')" 100 \
	"the profile holds its 100 allocations"
done_testing
