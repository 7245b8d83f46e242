# A program linked with libmprof (static or shared) and also run with
# libmprof.so preloaded (say, under `mprof run`): the monitor whose malloc
# the process calls records; the other stays out of the way and must not
# overwrite the file with an empty profile at exit.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/rt.sh"
plan 6

rt_build early rt_early.c
cd "$T" || exit 1
for m in so a; do
	rm -f e.data*
	MPROF_OUT=e.data LD_PRELOAD="$LIBMPROF/libmprof.so" "$T/early-$m"
	ok $? "$m + preload: runs"
	is "$(rt_bins e.data | tr '\n' ,)" "11 3 1 33 11,13 2 0 26 0,17 1 0 17 0," \
		"$m + preload: one profile, every allocation counted once"
	is "$(ls e.data*)" "e.data" "$m + preload: no other file"
done
done_testing
