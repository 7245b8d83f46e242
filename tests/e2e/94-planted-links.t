# Files written as root where another user may write (issue 22, item 3).
# In a world-writable directory (not sticky: the kernel's
# protected_symlinks would hide the bug there), the user nobody plants a
# symbolic link to a file of root's at every name the tools and the
# collectors used to open: FILE.tmp.PID for the collectors (mprof run,
# cpprof record, cfprof record) and merge, planted by a wrapper for its
# own pid before it execs the program or the tool (the pid stays); the
# output itself for export.  Root's file must stay as it was, and each
# profile be written beside the link, not through it.  Files are created
# with mode 0666 less the umask (027: 0640), and a target that is no
# regular file (a device) is refused rather than replaced.
. "$(dirname "$0")/../lib.sh"
plan 26
CPPROF=$B/bin/cpprof
CFPROF=$B/bin/cfprof

# A program that clears its umask (a daemon: nginx's umask(0)) gets
# files of the umask it started with, not world-writable ones; a forked
# child's too.
cat > "$T/um.c" <<'CEOF'
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
int main(void)
{
	void *volatile p;
	pid_t c;

	umask(0);
	p = malloc(100);
	if ((c = fork()) == 0) {
		p = malloc(200);
		return 0;
	}
	waitpid(c, NULL, 0);
	printf("%d\n", p != NULL);
	return 0;
}
CEOF
cc -O0 -o "$T/um" "$T/um.c" || exit 1
(cd "$T" && umask 022 && "$MPROF" run -o um.data ./um > /dev/null && "$CPPROF" record -o umc.data ./um > /dev/null)
mode() { stat -c %a "$1"; }
is "$(mode "$T/um.data")/$(mode "$T"/um.data.[0-9]*)" "644/644" \
	"mprof run, umask 022, a program that sets umask 0: its file and its child's are 0644"
is "$(mode "$T/umc.data")" 644 "cpprof record: the same"
(cd "$T" && umask 022 && MPROF_OUT=ump.data LD_PRELOAD="$LIBMPROF/libmprof.so" ./um > /dev/null)
is "$(mode "$T/ump.data")" 644 "preloaded without the launcher: the same"

if [ "$(id -u)" != 0 ] || ! command -v setpriv > /dev/null || ! id nobody > /dev/null 2>&1; then
	for i in $(seq 23); do pass "# SKIP needs root, setpriv and the user nobody"; done
	done_testing
fi
. "$TOP/tests/cf.sh"
chmod 755 "$T"
D=$T/pub
mkdir "$D" && chmod 777 "$D"
printf 'precious\n' > "$T/victim"
chmod 644 "$T/victim"
# plant PREFIX CMD...: as nobody, a link PREFIX<pid> to the victim, then
# CMD in this process (its pid is the one planted for).  LD_PRELOAD off
# for the planting only: the profiled program is CMD.
cat > "$T/plant" << EOF
#!/bin/sh
env -u LD_PRELOAD setpriv --reuid=nobody --regid=nogroup --clear-groups ln -s "$T/victim" "\$1\$\$" || exit 99
shift
exec "\$@"
EOF
chmod 755 "$T/plant"
# planted NAME: the links nobody planted at NAME.tmp.<pid> (1: the attack was set up).
planted() { find "$D" -name "$1.tmp.*" -type l -user nobody | wc -l; }
# intact NAME: the victim unchanged, and NAME a regular file of root's.
intact() { echo "$(cat "$T/victim")/$([ -f "$D/$1" ] && [ ! -L "$D/$1" ] && stat -c %U "$D/$1")"; }

cc_prog "$T/fg" fg.c
cf_build cf fg.c

"$MPROF" run -o "$D/m.data" "$T/plant" "$D/m.data.tmp." "$T/fg" > /dev/null 2>&1
is "$(planted m.data)" 1 "mprof run: nobody planted a link at m.data.tmp.PID"
is "$(intact m.data)" "precious/root" "mprof run: the victim is unchanged, the profile written beside the link"
"$MPROF" dump "$D/m.data" > /dev/null
ok $? "mprof run: and it reads"

"$CPPROF" record -o "$D/c.data" "$T/plant" "$D/c.data.tmp." "$T/fg" > /dev/null 2>&1
is "$(planted c.data)" 1 "cpprof record: a link planted at c.data.tmp.PID"
is "$(intact c.data)" "precious/root" "cpprof record: the victim is unchanged, the profile written"
"$CPPROF" -c function "$D/c.data" > /dev/null
ok $? "cpprof record: and it reads"

"$CFPROF" record -o "$D/f.data" "$T/plant" "$D/f.data.tmp." "$T/cf" > /dev/null 2>&1
is "$(planted f.data)" 1 "cfprof record: a link planted at f.data.tmp.PID"
is "$(intact f.data)" "precious/root" "cfprof record: the victim is unchanged, the profile written"
"$CFPROF" "$D/f.data" > /dev/null
ok $? "cfprof record: and it reads"

"$T/plant" "$D/mm.data.tmp." "$MPROF" merge "$D/m.data" "$D/m.data" -o "$D/mm.data"
is "$?/$(planted mm.data)" 0/1 "merge: a link planted at mm.data.tmp.PID"
is "$(intact mm.data)" "precious/root" "merge -o: the victim is unchanged, the merged profile written"
"$MPROF" dump "$D/mm.data" > /dev/null
ok $? "merge -o: and it reads"

for fmt in folded pprof html; do
	setpriv --reuid=nobody --regid=nogroup --clear-groups ln -s "$T/victim" "$D/e.$fmt"
	"$MPROF" export --format $fmt -o "$D/e.$fmt" "$T/fg" "$D/m.data"
	is "$?/$(intact e.$fmt)" "0/precious/root" "export --format $fmt -o a link: the link replaced, not followed"
done
like "$(cat "$D/e.folded")" '^main;.* [0-9]+$' "export: the folded stacks are in the file"

# The umask decides the mode, as for any file a program creates.
(
	umask 027
	"$MPROF" run -o "$D/u.data" "$T/fg" > /dev/null 2>&1
	"$CPPROF" record -o "$D/uc.data" "$T/fg" > /dev/null 2>&1
	"$MPROF" merge "$D/u.data" -o "$D/um.data"
	"$MPROF" export --format folded -o "$D/u.folded" "$D/u.data"
)
is "$(stat -c %a "$D/u.data" "$D/uc.data" "$D/um.data" "$D/u.folded" | tr '\n' ' ')" \
	"640 640 640 640 " "umask 027: mprof run, cpprof record, merge and export make 0640 files"
is "$(find "$D" -name '*.tmp.*' ! -type l | wc -l)" 0 "no temporary file left behind"

# A target that is no regular file, or a link to one, is refused: the
# rename would replace it.  A null device of the test's own, never
# /dev/null: the code before this test replaced the device with the file.
mknod "$T/null" c 1 3
"$MPROF" export --format folded -o "$T/null" "$D/m.data" 2> "$T/err"
is "$?/$(cat "$T/err")" "2/mprof: export: cannot write $T/null: it exists and is not a regular file" \
	"export -o a device: refused in one line, exit 2"
ln -s "$T/null" "$D/null"
"$MPROF" merge "$D/m.data" -o "$D/null" 2> "$T/err"
is "$?/$(cat "$T/err")" "2/mprof: merge: $D/null: it exists and is not a regular file" \
	"merge -o a link to a device: refused"
out=$("$MPROF" run -o "$T/null" "$T/fg" 2>&1 > /dev/null)
is "$out" "mprof: run: $T/fg wrote no profile: cannot write $T/null: it exists and is not a regular file" \
	"mprof run -o a device: the launcher, whose file it is to write then, says it cannot write there (one line)"
is "$(stat -c %F "$T/null" "$D/null" | tr '\n' ' ')" "character special file symbolic link " \
	"and the device and the link to it are still there"
mkdir "$D/dir"
"$MPROF" export --format folded -o "$D/dir" "$D/m.data" 2> "$T/err"
is "$?/$(cat "$T/err")" "2/mprof: export: cannot write $D/dir: Is a directory" "export -o a directory: refused"
done_testing
