# A salvaged profile holds every stack (the keep, issue 22): also a stack
# the monitor keeps as part of another (runtime/mprof/stacks.h: its
# outer frames are a parent record's), where the parent keeps more
# frames than the stack is deep, or the stack keeps none of its own.
# The launcher's reader of the keep (lib/run/salvage_mprof.c) left such
# stacks out as unreadable: 3 of tests/progs/rt_shared.c's 4, and 232 of a
# python3 json run's (19 with native stacks), said only in INFO's
# salvage_lost.  And a salvaged Python profile names its frames, under
# mprof and cpprof.
. "$(dirname "$0")/../lib.sh"
plan 12
cd "$T" || exit 1
cc -g -O2 -o shared "$TOP/tests/progs/rt_shared.c" || exit 1

lost() { "$MPROF" dump "$1" | sed -n 's/^info salvage_lost //p'; }
folded() { "$MPROF" export --format folded ./shared "$1"; }

"$MPROF" run -o e.data ./shared exit
is "$?" 0 "saved at exit: the program's status"
want='main;outer;outer;outer;outer;outer;outer;shape 2220
main;outer;outer;outer;outer;outer;outer;shape;down;down;down;down 666
main;outer;outer;outer;outer;outer;outer;shape;down;down;down;down;down;down;down;down;down;down;down;down;down;leaf 444
main;outer;outer;outer;outer;outer;outer;shape;via;leaf 666'
is "$(folded e.data)" "$want" "saved at exit: the four stacks, with their bytes (via's tail call: shape's)"

"$MPROF" run -o k.data ./shared kill 2> err
is "$?" 137 "SIGKILL: the program's status"
is "$(info k.data reason)" salvage "SIGKILL: the launcher salvaged the keep"
is "$(lost k.data)" "0 stacks, 0 blocks" "SIGKILL: no stack lost"
is "$(folded k.data)" "$want" "SIGKILL: the same four stacks, the same bytes"

# python3 (the interpreter's stacks share their outer frames widely),
# and its Python frames' names, which the keep holds too (langname.h's
# mirror): before, a salvaged Python profile printed them "(frame N)".
PY=/usr/bin/python3
cat > k.py <<'PYEOF'
import json, os, signal
def build():
    return [{"a": i, "b": str(i), "c": [i, i * 2]} for i in range(20000)]
d = build()
s = json.dumps(d)
assert json.loads(s) == d
os.kill(os.getpid(), signal.SIGKILL)
PYEOF
cat > spin.py <<'PYEOF'
import os, signal, time
def heavy():
    t, x = time.process_time(), 0
    while time.process_time() - t < 0.3:
        x += sum(i * i for i in range(1000))
    return x
heavy()
os.kill(os.getpid(), signal.SIGKILL)
PYEOF
# bytes FILE STACK: the bytes of the folded line STACK.
bytes() { "$MPROF" export --format folded "$1" | awk -v k="$2" '$1 == k { print $2 }'; }
if [ -x "$PY" ]; then
	"$MPROF" run -o p.data "$PY" k.py 2> /dev/null
	is "$(lost p.data)" "0 stacks, 0 blocks" "python3 killed: no stack lost (the Python view)"
	is "$(info p.data lang)/$("$MPROF" dump p.data | sed -n 's/^info lang.frames //p')" \
		"python/read" "python3 killed: INFO lang and lang.frames from the keep"
	b=$(bytes p.data "k.<module>;k.build;k.build.<locals>.<listcomp>")
	ok "$([ "${b:-0}" -gt 5000000 ]; echo $?)" \
		"python3 killed: build's list comprehension named, with its bytes (${b:-none} > 5,000,000)"
	# Unnamed, a frame prints "(frame N)", and with no INFO lang at all
	# as its pseudo-address (0xfffd<<48 | N).
	unnamed=$("$MPROF" export --format folded p.data | grep -c -E '\(frame |fffd')
	is "$unnamed" 0 "python3 killed: no frame unnamed"
	MPROF_PYTHON=0 "$MPROF" run -o n.data "$PY" k.py 2> /dev/null
	is "$(lost n.data)" "0 stacks, 0 blocks" "python3 killed: no stack lost (native stacks)"
	"$B/bin/cpprof" record -o c.data "$PY" spin.py 2> /dev/null
	s=$("$B/bin/cpprof" export --format folded c.data | awk '$1 ~ /^spin[.]<module>;spin[.]heavy/ { s += $2 } END { print s + 0 }')
	ok "$([ "$s" -ge 200000000 ]; echo $?)" \
		"cpprof, python3 killed: heavy named, with its CPU time ($s ns >= 0.2 s)"
else
	absent 6 "$PY (Debian's python3, scripts/install-deps.sh)"
fi
done_testing
