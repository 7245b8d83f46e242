# A program built without PIE that takes malloc's address (Debian's python3
# is one) gives malloc a canonical PLT entry, and dlsym(RTLD_DEFAULT,
# "malloc") returns that entry, not the monitor's malloc: the monitor must
# not take it for a second monitor and switch itself off.  And linked with
# libmprof.a, a non-PIE program reaches _Unwind_Backtrace through a PLT
# entry of its own, which must not pass for libgcc (rt_nopie_sig.c).
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/rt.sh"
plan 7

cd "$T" || exit 1
cc_prog nopie rt_nopie.c -fno-pie -no-pie
cc_prog nopie-so rt_nopie.c -fno-pie -no-pie -L"$LIBMPROF" -lmprof -Wl,-rpath,"$LIBMPROF"
like "$(readelf --dyn-syms -W nopie | awk '$8 ~ /^malloc@/ && $7 == "UND"')" '[1-9a-f]' \
	"the program has a canonical PLT entry for malloc"
for m in preload so; do
	rm -f n.data
	MPROF_OUT=n.data rt_run $m nopie
	ok $? "$m: runs"
	is "$(rt_bins n.data | tr '\n' ,)" "33 1 1 33 33,100 1 1 100 100," "$m: both blocks counted"
done
cc_prog nopie-sig rt_nopie_sig.c -fno-pie -no-pie "$LIBMPROF/libmprof.a"
out=$(MPROF_OUT=s.data MPROF_UNWIND_CHECK=1 "$T/nopie-sig" 2>err)
is "$?/$out/$(grep -c ' 0 mismatches$' err)" "0/ok/1" "libmprof.a, no PIE: allocations in a signal handler, checked against libgcc"
like "$("$MPROF" "$T/nopie-sig" s.data)" '^ +330 .* > raise > .* > handler > leaf$' \
	"and their stacks whole, through the signal frame (not cut to leaf)"
done_testing
