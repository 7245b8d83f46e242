# mprof run (lib/run/launch.c, shared with cpprof record): the program's exit
# status passes through, a death by signal too, a program that ends
# without its save gets its profile from the keep (tests/e2e/96-keep.t),
# one that cannot be run is 127.  The program gets
# the environment with LD_PRELOAD (the user's kept after ours), MPROF_OUT
# and MPROF_ROOT_PID (its own pid) replaced.
. "$(dirname "$0")/../lib.sh"
plan 10
cd "$T" || exit 1
"$MPROF" run sh -c 'exit 7' 2>/dev/null; is $? 7 "exit status passes through"
"$MPROF" run sh -c 'kill -9 $$' 2>/dev/null; is $? 137 "a death by SIGKILL passes through (128 + 9)"
cat > "$T/quick.c" <<'EOC'
#include <stdlib.h>
#include <unistd.h>
int main(void) { void *p = malloc(10); (void)p; _exit(3); }
EOC
cc -o "$T/quick" "$T/quick.c"
"$MPROF" run -o "$T/q.data" "$T/quick" 2> "$T/err"; is $? 3 "_exit status passes through"
is "$(cat "$T/err")/$(info "$T/q.data" ended)" "/_exit(3)" "_exit: the profile written from the keep, stderr the program's"
"$MPROF" run "$T/nonexistent" 2> "$T/err"; is $? 127 "a program that cannot run: 127"
like "$(cat "$T/err")" "^mprof: run: cannot run $T/nonexistent: No such file or directory$" "and a message"
MPROF_LIB=/nonexistent/libmprof.so "$MPROF" run true 2> "$T/err"; is "$?/$(cat "$T/err")" "2/mprof: run: cannot read the library /nonexistent/libmprof.so: No such file or directory" "missing library: one line, exit 2"
out=$(MPROF_ROOT_PID=1 "$MPROF" run sh -c 'echo "$MPROF_ROOT_PID $$"' 2>/dev/null)
set -- $out
is "$1" "$2" "MPROF_ROOT_PID is the program's own pid (a user's value replaced)"
# (A sanitizer build of mprof itself must be told that a preload is fine.)
out=$(cd "$T" && FOO_KEPT=yes MPROF_OUT=/elsewhere LD_PRELOAD=/lib/x86_64-linux-gnu/libm.so.6 \
	ASAN_OPTIONS=verify_asan_link_order=0 \
	"$MPROF" run -o r.data sh -c 'echo "$FOO_KEPT|$MPROF_OUT|$LD_PRELOAD"' 2>/dev/null)
is "$out" "yes|$T/r.data|$MPROF_BUILD/bin/../lib/libmprof.so:/lib/x86_64-linux-gnu/libm.so.6" \
	"the environment passes through; MPROF_OUT absolute; our library before the user's"
n=$(MPROF_ROOT_PID=1 LD_PRELOAD= "$MPROF" run sh -c 'tr "\\0" "\\n" < /proc/$$/environ' 2>/dev/null | grep -c '^\(MPROF_ROOT_PID\|LD_PRELOAD\)=')
is "$n" 2 "one MPROF_ROOT_PID and one LD_PRELOAD, not two of each"
done_testing
