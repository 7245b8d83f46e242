# The paper's F/G recursion in a real program: each function is credited the
# 10 bytes once, a cycle is found and listed twice.
. "$(dirname "$0")/../lib.sh"
plan 8
cc_prog "$T/fg" fg.c
"$MPROF" run -o "$T/fg.data" "$T/fg"; ok $? "fg runs"
out=$("$MPROF" -verbose "$T/fg.data")
like "$out" '^\[[0-9]+\] +50 +0 \(  \) +----------- +1\+1 +F <cycle 1> \[[0-9]+\]$' "F: self+desc 50% (10 of 20 bytes, once), called 1+1"
like "$out" '^\[[0-9]+\] +50 +10 \(\*\*\) +\*\* +----------- +1\+1 +G <cycle 1> \[[0-9]+\]$' "G: self+desc 50%, 10 bytes self"
like "$out" '^\[[0-9]+\] +\*\* +0 \(  \) +----------- +2\+0 +main \[[0-9]+\]$' "main: 100%, 2 calls"
like "$out" '<cycle 1 as a whole> \[[0-9]+\], its members:$' "the cycle's member listing"
like "$out" '^\[[0-9]+\] +50 +10 \(\*\*\) +\*\* +----------- +1\+0 +<cycle 1 as a whole> \[[0-9]+\]$' "the cycle as a whole: 10 bytes, entered once"
like "$out" '^ +10 \(\*\*\) +\*\* +\*\* +1/2 +main \[[0-9]+\]$' "main -> cycle carries 10 bytes"
# A recursive function on one line, which gcc -O3 inlines into itself:
# each level is a frame (inlined), as before.  A frame "called" from the
# line of its own name is GCC's split part (glibc's read) and is left
# out; this call is on that line, at another column.
cat > "$T/rec1.c" <<'CEOF'
#include <stdlib.h>
void *volatile keep[64];
int nk;
__attribute__((noinline)) static long leaf(long n) { keep[nk++ & 63] = malloc(64); return n; }
long walk(long n) { return n <= 0 ? leaf(n) : walk(n - 1) + walk(n - 2) + 1; }
int main(int argc, char **argv) { return (int)walk(argc + 7) & 1; }
CEOF
cc -O3 -g -o "$T/rec1" "$T/rec1.c" || exit 1
"$MPROF" run -o "$T/rec1.data" "$T/rec1" > /dev/null
is "$("$MPROF" export --format folded "$T/rec1" "$T/rec1.data" |
	awk -F';' '{ n = 0; for (i = 1; i <= NF; i++) if ($i == "walk") n++; if (n > m) m = n } END { print m }')" 9 \
	"a one-line recursive function inlined into itself: 9 walk frames at the deepest (walk(8) down to walk(0))"
done_testing
