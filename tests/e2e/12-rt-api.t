# The mprof.1 API: set_mprof_autosave (and MPROF_AUTOSAVE), mprof_stop,
# mprof_restart (a second file with only what came after; frees of older
# objects are unknown frees, not crashes).
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/rt.sh"
plan 42

rt_build api rt_api.c
cd "$T" || exit 1
for m in $RT_MODES; do
	rm -f *.data*
	# 250 allocations then exit_group (no save at exit): the file is the autosave
	# made at the 200th, whole.
	MPROF_OUT=auto.data rt_run $m api autosave 100 250
	ok $? "$m: autosave run"
	is "$(info auto.data reason)" autosave "$m: autosave wrote the file"
	is "$(rt_bin auto.data 40)" "40 200 0 8000 0" "$m: saved at the 200th allocation"
	MPROF_OUT=env.data MPROF_AUTOSAVE=50 rt_run $m api autosave 0 120
	is "$(info env.data reason)/$(rt_bin env.data 40)" "autosave/40 100 0 4000 0" \
		"$m: MPROF_AUTOSAVE=50: saved at the 100th allocation"

	MPROF_OUT=stop.data rt_run $m api stop
	ok $? "$m: stop run"
	is "$(info stop.data reason)" stop "$m: mprof_stop wrote the file (not rewritten at exit)"
	is "$(rt_bins stop.data | tr '\n' ,)" "41 5 0 205 0," "$m: only allocations before mprof_stop"

	MPROF_OUT=one.data rt_run $m api restart two.data
	ok $? "$m: restart run: frees of objects from before the restart do not crash"
	is "$(info one.data reason)/$(rt_bins one.data | tr '\n' ,)" "stop/41 5 0 205 0," \
		"$m: the first file has the first phase"
	is "$(info two.data reason)/$(rt_bins two.data | tr '\n' ,)" "exit/43 7 2 301 86," \
		"$m: the second file has only what came after mprof_restart"
	is "$(rt_totals two.data)" "7 2 301 86 8 0" "$m: 8 frees of older objects are unknown frees"
	is "$(rt_sums two.data)" "7 301 2 86" "$m: stack counters agree"

	MPROF_OUT=three.data rt_run $m api restart-nostop four.data
	is "$(ls three.data 2>&1 >/dev/null | wc -l)/$(rt_totals four.data)" "1/2 0 86 0 4 0" \
		"$m: restart without stop: nothing written to the old name; 4 unknown frees"
	is "$(rt_bins four.data | tr '\n' ,)" "43 2 0 86 0," "$m: only post-restart bins"
done
done_testing
