# The address map (runtime/mprof/addrmap.c): exact sizes across its encodings
# (in the slot below 255 bytes, in the next slots up to beyond 2^32), and
# objects 16 bytes apart under another allocator (tcmalloc: 16-byte
# granules) as well as 32 apart under glibc (32-byte granules), and 8
# bytes apart (tcmalloc's and jemalloc's objects of 1..8 bytes, 8 past a
# multiple of 16: the map's second shadow).
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/rt.sh"
plan 20

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
	absent 2 "libtcmalloc_minimal (scripts/install-deps.sh installs libgoogle-perftools-dev)"
fi

# Objects of 1..8 bytes, 8 apart, under tcmalloc and jemalloc: before the
# second shadow, their frees went unknown and their bytes showed as kept.
# glibc puts none of them 8 past a multiple of 16.
is "$("$T/sizes" tiny 2>&1 >/dev/null)" "objects 8 past a multiple of 16: 0" \
	"glibc: no object 8 past a multiple of 16"
for a in /usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4 /usr/lib/x86_64-linux-gnu/libjemalloc.so.2; do
	name=$(basename "$a" | sed 's/\.so.*//')
	if [ ! -f "$a" ]; then
		absent 4 "$a (scripts/install-deps.sh installs libgoogle-perftools-dev and libjemalloc2)"
		continue
	fi
	want=$(LD_PRELOAD=$a "$T/sizes" tiny 2>"$T/odd")
	like "$(cat "$T/odd")" "16: [1-9][0-9][0-9]" "$name puts hundreds of objects 8 past a multiple of 16"
	MPROF_FREERES=0 MPROF_OUT=o.data LD_PRELOAD="$LIBMPROF/libmprof.so $a" "$T/sizes" tiny >/dev/null 2>&1
	is "$(rt_totals o.data | awk '{ print $2, $4, $5, $6 }')" "$(echo $want | awk '{ print $2, $4 }') 0 0" \
		"over $name, 8 bytes apart: every free found, exact bytes (frees freed unknown dropped)"
	# The leak scan reads both shadows: the 2000 kept objects (from a
	# static array) are reachable, none is lost or "in no class".
	MPROF_FREERES=0 MPROF_LEAKS=scan MPROF_OUT=k.data LD_PRELOAD="$LIBMPROF/libmprof.so $a" \
		"$T/sizes" tiny >/dev/null 2>&1
	leaks=$("$MPROF" "$T/sizes" k.data)
	like "$leaks" "definitely lost: 0 bytes in 0 objects" "over $name, the leak scan: nothing lost"
	unlike "$leaks" "in no class" "over $name, the leak scan: every kept object is classed"
done
done_testing
