# Control characters in names (issue 22, item 4): a data file may hold any
# byte in its command line, paths and category names, and the symbolizer
# in function and file names; printed raw, an ESC sequence retitles or
# clears the terminal and a newline splits a table's row.  Every text
# output (mprof's tables and header, dump, diff, cpprof's views and
# messages, cfprof's, folded stacks, warnings naming a file) escapes them
# as \n, \r, \t or \xHH, one spelling everywhere; a counter name with one
# is refused.  First a hostile file (tests/fuzz/hostile.c ctrl), then a
# real program whose command line carries an ESC sequence and a newline,
# built from a source file and linked (rpath) with a library in a
# directory whose names hold them too.
. "$(dirname "$0")/../lib.sh"
plan 35
CPPROF=$B/bin/cpprof
CFPROF=$B/bin/cfprof
H=$B/tests/hostile
cd "$T" || exit 1
. "$TOP/tests/cf.sh"

# ctl FILE: the control bytes in FILE other than newline and tab (0: safe).
ctl() { tr -d '\n\t' < "$1" | LC_ALL=C tr -cd '\000-\037\177' | wc -c; }
# run ARGS...: status in $st, stdout in out, stderr in err.
run() { "$@" > out 2> err; st=$?; }
# safe NAME ARGS...: ARGS run, exit 0, and nothing raw on stdout or stderr.
safe() {
	name=$1; shift
	run "$@"
	is "$st/$(ctl out)/$(ctl err)" "0/0/0" "$name: exit 0, no raw control character on stdout or stderr"
}

"$H" ctrl c.data
"$H" ctrl cf.data cf
# The strings hostile.c writes, as the tools spell them.
CMD='prog \x1b]0;pwned\x07 \x1b[2J row\nsplit\rover \x7fend'
LIB='lib\x1b]0;pwned\x07\r.so'
MOD='/nonexistent/dir\n\x1b[31mred/'$LIB

safe "mprof" "$MPROF" -verbose -lines -offsets c.data
is "$(head -1 out)/$(grep -c '^ *16 (33) .* > ' out)" \
	"mprof: $CMD (pid 7): 3 allocations of 48 bytes, 0 frees of 0 bytes, 48 bytes kept/3" \
	"mprof: the header is one line, the command line escaped; the leak table's three rows whole"
like "$(cat out)" "^ +16 \\(33\\) +1 +16 \\(33\\) +0x4000 > \\[pool\\\\x1b\\[2J\\\\nrow\\]$" \
	"mprof: a category's name escaped, in its row"
like "$(cat out)" "^ +33 +16 +33 +16 +33 +1  lib\\\\x1b\\]0;pwned\\\\x07\\\\r\\.so\\+0x1020$" \
	"mprof: a module's base name escaped where it names a function"
like "$(cat out)" 'not classified at exit: \\x1b\[2Jgone\\r\)$' "mprof: the leak scan's status escaped"
is "$(cat err)" "mprof: warning: cannot open $MOD: No such file or directory; its addresses print as module+offset" \
	"mprof: the warning naming the module is one line"

safe "mprof dump" "$MPROF" dump c.data
is "$(grep -c '^info cmdline ' out)/$(grep '^info cmdline ' out)" "1/info cmdline $CMD" "dump: one line per string"
like "$(grep '^module ' out)" " - /nonexistent/dir\\\\n\\\\x1b\\[31mred/" "dump: the module's path escaped"

safe "mprof diff" "$MPROF" diff c.data c.data
is "$(sed -n 2p out)" "BASE c.data: $CMD (pid 7): 3 allocations of 48 bytes, 0 frees of 0 bytes, 48 bytes kept" \
	"mprof diff: each side's line, the command line escaped"
safe "mprof diff --paths" "$MPROF" diff --paths c.data c.data
safe "cpprof's views" "$CPPROF" -c 'threshold 0; function; body; tree; down 0x4000; up [pool\x1b[2J\nrow]; sites on; tree' c.data
like "$(cat out)" '^0\.33333 \(0x4000 \[pool\\x1b\[2J\\nrow\]\) \[16\]$' \
	"cpprof: an escaped name is typed as printed, and printed so"
run "$CPPROF" -c "$(printf 'up a\033[2Jb')" c.data
is "$st/$(ctl err)/$(tail -1 err)" "2/0/cpprof: no function named 'a\\x1b[2Jb' in this profile" \
	"cpprof: a message quoting a typed name escapes it"
safe "cfprof" "$CFPROF" cf.data
like "$(cat out)" '  lib\\x1b\]0;pwned\\x07\\r\.so\+0x1020 \[[0-9]+\]$' "cfprof: the call graph's names escaped"
safe "cpprof on cfprof data" "$CPPROF" -c 'function; tree' cf.data
safe "cfprof diff" "$CFPROF" diff cf.data cf.data
safe "export folded" "$MPROF" export --format folded c.data
is "$(grep -c . out)/$(grep -c '^0x4000;lib\\x1b\]0:pwned\\x07\\r\.so+0x1010' out)" 3/2 \
	"export folded: one line per stack, the names escaped (and ; made :)"
safe "export folded (cfprof)" "$CFPROF" export --format folded cf.data
"$MPROF" export --format html -o c.html c.data 2> /dev/null
is "$?/$(ctl c.html)" 0/0 "export html: nothing raw in the page"
"$H" ctrlcounter cc.data
run "$CPPROF" -c function cc.data
is "$st/$(cat err)" "2/cpprof: cc.data: corrupt counters section: counter 0 holds a control character" \
	"a counter name with a control character: refused, one line"

# --- a real program: ESC and newline in its command line, the directory
# of its library and the name of its source file.
NL='
'
ESC=$(printf '\033')
BEL=$(printf '\007')
D="$T/li${NL}b${ESC}[31m"
SRC="$T/ma${ESC}]0;x${BEL}in${NL}.c"
mkdir "$D"
cp "$TOP/tests/progs/shmain.c" "$SRC"
cc -g -O0 -shared -fPIC -o "$D/libshlib.so" "$TOP/tests/progs/shlib.c"
cc -g -O0 -o shmain "$SRC" -L"$D" -lshlib -Wl,-rpath,"$D"
cc -O2 -g -finstrument-functions -shared -fPIC -o "$D/libcfshlib.so" "$TOP/tests/progs/shlib.c"
cc -O2 -g -finstrument-functions -o cfmain "$SRC" -L"$D" -lcfshlib -Wl,-rpath,"$D"
ARG="a${ESC}]0;pwned${BEL}${NL}b"
"$MPROF" run -o s.data ./shmain "$ARG"
ok $? "a program whose library lies in such a directory runs under mprof"
"$CFPROF" record -o f.data ./cfmain "$ARG" > /dev/null
ok $? "and under cfprof"
safe "mprof on it" "$MPROF" -lines -verbose s.data
is "$(head -1 out | sed 's/ (pid [0-9]*)//')" \
	'mprof: ./shmain a\x1b]0;pwned\x07\nb: 25 allocations of 2400 bytes, 0 frees of 0 bytes, 2400 bytes kept, peak 2400 bytes live' \
	"mprof: the recorded command line escaped in the header"
like "$(cat out)" 'main \(ma\\x1b\]0;x\\x07in\\n\.c:[0-9]+\) > shlib_make \(shlib\.c:1[0-9]\)$' \
	"mprof -lines: the source file's name escaped"
safe "dump" "$MPROF" dump s.data
like "$(grep '^module ' out)" "li\\\\nb\\\\x1b\\[31m/libshlib\\.so$" "dump: the library's path escaped"
safe "cpprof with sites" "$CPPROF" -c 'sites on; function' s.data
like "$(cat out)" 'main@ma\\x1b\]0;x\\x07in\\n\.c:[0-9]+ ' "cpprof: a site's file escaped"
# The library moved away: the warning naming its path is one line.
mv "$D" "$T/gone"
safe "mprof, the library gone" "$MPROF" s.data
like "$(cat err)" "^mprof: warning: cannot open $T/li\\\\nb\\\\x1b\\[31m/libshlib\\.so: " \
	"the warning naming the library's path escapes it"
done_testing
