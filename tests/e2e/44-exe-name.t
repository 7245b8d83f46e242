# mprof and cpprof find the a.out a user names as a shell would: a file
# named so, else the profile's recorded executable (INFO exe) of that
# name, else a command in PATH; never a FIFO.
. "$(dirname "$0")/../lib.sh"
plan 7
CPPROF=$B/bin/cpprof
mkdir -p "$T/bin" "$T/elsewhere" "$T/work"
cc_prog "$T/bin/fgcmd" fg.c
(cd "$T/bin" && "$MPROF" run -o "$T/fg.data" ./fgcmd > /dev/null)
cd "$T/work" || exit 1

out=$("$MPROF" fgcmd "$T/fg.data" 2> "$T/err"); st=$?
is "$st/$(cat "$T/err")" "0/" "mprof NAME DATA: the recorded executable of that name"
like "$out" "main > [FGH]" "and its symbols"
out=$("$CPPROF" -c function fgcmd "$T/fg.data" 2> "$T/err"); st=$?
is "$st/$(cat "$T/err")" "0/" "cpprof NAME DATA: the same"
mv "$T/bin/fgcmd" "$T/elsewhere/fgcmd"
out=$(PATH="$T/elsewhere:$PATH" "$MPROF" fgcmd "$T/fg.data" 2> "$T/err"); st=$?
is "$st/$(cat "$T/err")" "0/" "the recorded one gone: found in PATH"
like "$out" "main > [FGH]" "and its symbols"
"$MPROF" nosuchcmd "$T/fg.data" > /dev/null 2> "$T/err"
is "$?/$(cat "$T/err")" "2/mprof: nosuchcmd: No such file or directory" "a name found nowhere: said"
out=$(PATH="$T/elsewhere:$PATH" "$MPROF" fgcmd 2> "$T/err")
is "$?/$(cat "$T/err")" "2/mprof: no mprof.data here: give the profile's file (mprof run PROG writes mprof.data)" \
	"a lone name found in PATH is the a.out (the data file defaults)"
done_testing
