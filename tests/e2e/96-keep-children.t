# A forked child's profile survives its death by a signal (the keep,
# issue 22, for the whole descent): under a launcher, a forked child's
# copy of the keep is a memfd of its own that it sends the launcher
# (runtime/common/keep.c's child_keep), and the launcher writes the
# profile of a child that ends without its save to FILE.PID, as the
# child would have (lib/run/keeper.c's keeper_wait).  Before, a forked
# child killed by a signal lost its profile: multiprocessing's
# terminate(), which `with Pool()` calls, kills its workers so.
. "$(dirname "$0")/../lib.sh"
plan 37
cd "$T" || exit 1
CPPROF=$B/bin/cpprof
cc -g -O0 -o kids "$TOP/tests/progs/rt_kids.c" || exit 1

# bins FILE SIZE: allocations of SIZE bytes in FILE.
bins() { "$MPROF" dump "$1" | awk -v s="$2" '$1 == "bin" && $2 == s { print $3 }'; }
reason() { "$MPROF" dump "$1" | sed -n 's/^info reason //p'; }
ended() { "$MPROF" dump "$1" | sed -n 's/^info ended //p'; }

# 1-5: a child that sends itself SIGTERM.
out=$("$MPROF" run -o t.data ./kids term 2> t.err)
kid=$(echo "$out" | awk '$1 == "child" { print $2 }')
is "$out" "child $kid signal 15" "term: the program's output (its child died by SIGTERM)"
is "$(bins t.data 55)/$(bins t.data 77)" "300/" "term: the parent's profile holds its 300, none of its child's"
is "$(reason t.data.$kid)/$(bins t.data.$kid 55)/$(bins t.data.$kid 77)" "salvage/300/1000" \
	"term: the child's profile, written from its keep: the 300 it inherited and its 1000"
is "$(cat t.err)" "" "term: nothing said, stderr a file (the program's stderr stays as bare)"
script -qec "\"$MPROF\" run -o tt.data ./kids term" /dev/null < /dev/null > tty.out 2>&1
kid2=$(tr -d '\r' < tty.out | awk '$1 == "child" { print $2 }')
like "$(tr -d '\r' < tty.out | grep -v '^child\|also wrote')" "^mprof: run: child $kid2 ended without saving its profile( \\(killed by signal 15 \\(SIGTERM\\)\\))?; written to .*/tt.data.$kid2 from its keep\$" \
	"term, stderr a terminal: said, once"
# How, the launcher reads only while the child is a zombie: its parent
# (here at once) reaps it.
like "$(ended t.data.$kid)" '^(without its save; how, its parent knows \(it reaped this forked child\)|killed by signal 15 \(SIGTERM\))$' \
	"term: INFO ended: SIGTERM, or that the launcher did not see how (its parent reaped it first)"

# A child that execs a program (this one again), which then dies by
# SIGTERM, as a shell's child that execs sort dies by SIGPIPE: the new
# image takes the child's keep over (it is close-on-exec, at a number of
# its own: keep_exec puts it where the environment says the keep is), and
# the launcher writes its profile.  Before, nothing was written and
# nothing said.
cmdline() { "$MPROF" dump "$1" | sed -n 's/^info cmdline //p'; }
out=$("$MPROF" run -o e.data ./kids exec 2> e.err)
kid=$(echo "$out" | awk '$1 == "child" { print $2 }')
is "$out/$(reason e.data.$kid)/$(cmdline e.data.$kid)/$(bins e.data.$kid 77)/$(bins e.data.$kid 55)" \
	"child $kid signal 15/salvage/./kids exectarget/1000/" \
	"exec: the exec'd image's profile, from its keep: its 1000, none of the image before's"
is "$(cat e.err)" "" "exec: nothing said, stderr a file"
out=$("$CPPROF" record -o ce.data ./kids exec 2> ce.err)
kid=$(echo "$out" | awk '$1 == "child" { print $2 }')
is "$out/$(reason ce.data.$kid)/$(cmdline ce.data.$kid)" "child $kid signal 15/salvage/./kids exectarget" \
	"cpprof, exec: the exec'd image's profile, from its keep"

# An image started by an exec no interposed function sees (glibc's
# posix_spawn and system() exec in a vfork child by their own call; a
# vfork child's exec is not its parent's image's; Go's syscall.Exec) makes
# a keep of its own and sends it (keep.c's image_keep).  Before, spawn and
# vfork left nothing when the image was killed, nothing said (dash runs
# every command so: `sh -c './prog; echo'`), and a raw exec in a forked
# child left the image before's tables, written as its profile.
for m in spawn vfork rawexec; do
	out=$("$MPROF" run -o $m.data ./kids $m 2> $m.err)
	kid=$(echo "$out" | awk '$1 == "child" { print $2 }')
	is "$out/$(reason $m.data.$kid)/$(cmdline $m.data.$kid)/$(bins $m.data.$kid 77)/$(bins $m.data.$kid 55)$(bins $m.data.$kid 99)/$(cat $m.err)" \
		"child $kid signal 15/salvage/./kids exectarget/1000//" \
		"$m: the exec'd image's profile, from a keep of its own: its 1000, none of the image before's, nothing said"
done
# The same, its new image saving at exit, the launcher stopped until the
# child was reaped: it reads both keeps, and the child's end, at once.  It
# wrote the old keep's tables over the file the new image saved (the old
# keep read first, its process gone).
out=$("$MPROF" run -o rs.data ./kids rawstop 2> rs.err)
kid=$(echo "$out" | awk '$1 == "child" { print $2 }')
is "$out/$(reason rs.data.$kid)/$(cmdline rs.data.$kid)/$(bins rs.data.$kid 77)/$(bins rs.data.$kid 99)/$(cat rs.err)" \
	"child $kid status 0/exit/./kids exitingtarget/1000//" \
	"rawexec, the launcher late: the file the new image saved stays"
out=$("$CPPROF" record -o cs.data ./kids spawn 2> cs.err)
kid=$(echo "$out" | awk '$1 == "child" { print $2 }')
is "$out/$(reason cs.data.$kid)/$(cmdline cs.data.$kid)" "child $kid signal 15/salvage/./kids exectarget" \
	"cpprof, spawn: the exec'd image's profile, from its keep"
mkdir dash
out=$("$MPROF" run -o dash/d.data /bin/sh -c './kids exectarget; echo done' 2> /dev/null)
f=$(ls dash | grep -v '^d.data$')
is "$out/$(echo $f | wc -w)/$(reason dash/$f)/$(bins dash/$f 77)" "done/1/salvage/1000" \
	"/bin/sh -c './kids exectarget; echo done' (dash: vfork): the killed command's profile written"

# 6-8: a child that calls _exit(3) saves its own profile, as before.
out=$("$MPROF" run -o x.data ./kids exit3 2> x.err)
kid=$(echo "$out" | awk '$1 == "child" { print $2 }')
is "$out" "child $kid status 3" "exit3: the program's output"
is "$(reason x.data.$kid)/$(ended x.data.$kid)/$(bins x.data.$kid 77)" "exit/_exit(3)/1000" \
	"exit3: the child's own save at _exit"
is "$(cat x.err)" "" "exit3: nothing said (stderr not a terminal)"
# To a terminal, one line says what else the run wrote and how to read it.
rm -f x.data*
script -qec "\"$MPROF\" run -o x.data ./kids exit3" /dev/null < /dev/null > tty.out 2>&1
kid=$(awk '$1 == "child" { print $2 }' tty.out)
like "$(tr -d '\r' < tty.out)" "^mprof: run: also wrote x\\.data\\.$kid, the profile of another process of the run \\(a forked child, or the image before an exec\\): 'mprof x\\.data\\.$kid' reads it\$" \
	"exit3, stderr a terminal: the child's file named"
rm -f x.data*
mkdir -p sub
script -qec "\"$MPROF\" run -o sub/x.data sh -c './kids exit3; ./kids exit3; ./kids exit3'" /dev/null < /dev/null > tty.out 2>&1
like "$(tr -d '\r' < tty.out)" "^mprof: run: also wrote 6 profiles of other processes of the run \\(forked children, images before an exec\\): sub/x\\.data\\.[0-9]+, sub/x\\.data\\.[0-9]+, \\.\\.\\.; 'mprof FILE' reads one, 'mprof merge' joins those of one program\$" \
	"three runs of kids under sh, -o sub/x.data, to a terminal: 6 more files (3 of kids, 3 of their children) named as -o was given"

# 9-11: a grandchild killed by SIGKILL, its parent ending normally.
out=$("$MPROF" run -o g.data ./kids grand 2> g.err)
kid=$(echo "$out" | awk '$1 == "child" { print $2 }')
gk=$(echo "$out" | awk '$1 == "grandchild" { print $2 }')
is "$out" "grandchild $gk signal 9
child $kid status 0" "grand: the program's output"
is "$(reason g.data.$kid)/$(bins g.data.$kid 77)/$(bins g.data.$kid 99)" "exit/1000/" \
	"grand: the child saved its own at exit"
is "$(reason g.data.$gk)/$(bins g.data.$gk 55)/$(bins g.data.$gk 77)/$(bins g.data.$gk 99)" \
	"salvage/300/1000/500" "grand: the grandchild's profile, from its keep"

# Eight children killed at once: eight profiles, and three said one by
# one, then how many more (a line each would bury the program's own).
cat > eight.c <<'CEOF'
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
int main(void)
{
	pid_t p[8];
	int killed = 0;

	for (int i = 0; i < 8; i++)
		if ((p[i] = fork()) == 0) {
			void *volatile q = malloc(1000);
			(void)q;
			pause();
			_exit(0);
		}
	for (int i = 0; i < 8; i++)
		kill(p[i], SIGTERM);
	for (int i = 0; i < 8; i++) {
		int st;
		waitpid(p[i], &st, 0);
		killed += WIFSIGNALED(st);
	}
	printf("%d killed\n", killed);
	return 0;
}
CEOF
cc -O0 -o eight eight.c || exit 1
script -qec "\"$MPROF\" run -o e8.data ./eight" /dev/null < /dev/null > e8.out 2>&1
tr -d '\r' < e8.out | grep -v '^8 killed$\|also wrote' > e8.err
is "$(grep -c '^8 killed' e8.out)/$(ls e8.data.* | wc -l)" "1/8" "eight children killed: eight profiles from their keeps"
is "$(grep -c 'ended without saving its profile' e8.err)/$(sed -n '$p' e8.err | sed 's/written to .*/.../')" \
	"3/mprof: run: 5 more children ended without saving their profiles; ..." \
	"eight children killed, stderr a terminal: three said one by one, then five more in one line"

# A daemon closes every descriptor from 3 up first (closefrom), the
# launcher's socket among them: its child killed then lost its profile.
# The socket is now the runtime's, not the program's to close
# (runtime/common/fds.c).
cat > daemon.c <<'CEOF'
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
int main(void)
{
	int st;
	pid_t p;

	closefrom(3);
	if ((p = fork()) == 0) {
		for (int i = 0; i < 100; i++) {
			void *volatile q = malloc(1000);
			(void)q;
		}
		raise(SIGKILL);
	}
	waitpid(p, &st, 0);
	printf("child %s\n", WIFSIGNALED(st) ? "killed" : "not killed");
	return 0;
}
CEOF
cc -O0 -o daemon daemon.c || exit 1
out=$("$MPROF" run -o d.data ./daemon 2> d.err)
is "$out/$(ls d.data.* 2> /dev/null | wc -l)" "child killed/1" "closefrom(3), then a child killed: its profile, from its keep"
f=$(ls d.data.* 2> /dev/null | head -1)
is "$(reason "$f")/$(bins "$f" 1000)" "salvage/100" "closefrom(3): the child's 100 allocations of 1000 bytes"

# python3's multiprocessing: `with Pool(2)` terminates its workers
# (SIGTERM) as it leaves; close() and join() let them end.
PY=/usr/bin/python3
cat > pool.py <<'PYEOF'
import multiprocessing as mp, sys, time
def work(n):
    keep = [str(i) * 10 for i in range(n)]
    if sys.argv[1] == "terminate":
        time.sleep(30)
    return len(keep)
if __name__ == "__main__":
    mp.set_start_method("fork")
    if sys.argv[1] == "terminate":
        with mp.Pool(2) as p:
            r = p.map_async(work, [50000, 50000])
            time.sleep(2)
    else:
        p = mp.Pool(2)
        print(sum(p.map(work, [50000, 50000])))
        p.close()
        p.join()
    print("done")
PYEOF
# named FILE: the bytes under work()'s list comprehension, by its Python name.
named() {
	"$MPROF" export --format folded "$1" | awk '$1 ~ /;pool[.]work;pool[.]work\.<locals>\.<listcomp>$/ { s += $2 } END { print s + 0 }'
}
if [ -x "$PY" ]; then
	out=$("$MPROF" run -o p.data "$PY" pool.py terminate 2> p.err)
	is "$out/$(ls p.data.* 2> /dev/null | wc -l)/$(cat p.err)" "done/2/" \
		"with Pool(2): two workers killed by terminate(), two profiles written from their keeps, nothing said to a file"
	bad=0
	for f in p.data.*; do
		[ "$(reason "$f")" = salvage ] && [ "$(named "$f")" -gt 1000000 ] || bad=$((bad + 1))
	done
	is "$bad" 0 "with Pool(2): each worker's profile has work()'s list, named, over 1 MB"
	out=$("$MPROF" run -o q.data "$PY" pool.py close 2> q.err)
	is "$out/$(cat q.err)" "100000
done/" "close() and join(): the program's output, nothing said"
	r=$(for f in q.data.*; do reason "$f"; done | sort | uniq -c | awk '{ print $1, $2 }')
	is "$r" "2 exit" "close() and join(): the two workers saved their own"
	out=$("$CPPROF" record -o c.data "$PY" pool.py terminate 2> c.err)
	is "$out/$(ls c.data.* 2> /dev/null | wc -l)" "done/2" "cpprof, with Pool(2): two workers' profiles from their keeps"
	bad=0
	for f in c.data.*; do
		"$CPPROF" export --format folded "$f" | grep -q ';pool[.]worker;pool[.]mapstar;pool[.]work' || bad=$((bad + 1))
	done
	is "$bad" 0 "cpprof, with Pool(2): each worker's samples under worker;mapstar;work"
else
	absent 6 "$PY (Debian's python3, scripts/install-deps.sh)"
fi
# A child in a pid namespace of its own (unshare -fp): it sends its
# keep with its own pid, 1 or 2 there.  The launcher waited for its own
# process 1, the machine's init, and stayed for ever in the background
# (mprof run and cpprof record alike); a child killed there had no
# profile written.  The launcher waits by the pid the kernel gives it.
if unshare -fp true 2> /dev/null; then
	"$MPROF" run -o "$T/ns.data" unshare -fp ./kids term > ns.out 2> /dev/null
	st=$? kid=$(awk '$1 == "child" { print $2 }' ns.out)
	is "$st/$(cat ns.out)" "0/child 2 signal 15" "unshare -fp: the program's output and status (its child is 2 in there)"
	is "$(reason ns.data.2)/$(bins ns.data.2 77)" "salvage/1000" \
		"... its child killed in the namespace: its profile written from its keep, under its own pid (2)"
	i=0
	while pgrep -f "$T/ns.data" > /dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
	is "$(pgrep -fa "$T/ns.data")" "" "... and no launcher left behind in the background"
	# unshare --mount-proc mounts the new namespace's /proc over its own:
	# /proc/self is gone for it.  Its file named no command and no
	# executable, its own frames ??+0x38d2, and said another thread was
	# alive.  What was read before is kept; the rest says why.
	"$MPROF" run --leaks -o mp.data unshare -fp --mount-proc true
	is "$("$MPROF" dump mp.data | sed -n 's/^info cmdline //p')/$("$MPROF" mp.data | grep -c '??+')/$("$MPROF" dump mp.data | sed -n 's/^info freeres //p')" \
		"unshare -fp --mount-proc true/0/skipped: its threads cannot be counted (/proc/self/task cannot be read)" \
		"unshare --mount-proc: its command line, its frames named, why libc's buffers are kept"
else
	skip 4 "unshare -fp fails here bare (pid namespaces need root)"
fi
done_testing
