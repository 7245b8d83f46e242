# What is kept, classified (issue 15, item 5): with MPROF_LEAKS=scan (or
# mprof run --leaks) the monitor scans the roots at exit and puts every
# object still live in one of memcheck's classes: definitely lost,
# indirectly lost, possibly lost, still reachable.  Each chain's bytes of
# each class are known here to the byte (tests/progs/leakscan.c,
# leakscan.cc), and each class's total equals valgrind memcheck's LEAK
# SUMMARY (--leak-check=full --show-leak-kinds=all).  Without the variable
# nothing is classified and the leak table is as it was.
. "$(dirname "$0")/../lib.sh"
plan 46
cd "$T" || exit 1
cc_prog ls leakscan.c -pthread || exit 1
cc_prog leaks leaks.c -pthread || exit 1
g++ -g -O0 -o lscc "$TOP/tests/progs/leakscan.cc" || exit 1
g++ -g -O0 -o leakscc "$TOP/tests/progs/leaks.cc" || exit 1

# The four classes of a data file, summed over its stacks, as
# "lost BYTES/OBJECTS indirect .. possible .. reachable ..".
classes() {
	"$MPROF" dump "$1" | awk '
		$1 == "counter" { col[$2] = 4 + n++ }
		$1 == "stack" { for (k = 0; k < 8; k++) s[k] += $(col[name[k]]) }
		BEGIN { split("lost_bytes lost_objects indirect_bytes indirect_objects possible_bytes possible_objects reachable_bytes reachable_objects", a)
			for (k = 0; k < 8; k++) name[k] = a[k + 1] }
		END { printf "lost %d/%d indirect %d/%d possible %d/%d reachable %d/%d\n",
			s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7] }'
}
# The same from memcheck's LEAK SUMMARY.
memcheck() {
	valgrind --leak-check=full --show-leak-kinds=all "$@" 2>&1 > /dev/null | tr -d , | awk '
		/definitely lost:/ { l = $4 "/" $7 } /indirectly lost:/ { i = $4 "/" $7 }
		/possibly lost:/ { p = $4 "/" $7 } /still reachable:/ { r = $4 "/" $7 }
		END { printf "lost %s indirect %s possible %s reachable %s\n", l, i, p, r }'
}
# Each chain's value of one counter (folded export), sorted, on one line.
chains() {
	"$MPROF" export --format folded --counter "$2" "$1" | sort | tr '\n' ' ' | sed 's/ $//'
}
leaktable() { "$MPROF" "$@" | awk '/^--------- / { on = /MEMORY LEAKS/ } on'; }
scan_info() { "$MPROF" dump "$1" | sed -n "s/^info $2 //p"; }

MPROF_LEAKS=scan "$MPROF" run -o c.data ./ls > out
is "$(cat out)/$(scan_info c.data leak_scan)" "done/complete" \
	"C: the output is the program's; the scan was complete (no other thread)"
is "$(chains c.data lost_space)" "main;lose_cycle 32 main;lose_direct 100 main;lose_list 48" \
	"definitely lost by chain: the block nothing points to, the head of a lost list, the lower of a lost cycle"
is "$(chains c.data lost_objects)" "main;lose_cycle 1 main;lose_direct 1 main;lose_list 1 main;lose_zero 1" \
	"definitely lost objects by chain: malloc(0) too"
is "$(chains c.data indirect_space)" "main;lose_cycle 32 main;lose_list 144" \
	"indirectly lost: the list's other 3 nodes, the cycle's other block"
is "$(chains c.data possible_space)" "main;keep_interior 224" \
	"possibly lost: the block only p + 8 points to, and the one it points to from its start"
is "$(chains c.data reachable_space)" \
	"main;keep_global 500 main;keep_length64 40 main;keep_tls 72 main;keep_tree 96" \
	"still reachable: a global, a tree under one, a thread-local, p + 8 after a length word (length64)"
is "$(classes c.data)" "lost 180/4 indirect 176/4 possible 224/2 reachable 708/6" "C: the classes' totals"
is "$(classes c.data)" "$(memcheck ./ls)" "C: each class's total = memcheck's"
t=$(leaktable ./ls c.data)
like "$t" '^  definitely lost: 180 bytes in 4 objects$' "the table opens with memcheck's summary"
like "$t" '^  still reachable: 708 bytes in 6 objects$' "... down to still reachable"
like "$t" '^ +192 \(14\) +48 +144 +4 +192 \(14\) +main > lose_list$' \
	"a chain's row: kept, then lost and indirect (blank: none possible or reachable)"
is "$(printf '%s\n' "$t" | awk '/ main > / { print $NF }' | tr '\n' ' ')" \
	"lose_list lose_direct lose_cycle keep_interior keep_global keep_tree keep_tls keep_length64 " \
	"chains lost first (by bytes lost), then possibly lost, then still reachable"

MPROF_LEAKS=scan "$MPROF" run -o d.data ./ls deep > /dev/null
is "$(chains d.data reachable_space | grep -o 'deep3 [0-9]*')" "deep3 300" \
	"exit called 3 calls down: the caller's frame is a root, its object reachable"
is "$(classes d.data)" "$(memcheck ./ls deep)" "exit from a function: each class's total = memcheck's"

MPROF_LEAKS=scan "$MPROF" run -o l.data ./leaks > /dev/null
is "$(classes l.data)" "$(memcheck ./leaks)" "test 90's program: each class's total = memcheck's"

MPROF_LEAKS=scan "$MPROF" run -o x.data ./leakscc > /dev/null
is "$(classes x.data)" "lost 40/1 indirect 0/0 possible 0/0 reachable 494/3" \
	"C++: an int[10] lost; a W, its string and vector reachable (libstdc++'s pool released)"
is "$(classes x.data)" "$(memcheck ./leakscc)" "C++: each class's total = memcheck's"
MPROF_LEAKS=scan "$MPROF" run -o y.data ./lscc > /dev/null
is "$(classes y.data)" "lost 56/2 indirect 40/1 possible 0/0 reachable 161/4" \
	"C++: new[] of objects with destructors and a base of two reached by interior pointers (memcheck's heuristics)"
is "$(classes y.data)" "$(memcheck ./lscc)" "C++ heuristics: each class's total = memcheck's"
like "$(chains y.data reachable_space)" 'main;keep;operator new 120 ' \
	"reachable: an array from new[] known only past its count (48), a C only by its B part (40), a string (32)"

# pprof (built by make check, as for tests/e2e/81) reads the classes.
PPROF=$B/tools/pprof
"$MPROF" export --format pprof -o c.pb.gz ./ls c.data
is "$("$PPROF" -raw c.pb.gz 2> /dev/null | awk '/^Samples:/ { getline; print; exit }' | cut -d' ' -f9-)" \
	"lost_objects/count lost_space/bytes indirect_objects/count indirect_space/bytes possible_objects/count possible_space/bytes reachable_objects/count reachable_space/bytes" \
	"pprof export: the classes' sample types after the peak's and the temporaries', lost first"
is "$("$PPROF" -raw c.pb.gz 2> /dev/null | awk '
	/^Samples:/ { s = 1; getline; next } /^Locations/ { s = 0 }
	s && /:/ { split($0, a, ":"); split(a[1], v, " "); for (k = 10; k <= 16; k += 2) t[k] += v[k] }
	END { printf "%d/%d/%d/%d\n", t[10], t[12], t[14], t[16] }')" "180/176/224/708" \
	"pprof reads each class's bytes"

# Not asked: nothing classified, the table as before.
"$MPROF" run -o n.data ./ls > /dev/null
is "$("$MPROF" dump n.data | grep -c -e '^counter lost_' -e '^info leak_scan')" 0 \
	"no MPROF_LEAKS: no class counters, no leak_scan in INFO"
t=$(leaktable ./ls n.data)
like "$t" '^   kept bytes  \(%\)    allocs        bytes  \(%\)     frees        bytes  \(%\)  path$' \
	"no MPROF_LEAKS: the table's columns as before"
unlike "$t" 'definitely lost' "no MPROF_LEAKS: no summary"
"$MPROF" run --leaks -o r.data ./ls > /dev/null
is "$(classes r.data)" "lost 180/4 indirect 176/4 possible 224/2 reachable 708/6" "mprof run --leaks is MPROF_LEAKS=scan"

# Objects a pool reports (mprof_alloc) inside a malloc'd chunk.
MPROF_LEAKS=scan "$MPROF" run -o p.data ./ls pool > /dev/null
is "$(chains p.data lost_space | grep -o 'slot\] [0-9]*')/$(chains p.data indirect_space | grep -o 'slot\] [0-9]*')/$(chains p.data reachable_space | grep -o 'slot\] [0-9]*')" \
	"slot] 224/slot] 32/slot] 64" \
	"pool objects: 7 lost, 1 only a lost one points to, 2 reachable (one at the chunk's start)"
like "$(chains p.data reachable_space)" 'main;pool 320' "the pool's chunk: reachable from a global"

# Other threads.
MPROF_LEAKS=scan "$MPROF" run -o t.data ./ls thread > /dev/null
is "$(scan_info t.data leak_scan)" "1 other thread scanned by its stack, not its registers" "a thread blocked at exit: scanned from the stack pointer the kernel reports"
is "$(chains t.data reachable_space | grep -o 'sleeper [0-9]*')" "sleeper 400" \
	"what only the blocked thread's stack points to is reachable"
is "$(classes t.data | sed 's/ possible [^ ]*//')" "$(memcheck ./ls thread | sed 's/ possible [^ ]*//')" \
	"a thread blocked at exit: lost, indirect and reachable totals = memcheck's"
is "$(chains t.data possible_space | grep -o 'keep_interior [0-9]*')" "keep_interior 224" \
	"... and the program's possibly lost (the thread's dtv is too, 16 bytes bigger with libmprof's TLS)"
# A worker still running at exit, 20 ms from its wait (xz -T2's): the scan
# waits for it (it was skipped in 4 runs of xz in 10).
MPROF_LEAKS=scan "$MPROF" run -o w.data ./ls settle > /dev/null
is "$(scan_info w.data leak_scan)" "1 other thread scanned by its stack, not its registers" \
	"a thread running at exit, about to wait: the scan waits for it"
is "$(chains w.data reachable_space | grep -o 'settler [0-9]*')" "settler 400" \
	"what only its stack points to is reachable"
# Meanwhile a thread starts on a fresh stack, the only holder of main's
# 777 bytes: reachable, as memcheck says (the maps read before the wait
# had no such stack: definitely lost).
MPROF_LEAKS=scan "$MPROF" run -o l.data ./ls late > /dev/null
is "$(chains l.data reachable_space | grep -o 'mkx [0-9]*')/$(chains l.data lost_space | grep -c mkx)" "mkx 777/0" \
	"a thread started on a new stack while the scan waited: what it holds is reachable"
# A program that ends without its exit handlers (_exit; exit_group, as
# every Go program does): no scan, and the table says why (it was a plain
# leak table, no word of the classes asked for).
cat > eg.c <<'CEOF'
#include <stdlib.h>
#include <unistd.h>
#include <sys/syscall.h>
void *keep;
int main(int argc, char **argv)
{
	keep = malloc(100);
	malloc(50);
	if (argc > 1 && argv[1][0] == 'g')
		syscall(SYS_exit_group, 0);
	if (argc > 1 && argv[1][0] == 'x')
		_exit(0);
	return 0;
}
CEOF
cc -g -O0 -o eg eg.c || exit 1
for how in x g; do
	"$MPROF" run --leaks -o e$how.data ./eg $how || exit 1
done
why='skipped: the program ended without its exit handlers (_exit, exit_group, a signal)'
is "$(scan_info ex.data leak_scan)/$(scan_info eg.data leak_scan)" "$why/$why" \
	"--leaks, a program that ends by _exit or exit_group: the scan skipped, and why"
like "$(leaktable ./eg eg.data)" 'not classified at exit: the program ended without its exit handlers' \
	"the table says why"
MPROF_LEAKS=scan MPROF_OUT=en.data LD_PRELOAD="$LIBMPROF/libmprof.so" ./eg x || exit 1
is "$(scan_info en.data leak_scan)" "$why" "without the launcher too (the runtime's own save at _exit)"
MPROF_LEAKS=scan "$MPROF" run -o s.data ./ls spin > /dev/null
is "$(scan_info s.data leak_scan)" "skipped: another thread was running" "a thread running at exit: no scan"
is "$("$MPROF" dump s.data | grep -c '^counter lost_')" 0 "a skipped scan writes no class counters"
like "$(leaktable ./ls s.data)" 'not classified at exit: another thread was running' "the table says why"

# A module dlopen loaded, its handle forgotten (a plugin loaded for its
# constructors; glibc's NSS modules after their list is freed): the
# loader's record of it, malloc'd, is linked from the record of the
# module loaded before, which ld.so mapped itself, no root, when that is
# a dependency of a dependency.  It was definitely lost, 1,244 bytes
# (`id 1026`: libnss_systemd's, and 3,982 indirectly); memcheck finds it
# reachable.  The loader's list is a root now (leakroots.c).
cat > plug.c <<'EOF2'
int plug_value(void) { return 42; }
EOF2
cc -shared -fPIC -o libdlplug.so plug.c && cc -shared -fPIC -o libdldep.so plug.c && cc -shared -fPIC -o libdlmid.so plug.c -Wl,--no-as-needed -L. -ldldep -Wl,-rpath,"$T" &&
	cc_prog dl leak_dlopen.c -ldl -Wl,--no-as-needed -L. -ldlmid -Wl,-rpath,"$T" || exit 1
"$MPROF" run --leaks -o dl.data ./dl "$T/libdlplug.so" > /dev/null
is "$(classes dl.data)" "$(memcheck ./dl "$T/libdlplug.so")" \
	"a dlopen'd module's record, reached through the loader's list: each class = memcheck's"
like "$(classes dl.data)" '^lost 0/0 indirect 0/0 possible 0/0 reachable [1-9]' "... nothing lost, the record reachable"

# A large heap: 200000 objects kept and 200000 lost, more than a second
# under valgrind; the scan takes some 0.06 s.
MPROF_LEAKS=scan "$MPROF" run -o b.data ./ls big 200000 > /dev/null
is "$(classes b.data)" "lost 728/6 indirect 9600128/200003 possible 224/2 reachable 9600208/200005" \
	"400000 objects: the lost list's head lost, its 199999 other nodes indirect, the kept list reachable"
ns=$(scan_info b.data leak_scan_ns)
ok "$([ -n "$ns" ] && [ "$ns" -lt 3000000000 ]; echo $?)" "... scanned in bounded time ($ns ns)"
MPROF_LEAKS=scan "$MPROF" run -o b2.data ./ls big 20000 > /dev/null
is "$(classes b2.data)" "$(memcheck ./ls big 20000)" "40000 objects: each class's total = memcheck's"
done_testing
