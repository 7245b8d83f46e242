# A salvaged profile holds every stack (the keep, issue 22): also a stack
# the monitor keeps as part of another (runtime/mprof/stacks.h: its
# outer frames are a parent record's), where the parent keeps more
# frames than the stack is deep, or the stack keeps none of its own.
# The launcher's reader of the keep (lib/run/salvage_mprof.c) left such
# stacks out as unreadable: 3 of tests/progs/rt_shared.c's 4, and 232 of a
# python3 json run's (19 with native stacks), said only in INFO's
# salvage_lost.
. "$(dirname "$0")/../lib.sh"
plan 8
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

# python3 (the interpreter's stacks share their outer frames widely).
PY=/usr/bin/python3
cat > k.py <<'PYEOF'
import json, os, signal
d = [{"a": i, "b": str(i), "c": [i, i * 2]} for i in range(20000)]
s = json.dumps(d)
assert json.loads(s) == d
os.kill(os.getpid(), signal.SIGKILL)
PYEOF
if [ -x "$PY" ]; then
	"$MPROF" run -o p.data "$PY" k.py 2> /dev/null
	is "$(lost p.data)" "0 stacks, 0 blocks" "python3 killed: no stack lost (the Python view)"
	MPROF_PYTHON=0 "$MPROF" run -o n.data "$PY" k.py 2> /dev/null
	is "$(lost n.data)" "0 stacks, 0 blocks" "python3 killed: no stack lost (native stacks)"
else
	absent 2 "$PY (Debian's python3, scripts/install-deps.sh)"
fi
done_testing
