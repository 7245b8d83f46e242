# C++ (new, classes in namespaces, typedefs) and -O2 inline frames.
. "$(dirname "$0")/../lib.sh"
plan 6
g++ -g -O0 -o "$T/shapes" "$TOP/tests/progs/shapes.cc"
"$MPROF" run -o "$T/c.data" "$T/shapes"; ok $? "C++ program runs"
out=$("$MPROF" -verbose "$T/c.data")
like "$out" '^ +72 +30 +2160 \(..\) +20 +720 \(..\)  shapes::Circle$' "bin 72: 30 Circles, 20 deleted, type shapes::Circle"
like "$out" '^ +40 +1 +40 \(..\) +0 +40 \(..\)  point3_t$' "bin 40 names the typedef point3_t, and no type of the monitor's"
like "$out" '^ +720 \(..\) +30 +2160 \(..\) +20 +1440 \(..\)  main > make_circle > operator new$' \
	"leak chain runs through make_circle into operator new (C++ names without parameters)"

cc -g -O2 -o "$T/inl" "$TOP/tests/progs/inl.c"
"$MPROF" run -o "$T/i.data" "$T/inl"; ok $? "-O2 program runs"
out=$("$MPROF" "$T/i.data")
like "$out" '^ +192 \(\*\*\) +8 +192 \(\*\*\) +main > fill > grab \[inline\]$' "the inlined helper appears in the chain, marked [inline]"
done_testing
