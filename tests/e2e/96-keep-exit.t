# A program whose runtime's save at exit fails (it gave up the right to
# write the file: setuid to nobody, as a daemon does) is salvaged by the
# launcher, and INFO ended says its exit handlers ran: it said "exit status
# 0 without exit handlers (exit_group)", which the program never called.
#
# And a program that sets its file-size limit to 0 (RLIMIT_FSIZE: sshd's
# sandbox does) was killed by SIGXFSZ at exit, exit status 153 for its
# own 7: by the save's write past the limit, and by the runtime's
# message on a stderr that is a file.  Both now fail without the signal
# (outfile.h), the program ends as bare, and the launcher writes the
# profile from the keep.
. "$(dirname "$0")/../lib.sh"
plan 14
CPPROF=$B/bin/cpprof
cd "$T" || exit 1
cat > fsz.c <<'CEOF'
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
static void *volatile k[100];
int main(void)
{
	struct rlimit r = { 0, 0 };

	for (int i = 0; i < 100; i++)
		k[i] = malloc(123);
	if (setrlimit(RLIMIT_FSIZE, &r) != 0)
		return 9;
	printf("bye\n");
	return 7;
}
CEOF
cc -O0 -o fsz fsz.c || exit 1
# stdout a pipe (bare, the program writes it), stderr a file.
for how in "mprof run" "mprof run --sample=1" "cpprof record"; do
	set -- $how
	tool=$MPROF
	[ "$1" = cpprof ] && tool=$CPPROF
	shift
	out=$( ("$tool" "$@" -o f.data ./fsz 2> f.err; echo $? > f.rc) | cat)
	is "$(cat f.rc)/$out" "7/bye" "$how, file-size limit 0: exit status 7 and its output, as bare (killed by SIGXFSZ before)"
	is "$(info f.data reason)/$(cat f.err)" salvage/ \
		"$how, file-size limit 0: the profile written from the keep, nothing said (the launcher writes it)"
done
is "$("$MPROF" dump f.data | sed -n 's/^info ended //p')" "exit status 7; its runtime's save at exit failed ($T/f.data: File too large)" \
	"cpprof, file-size limit 0: INFO ended: its exit handlers ran, the save failed, and why"
"$MPROF" run -o f.data ./fsz 2> f.err > /dev/null
is "$("$MPROF" dump f.data | awk '$1 == "bin" && $2 == 123 { print $3 }')" 100 \
	"mprof, file-size limit 0: the profile holds its 100 allocations"

if [ "$(id -u)" != 0 ]; then
	skip 6 "setuid to nobody needs root"
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
	"salvage/exit status 0; its runtime's save at exit failed ($T/s.data: Permission denied)" \
	"salvaged; INFO ended says the exit handlers ran and the save failed, and why (it said no why)"
is "$(cat s.err)" "" "nothing said on the program's stderr: the launcher wrote the file"
is "$("$MPROF" dump s.data | awk '$1 == "bin" && $2 == 123 { print $3 }')" 100 \
	"the profile holds its 100 allocations"
# A server's worker, forked, drops to nobody and exits; its parent reaps
# it (nginx's workers): "without its save; how, its parent knows", no
# word of the save that failed, nor why.
cat > wk.c <<'CEOF'
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
static void *volatile k[50];
int main(void)
{
	pid_t c = fork();
	if (c == 0) {
		for (int i = 0; i < 50; i++)
			k[i] = malloc(77);
		if (setuid(65534) != 0)
			_exit(9);
		exit(0);
	}
	waitpid(c, NULL, 0);
	printf("reaped %d\n", c > 0);
	return 0;
}
CEOF
cc -O0 -o wk wk.c || exit 1
out=$("$MPROF" run -o w.data ./wk 2> /dev/null)
kid=$(ls w.data.* 2> /dev/null | head -1)
is "$out/$(info "${kid:-none}" reason)" "reaped 1/salvage" "a worker that dropped to nobody: its profile from the keep"
# (Its status where the launcher saw it a zombie, before its parent
# reaped it; where not, that its parent knows.)
like "$("$MPROF" dump "${kid:-none}" | sed -n 's/^info ended //p')" \
	"^(exit status 0|exited \\(its status, its parent knows: it reaped this forked child\\)); its runtime's save at exit failed \\($T/$kid: Permission denied\\)\$" \
	"... INFO ended: it exited, its save failed, and why"
done_testing
