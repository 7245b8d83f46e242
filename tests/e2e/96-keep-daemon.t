# A daemon's workers keep their profiles: its first process ends as it
# detaches, so the launcher used to end with it, and a worker that gave
# up root (nginx's run as nobody, dnsmasq's) could not write its own
# file, nor had anyone to write it from its keep: lost, nothing said.
# Now children still running when the program ends get a keeper of
# their own, in the background (lib/run/keeper.c's linger): the
# launcher returns at once, as bare, and the worker's profile is
# written from its keep when it ends.
. "$(dirname "$0")/../lib.sh"
plan 7
cd "$T" || exit 1
if [ "$(id -u)" != 0 ]; then
	skip 6 "setuid to nobody needs root"
	done_testing
fi
chmod 755 "$T"
cc -O0 -o dmn "$TOP/tests/progs/rt_daemon.c" || exit 1
# Output to files: the daemon keeps the launcher's standard streams.
"$MPROF" run -o "$T/d.data" ./dmn > pid.txt 2> err.txt
st=$?
kid=$(cat pid.txt)
alive=$(kill -0 "$kid" 2> /dev/null && echo running)
is "$st/$alive" "0/running" "the launcher returns as the program's first process ends, the daemon still running"
is "$(ls d.data.* 2> /dev/null)" "" "no profile of the daemon yet"
for i in $(seq 100); do
	[ -e "d.data.$kid" ] && break
	sleep 0.1
done
is "$(info d.data.$kid reason)" salvage "once it ends, its profile, written from its keep (it could not write it, as nobody)"
is "$("$MPROF" dump d.data.$kid | awk '$1 == "bin" && $2 == 1000 { print $3 }')" 100 \
	"the daemon's 100 allocations of 1000 bytes"
for i in $(seq 50); do
	pgrep -f "run -o $T/d.data" > /dev/null || break
	sleep 0.1
done
is "$(pgrep -f "run -o $T/d.data")" "" "the keeper left behind is gone with the daemon"
is "$(info d.data reason)" exit "the first process saved its own at exit"

# The keeper holds nothing of the launcher's: a descriptor it inherited
# (a harness's pipe as 3: the harness waited for the keeper, 3 s) or its
# directory.
exec 3> held.txt
"$MPROF" run -o "$T/e.data" ./dmn > pid2.txt 2> err2.txt
exec 3>&-
kp=$(pgrep -f "run -o $T/e.data" | head -1)
is "$(ls -l /proc/$kp/fd 2> /dev/null | grep -c held.txt)/$(readlink /proc/$kp/cwd)" "0//" \
	"the keeper left behind holds none of the launcher's inherited descriptors, and no directory"
for i in $(seq 50); do
	pgrep -f "run -o $T/e.data" > /dev/null || break
	sleep 0.1
done
done_testing
