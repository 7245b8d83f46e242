# Files changed since profiling: a warning for a module that frames lie in,
# once; silence for a module no frame lies in; a missing a.out is an error.
. "$(dirname "$0")/../lib.sh"
plan 5
cc -g -O0 -shared -fPIC -o "$T/libshlib.so" "$TOP/tests/progs/shlib.c"
cc_prog "$T/fg" fg.c -L"$T" -Wl,--no-as-needed -lshlib -Wl,-rpath,"$T"
"$MPROF" run -o "$T/fg.data" "$T/fg"; ok $? "profiled a program linked to an unused library"
cc -g -O0 -shared -fPIC -DCHANGED -o "$T/libshlib.so" "$TOP/tests/progs/shlib.c" -Wl,--build-id=sha1 -Wl,-z,norelro
"$MPROF" "$T/fg.data" > /dev/null 2> "$T/err"
is "$(cat "$T/err")" "" "a rebuilt library that no stack runs through: no warning"
cc_prog "$T/fg" fg.c -L"$T" -Wl,--no-as-needed -lshlib -Wl,-rpath,"$T" -DREBUILT -O1
out=$("$MPROF" "$T/fg.data" 2> "$T/err")
like "$(cat "$T/err")" "^mprof: warning: $T/fg has changed since it was profiled \(build-id differs\); symbols may be wrong$" "a rebuilt executable: warned"
is "$(wc -l < "$T/err")" 1 "warned once"
"$MPROF" "$T/nothere" "$T/fg.data" > /dev/null 2>&1; is $? 2 "a missing a.out: exit 2"
done_testing
