# What the monitor writes besides counters: the INFO facts and the MODULES
# list (main executable first, no vDSO, build-ids), in all three modes.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/rt.sh"
plan 33

rt_build exit rt_exit.c
cd "$T" || exit 1
for m in $RT_MODES; do
	rm -f i.data
	MPROF_OUT=i.data rt_run $m exit 0 >/dev/null 2>&1
	dump=$("$MPROF" dump i.data)
	val() { printf '%s\n' "$dump" | awk -v k="$1" '$1 == "info" && $2 == k { sub(/^info [^ ]+ /, ""); print }'; }
	exe=$T/exit$( [ $m = preload ] || echo "-$m")
	is "$(val cmdline)" "$exe 0" "$m: cmdline: the arguments joined by spaces"
	is "$(val exe)" "$exe" "$m: exe: /proc/self/exe"
	like "$(val pid)" '^[1-9][0-9]*$' "$m: pid"
	ok $([ "$(val start_ns)" -gt 1000000000000000000 ] && [ "$(val end_ns)" -ge "$(val start_ns)" ]; echo $?) \
		"$m: start_ns <= end_ns, wall-clock nanoseconds"
	is "$(val reason)/$(val monitor)" "exit/mprof-runtime 1" "$m: reason and monitor"
	like "$(val unwinder)" '.' "$m: unwinder named"
	is "$(val allocs) $(val frees) $(val bytes) $(val bytes_freed) $(val unknown_frees) $(val dropped)" \
		"$(rt_totals i.data)" "$m: totals present"
	first=$(printf '%s\n' "$dump" | awk '$1 == "module" { print $NF; exit }')
	is "$first" "$exe" "$m: the first module is the executable"
	like "$(printf '%s\n' "$dump" | grep '^module')" ' [0-9a-f]+ \[vdso\]$' "$m: the vDSO as [vdso], with its build-id"
	like "$(printf '%s\n' "$dump" | grep '^module')" '^module 0x[0-9a-f]+ 0x[0-9a-f]+ 0x[0-9a-f]+ 0x[0-9a-f]+ [0-9a-f]{40} /.*/libc\.so\.6$' \
		"$m: libc with its 20-byte build-id"
	printf '%s\n' "$dump" | awk '$1 == "module" { print $2, $3 }' >"$T/ranges"
	bad=0
	while read -r lo hi; do [ $((lo)) -lt $((hi)) ] || bad=1; done <"$T/ranges"
	ok $bad "$m: every module has start < end"
done
done_testing
