# The address map (runtime/mprof/addrmap.c): exact sizes across its encodings
# (in the slot below 255 bytes, in the next slots up to beyond 2^32), and
# objects 16 bytes apart under another allocator (tcmalloc: 16-byte
# granules) as well as 32 apart under glibc (32-byte granules).
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/rt.sh"
plan 11

rt_build sizes rt_sizes.c
cd "$T" || exit 1
for m in $RT_MODES; do
	want=$(rt_run $m sizes sizes 2>/dev/null)
	MPROF_OUT=s.data rt_run $m sizes sizes >/dev/null
	is "$(rt_totals s.data)" "$want 0 0" "$m: every size freed exactly (allocs frees bytes freed unknown dropped)"
	is "$(rt_sums s.data)" "$(echo $want | awk '{ print $1, $3, $2, $4 }')" "$m: the stacks sum to the same"
	want=$(rt_run $m sizes dense 2>/dev/null)
	MPROF_OUT=d.data rt_run $m sizes dense >/dev/null 2>&1
	is "$(rt_totals d.data)" "$want 0 0" "$m: 20000 adjacent objects, exact"
done

tc=$(ls /usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4 2>/dev/null)
if [ -n "$tc" ]; then
	want=$(LD_PRELOAD=$tc "$T/sizes" dense 2>"$T/close")
	like "$(cat "$T/close")" "apart: [1-9]" "tcmalloc does put objects 16 bytes apart"
	# tcmalloc allocates for itself at start (not counted by the program);
	# it loads libstdc++, whose exception pool the monitor would release
	# at exit (a free more: MPROF_FREERES, tests/e2e/90): not here.
	MPROF_FREERES=0 MPROF_OUT=t.data LD_PRELOAD="$LIBMPROF/libmprof.so $tc" "$T/sizes" dense >/dev/null 2>&1
	is "$(rt_totals t.data | awk '{ print $2, $4, $5, $6 }')" "$(echo $want | awk '{ print $2, $4 }') 0 0" \
		"over tcmalloc (16-byte granules): every free found, exact bytes"
else
	pass "# SKIP libtcmalloc_minimal not installed"
	pass "# SKIP libtcmalloc_minimal not installed"
fi
done_testing
