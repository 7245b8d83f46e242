# cfprof on a real program nobody here wrote: Lua 5.4, the upstream
# tarball of Debian's source package (scripts/install-deps.sh downloads
# it with apt-get source), built with -finstrument-functions at -O2.  The
# interpreter raises errors with longjmp, runs coroutines and calls back
# into Lua from its sort.  Checked: the program's output and exit status
# are its own; every function's call count equals what independent
# counting hooks (tests/progs/cf_count.c: entries only, nothing a longjmp
# can upset) count in the same program, run alike (no address
# randomization, Lua's hash seed fixed, so the tables collide alike); 2000
# longjmps leave no stale frames (the deepest path stays shallow: each
# would add frames); cpprof reads the file.  Without the source every
# check fails, saying what is missing.
. "$(dirname "$0")/../lib.sh"
plan 8
CFPROF=$B/bin/cfprof
CPPROF=$B/bin/cpprof
DIR=${CORPUS_SRC:-${HOME:-/root}/.cache/profiler-corpus}/lua5.4
cd "$T" || exit 1

set -- "$DIR"/lua5.4_*.orig.tar.gz
SRC=$1
if [ ! -f "$SRC" ]; then
	absent 8 "no Lua source, $DIR/lua5.4_*.orig.tar.gz (scripts/install-deps.sh downloads it: apt-get source --download-only lua5.4)"
	done_testing
fi
tar xzf "$SRC" && LUADIR=$(tar tzf "$SRC" | sed -n '1s|/.*||p') &&
	make -s -C "$LUADIR/src" linux MYCFLAGS="-finstrument-functions -g -D'luai_makeseed(L)=0'" > build.log 2>&1
ok $? "lua ($LUADIR) builds with -finstrument-functions"
LUA=$T/$LUADIR/src/lua
cc -O2 -shared -fPIC -o count.so "$TOP/tests/progs/cf_count.c" || exit 1

setarch -R env CF_COUNT_OUT="$T/oracle" LD_PRELOAD="$T/count.so" "$LUA" "$TOP/tests/progs/cf_lua.lua" > bare.out 2> bare.err
bst=$?
setarch -R "$CFPROF" record -o lua.data "$LUA" "$TOP/tests/progs/cf_lua.lua" > cf.out 2> cf.err
st=$?
is "$st/$(cat cf.out)/$(cat cf.err)" "$bst/$(cat bare.out)/" "lua: stdout and exit status as counted bare, nothing on stderr"

"$B/bin/mprof" dump lua.data | awk -f "$TOP/tests/cf-calls.awk" | sort > got
sort oracle > want
n=$(wc -l < want)
ok $([ "$n" -ge 400 ]; echo $?) "lua: the counting hooks saw $n functions"
is "$(diff got want | grep -c '^[<>]')" 0 "lua: every function's calls, as cfprof counts them, equal the counting hooks' ($n functions)"
diff got want | head -10 | sed 's/^/# /' >&2

deepest=$("$B/bin/mprof" dump lua.data | awk '$1 == "stack" && $2 > d { d = $2 } END { print d + 0 }')
ok $([ "$deepest" -lt 100 ]; echo $?) "lua: 2000 errors (longjmp) leave no stale frames: the deepest path has $deepest functions"

"$CPPROF" -c 'threshold 0; function; tree; up luaD_throw' "$LUA" lua.data > cp.out 2> cp.err
is "$?/$(cat cp.err)" "0/" "lua: cpprof reads the file (function, tree, up luaD_throw)"

# An error nobody catches: exit 1 and Lua's message, under cfprof too.
"$LUA" -e 'local function f() error("uncaught") end f()' > u.bare 2> u.bare.err
ust=$?
"$CFPROF" record -o u.data "$LUA" -e 'local function f() error("uncaught") end f()' > u.out 2> u.err
is "$?/$(cat u.err)" "$ust/$(cat u.bare.err)" "lua: an uncaught error: exit $ust and Lua's message, as bare"
"$CFPROF" -p "$LUA" u.data > u.flat 2>&1
ok $? "lua: its profile reads"
done_testing
