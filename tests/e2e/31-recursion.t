# The paper's F/G recursion in a real program: each function is credited the
# 10 bytes once, a cycle is found and listed twice.
. "$(dirname "$0")/../lib.sh"
plan 7
cc_prog "$T/fg" fg.c
"$MPROF" run -o "$T/fg.data" "$T/fg"; ok $? "fg runs"
out=$("$MPROF" -verbose "$T/fg.data")
like "$out" '^\[[0-9]+\] +50 +0 \(  \) +----------- +1\+1 +F <cycle 1> \[[0-9]+\]$' "F: self+desc 50% (10 of 20 bytes, once), called 1+1"
like "$out" '^\[[0-9]+\] +50 +10 \(\*\*\) +\*\* +----------- +1\+1 +G <cycle 1> \[[0-9]+\]$' "G: self+desc 50%, 10 bytes self"
like "$out" '^\[[0-9]+\] +\*\* +0 \(  \) +----------- +2\+0 +main \[[0-9]+\]$' "main: 100%, 2 calls"
like "$out" '<cycle 1 as a whole> \[[0-9]+\], its members:$' "the cycle's member listing"
like "$out" '^\[[0-9]+\] +50 +10 \(\*\*\) +\*\* +----------- +1\+0 +<cycle 1 as a whole> \[[0-9]+\]$' "the cycle as a whole: 10 bytes, entered once"
like "$out" '^ +10 \(\*\*\) +\*\* +\*\* +1/2 +main \[[0-9]+\]$' "main -> cycle carries 10 bytes"
done_testing
