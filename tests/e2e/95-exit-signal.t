# A signal that arrives while a collector saves at _exit (the process is
# ending; bare, it would already be gone: multiprocessing's terminate()
# sends its workers SIGTERM as they _exit) neither kills the process
# with that signal nor loses the file: tests/progs/exit_alarm.c ends
# with _exit(7) 200 us before its timer's SIGALRM.  Without a launcher,
# the runtime saves at _exit (with one, the keep holds the tables).
. "$(dirname "$0")/../lib.sh"
plan 4
CPPROF=$B/bin/cpprof
cd "$T" || exit 1
cc -g -O0 -o alarm "$TOP/tests/progs/exit_alarm.c" || exit 1

./alarm
is "$?" 7 "bare: _exit(7)"
MPROF_OUT=m.data LD_PRELOAD=$LIBMPROF/libmprof.so ./alarm
st=$?
is "$st/$(ls m.data* 2> /dev/null | tr '\n' ' ')" "7/m.data " \
	"mprof at _exit: status 7, the file written whole (no m.data.tmp.*)"
is "$("$MPROF" dump m.data | sed -n 's/^info ended //p')/$("$MPROF" dump m.data | sed -n 's/^info allocs //p')" \
	"_exit(7)/20000" "mprof: the file says _exit(7) and holds the 20000 allocations"
CPPROF_OUT=c.data LD_PRELOAD=$B/lib/libcpprof.so ./alarm
st=$?
is "$st/$(ls c.data* 2> /dev/null | tr '\n' ' ')" "7/c.data " "cpprof at _exit: status 7, the file written"
done_testing
