# mprof.h's API for a program's own allocators (issue 15, item 2):
# mprof_category, mprof_alloc and mprof_free, with a pool allocator
# (tests/progs/pool.c) whose objects are 24 bytes apart inside malloc'd
# chunks.  The figures are the program's own: 1000 nodes of 24 bytes and
# 2000 edges of 40 kept, 1000 edges and 1000 nodes given back (the freed
# nodes are reused by the pool).  Without the monitor the calls are no-ops.
. "$(dirname "$0")/../lib.sh"
plan 13
cd "$T" || exit 1
cc_prog pool pool.c || exit 1

is "$(./pool)/$?" "categories 0 0/0" "no monitor: mprof_category gives 0, the program runs as ever"
out=$("$MPROF" run -o p.data ./pool)
is "$out" "categories 1 2" "under the monitor: categories 1 and 2"
t=$("$MPROF" ./pool p.data)
like "$t" '^mprof: \./pool \(pid [0-9]+\): 5003 allocations of 340096 bytes, 2001 frees of 68096 bytes, 272000 bytes kept, peak 312000 bytes live$' \
	"header: 5000 pool objects and 3 malloc blocks (stdout's buffer, released at exit by __libc_freeres); 2001 frees; the peak, 2 chunks + 1000 nodes + 3000 edges"
like "$t" '^ +80000 \(29\) +3000 +120000 \(35\) +1000 +40000 \(11\) +main > build_graph > pool_get > \[edge\]$' \
	"leak table: the edges kept, on their stack, category [edge] innermost"
like "$t" '^ +24000 \( 8\) +1000 +24000 \( 7\) +main > build_graph > pool_get > \[node\]$' \
	"leak table: the nodes kept"
unlike "$t" 'churn > pool_get > \[node\]' "churn's nodes all came back: no leak"
like "$t" '^ +14 +48000 +14 +24000 +8 +0 +2000  \[node\]$' \
	"direct allocation: [node] 2000 objects, 48000 bytes, 24000 kept, no temporaries (a pool's objects)"
unlike "$t" 'mprof_alloc' "mprof.h's inline wrapper is not a frame"
f=$("$MPROF" export --format folded p.data)
like "$f" '^main;build_graph;pool_get;\[edge\] 80000$' "export: the category is the innermost frame"
is "$("$MPROF" dump p.data | awk '$1 == "info" && $2 ~ /^category/ { print $2 "=" $3 }' | tr '\n' ' ')" \
	"category.1=node category.2=edge " "the file names the categories in INFO"

# Linked with -lmprof, no preload: the weak references bind at load.
cc -g -O0 -I"$TOP/include" -o pool-l "$TOP/tests/progs/pool.c" -L"$LIBMPROF" -lmprof -Wl,-rpath,"$LIBMPROF" || exit 1
is "$(MPROF_OUT=$T/l.data ./pool-l)" "categories 1 2" "-lmprof: the categories are made"
like "$("$MPROF" ./pool-l l.data)" '24000 \( 8\) +1000 +24000 \( 7\) +main > build_graph > pool_get > \[node\]' \
	"-lmprof: the same leak table"

# A category never made: the report is dropped, and counted as such.
cat > bad.c <<'C'
#include <mprof.h>
static char buf[64];
int main(void) { mprof_alloc(buf, 8, 77); mprof_alloc(buf + 16, 8, 0); mprof_free(buf + 16); mprof_free(buf + 32); return 0; }
C
cc -g -I"$TOP/include" -o bad bad.c || exit 1
"$MPROF" run -o b.data ./bad
is "$(info b.data dropped)/$(info b.data allocs)/$(info b.data frees)/$(info b.data unknown_frees)" "1/1/1/1" \
	"an unknown category is dropped; an unknown free is counted as one"
done_testing
