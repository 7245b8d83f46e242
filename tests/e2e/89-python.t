# mprof on CPython (issue 25, items 1, 3, 4): Debian's python3 (3.11),
# with no change to the program and no PYTHONMALLOC, every object the
# interpreter makes (pymalloc's too) counted under the Python function and
# line that made it, the eval loop's C frames replaced by the Python
# frames they run, the interpreter's other C frames left out, C extension
# frames kept where they are (a mixed stack).
#
# Known answers: tests/progs/py_alloc.py keeps 20000 strings made in
# strings() and 30000 tuples made in tuples(); the bytes each function
# keeps, by the monitor, are tracemalloc's for the same function on the
# same program (both count the bytes asked for) within 0.5%.
# tests/progs/py_shapes.py keeps what a thread, a generator, a caught
# exception, a coroutine and json's C encoder make, and exits with 3.
. "$(dirname "$0")/../lib.sh"
plan 60
cd "$T" || exit 1

PY=/usr/bin/python3
if [ ! -x "$PY" ]; then
	absent 60 "$PY (Debian's python3, scripts/install-deps.sh)"
	done_testing
fi
lib=$LIBMPROF/libmprof.so
cp "$TOP/tests/progs/py_alloc.py" "$TOP/tests/progs/py_shapes.py" .

# infov DATA KEY: an INFO value, spaces and all.
infov() { "$MPROF" dump "$1" | awk -v k="$2" '$1 == "info" && $2 == k { sub(/^info [^ ]+ /, ""); print }'; }
# kept DATA STACK: the kept bytes of the folded stack STACK exactly.
kept() { "$MPROF" export --format folded "$1" | awk -v s="$2" '{ v = $NF; sub(/ [0-9]+$/, "") } $0 == s { n += v } END { print n + 0 }'; }
# near A B PCT: A within PCT percent of B.
near() { awk -v a="$1" -v b="$2" -v p="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(b > 0 && d <= b * p / 100) }'; }

# 1-10: py_alloc, against tracemalloc.
"$PY" -X tracemalloc=1 py_alloc.py tm > tm.out 2>&1
tm_s=$(awk '$1 == "strings" { print $2 }' tm.out)
tm_t=$(awk '$1 == "tuples" { print $2 }' tm.out)
out=$(MPROF_OUT=pa.data LD_PRELOAD=$lib "$PY" py_alloc.py 2> pa.err)
rc=$?
is "$rc $out" "0 done 20000 30000" "py_alloc prints and exits as it does bare"
like "$(infov pa.data lang) / $(infov pa.data lang.frames)" '^python 3\.11\.[0-9]+ / read$' \
	"INFO: the language and its frames read"
ms=$(kept pa.data "py_alloc.<module>;py_alloc.strings")
mt=$(kept pa.data "py_alloc.<module>;py_alloc.tuples")
near "$ms" "$tm_s" 0.5
ok $? "strings() keeps $ms bytes; tracemalloc says $tm_s (0.5%)"
near "$mt" "$tm_t" 0.5
ok $? "tuples() keeps $mt bytes; tracemalloc says $tm_t (0.5%)"
line=$(grep -n 'out.append("s" \* 200' py_alloc.py | cut -d: -f1)
like "$("$MPROF" dump pa.data | grep -F 'info lang.fn.')" "strings.*py_alloc\\.py:$line(\\\\t[a-z_]+)?\$" \
	"a frame names strings() at its line ($line)"
# 6-7: object kinds: the type of the first object each Python frame made,
# in the size table; tuples() makes its 3-tuples (64 bytes with the
# collector's header) at the append's line.
tline=$(grep -n 'out.append((i, i + 1.5, -i))' py_alloc.py | cut -d: -f1)
bins=$("$MPROF" pa.data | awk '/^--------- ALLOCATION BINS/ { b = 1 } /^--------- MEMORY LEAKS|^--------- DIRECT/ { b = 0 } b && $1 == 64')
like "$("$MPROF" dump pa.data | grep -F 'info lang.fn.')" "tuples\\\\t.*py_alloc\\.py:$tline\\\\ttuple\$" \
	"object kinds: a frame of tuples() at line $tline made a tuple"
like "$bins" "^ +64 .*  tuple" "object kinds: the 64-byte bin lists tuple first"
unlike "$("$MPROF" export --format folded pa.data)" '_PyEval_EvalFrameDefault|PyObject_Malloc' \
	"no stack shows the eval loop or the object allocator"
row=$("$MPROF" pa.data | awk '/^--------- DIRECT/ { d = 1 } /^--------- ALLOCATION CALL/ { d = 0 } d && $NF == "py_alloc.strings"')
like "$row" " $ms " "the direct allocation table charges strings() its kept bytes"
if [ -x "$B/tools/pprof" ]; then
	"$MPROF" export --format pprof -o pa.pb.gz pa.data
	like "$("$B/tools/pprof" -top -lines pa.pb.gz 2> /dev/null)" "py_alloc\\.strings .*py_alloc\\.py:$line" \
		"pprof shows strings() by name, file and line"
	# pprof strips <...> from a name equal to its system name: <module>
	# and every <listcomp> were one <unknown>.
	top=$("$B/tools/pprof" -top -cum pa.pb.gz 2> /dev/null)
	is "$(printf '%s\n' "$top" | grep -c ' py_alloc\.<module>$')/$(printf '%s\n' "$top" | grep -c '<unknown>')" "1/0" \
		"pprof names <module> as Python does, not <unknown>"
else
	fail "pprof not built ($B/tools/pprof: make builds it from Debian's golang-github-google-pprof-dev)"
	fail "pprof not built"
fi

# 11-19: the shapes of Python code.
bare=$("$PY" py_shapes.py 2>&1; echo "rc=$?")
out=$(MPROF_OUT=sh.data LD_PRELOAD=$lib "$PY" py_shapes.py 2>&1; echo "rc=$?")
is "$out" "$bare" "py_shapes prints and exits (3) as it does bare"
"$MPROF" export --format folded sh.data > sh.folded
th=$(kept sh.data "threading.Thread._bootstrap;threading.Thread._bootstrap_inner;threading.Thread.run;py_shapes.in_thread;py_shapes.in_thread.<locals>.<listcomp>")
[ "$th" -ge 100000 ]
ok $? "a thread's objects under its Python frames ($th bytes of 100 x 1000)"
g=$(kept sh.data "py_shapes.<module>;py_shapes.from_gen;py_shapes.gen")
[ "$g" -ge 100000 ]
ok $? "a generator's objects under it, called from where it is consumed ($g bytes of 200 x 500)"
c=$(grep -E ';events\.Handle\._run;(_asyncio[^;]*;)*py_shapes\.coro;py_shapes\.coro\.<locals>\.<listcomp> [0-9]+$' sh.folded | awk '{ n += $NF } END { print n + 0 }')
[ "$c" -ge 21000 ]
ok $? "a coroutine's objects under the event loop's frames and asyncio's C step ($c bytes of 30 x 700)"
e=$(kept sh.data "py_shapes.<module>;py_shapes.catcher;py_shapes.raiser")
[ "$e" -gt 300 ]
ok $? "the exceptions raised and kept, under the function that raised them ($e bytes)"
like "$(cat sh.folded)" '^py_shapes\.<module>;py_shapes\.encode;json\.dumps;encoder\.JSONEncoder\.encode;encoder\.JSONEncoder\.iterencode;_json\.cpython-311-x86_64-linux-gnu\.so\+0x[0-9a-f]+ [0-9]+$' \
	"a mixed stack: json's C encoder under the Python frames that called it"
like "$("$MPROF" export --format folded --counter alloc_space sh.data)" ';encoder\.JSONEncoder\.iterencode;(.*;)?py_shapes\.Enc\.default [0-9]+$' \
	"Python called back from C: Enc.default under the frames that called json"
d=$(kept sh.data "py_shapes.<module>;py_shapes.scan;opendir_tail;__alloc_dir")
[ "$d" -ge 32768 ]
ok $? "C code run with the GIL let go: opendir's buffer under scan() ($d bytes)"
unlike "$(cat sh.folded)" '_PyEval_EvalFrameDefault' "no eval loop frame in any stack"

# 20-22: the native view, asked for; PYTHONMALLOC=malloc.
MPROF_PYTHON=0 MPROF_OUT=nat.data LD_PRELOAD=$lib "$PY" py_alloc.py > /dev/null 2>&1
is "$(infov nat.data lang)" "" "MPROF_PYTHON=0: no language frames"
like "$("$MPROF" export --format folded nat.data)" '_PyEval_EvalFrameDefault' \
	"MPROF_PYTHON=0: the stacks are native"
PYTHONMALLOC=malloc MPROF_OUT=pm.data LD_PRELOAD=$lib "$PY" py_alloc.py > /dev/null 2>&1
pm=$(kept pm.data "py_alloc.<module>;py_alloc.strings")
near "$pm" "$tm_s" 0.5
ok $? "PYTHONMALLOC=malloc: malloc's blocks get the Python frames ($pm bytes for strings())"

# 23-24: merge and diff read the language frames of each file.
"$MPROF" merge pa.data pm.data -o m.data 2> merge.err
mm=$(kept m.data "py_alloc.<module>;py_alloc.strings")
is "$mm" "$((ms + pm))" "merged: strings() keeps both runs' bytes under one name"
like "$("$MPROF" diff pa.data sh.data)" ' py_alloc\.strings$' "diff names the Python functions"

# 25-26: a subprocess (python3 starting python3) is profiled too, by its
# own file, with its own frames.
cat > parent.py <<'PYEOF'
import subprocess, sys
subprocess.run([sys.executable, "py_alloc.py"], check=True)
PYEOF
"$MPROF" run -o sub.data "$PY" parent.py > sub.out 2>&1
is "$(grep -c done sub.out)" "1" "the child ran under mprof run"
ls sub.data* > files.txt 2>&1
found=0
for f in sub.data*; do
	[ "$(kept "$f" "py_alloc.<module>;py_alloc.strings")" -gt 5000000 ] && found=1
done
is "$found" "1" "the child's profile names strings() ($(tr '\n' ' ' < files.txt))"

# 27: under mprof run, a program that ends with os._exit (multiprocessing's
# workers do): the launcher's keep has the tables but not the names, so
# the runtime saves them itself.
"$MPROF" run -o ox.data "$PY" py_alloc.py > /dev/null 2>&1
is "$(kept ox.data "py_alloc.<module>;py_alloc.strings")/$(infov ox.data reason)" "$ms/exit" \
	"mprof run, os._exit: the runtime's own file, strings() named ($ms bytes)"

# 28: multiprocessing (fork): each worker's file has its Python frames,
# the work under the frames that forked it.
cat > mp.py <<'PYEOF'
import multiprocessing as mp


def work(n):
    return len([str(i) * 10 for i in range(n)])


if __name__ == "__main__":
    p = mp.Pool(2)
    print(sum(p.map(work, [20000] * 4)))
    p.close()
    p.join()
PYEOF
"$MPROF" run -o mp.data "$PY" mp.py > mp.out 2>&1
n=0
for f in mp.data.*; do
	"$MPROF" export --format folded --counter alloc_objects "$f" 2> /dev/null |
		grep -Eq ';process\.BaseProcess\.run;pool\.worker;pool\.mapstar;mp\.work;mp\.work\.<locals>\.<listcomp> [0-9]+$' && n=$((n + 1))
done
is "$(cat mp.out)/$n" "80000/2" "multiprocessing: both workers' files show work() under the pool's frames"

# 29-30: an executable named python3* that is not CPython (no Py_Version:
# as another version or a custom build): one line on stderr, native
# stacks, the program's output and status unchanged; cpprof the same.
cat > fake.c <<'CEOF'
#include <stdio.h>
#include <stdlib.h>
int main(void)
{
	char *p = malloc(1000);
	printf("fake %d\n", p != NULL);
	free(p);
	return 4;
}
CEOF
cc -O2 -o python3-fake fake.c || exit 1
out=$(MPROF_OUT=fk.data LD_PRELOAD=$lib ./python3-fake 2> fk.err; echo "rc=$?")
is "$out/$(cat fk.err)/$(infov fk.data lang.frames)" \
	"fake 1
rc=4/mprof: Python frames not read: not the Python whose layout the runtime has ($(sed -n 's/^#define PYL_VERSION "\(.*\)"$/\1/p' "$B/gen/pylayout.h")); stacks stay native/none: not the Python whose layout the runtime has ($(sed -n 's/^#define PYL_VERSION "\(.*\)"$/\1/p' "$B/gen/pylayout.h"))" \
	"not CPython 3.11: one line, native stacks, output and status unchanged"
out=$("$B/bin/cpprof" record -o fkc.data ./python3-fake 2> fkc.err; echo "rc=$?")
like "$out/$(cat fkc.err)" '^fake 1
rc=4/cpprof: Python frames not read: not the Python whose layout' "cpprof: the same line, output and status unchanged"

# More frames than the names' table holds (65,536: langname.h): 70,000
# functions, each allocating once.  The first 65,536 are named, the rest
# print "(frame 0)", and INFO lang.frames says so (it said "read").
cat > many.py <<'PYEOF'
src = "\n".join("def f%d(n):\n    return [n] * %d\n" % (i, 2 + i % 5) for i in range(70000))
ns = {}
exec(compile(src, "gen.py", "exec"), ns)
keep = [ns["f%d" % i](i) for i in range(70000)]
print(len(keep))
PYEOF
out=$(MPROF_OUT=many.data LD_PRELOAD=$lib "$PY" many.py)
is "$out/$("$MPROF" dump many.data | grep -c '^info lang.fn')" "70000/65536" \
	"70,000 functions: the program's output, and 65,536 names"
is "$(infov many.data lang.frames)" \
	"read; the names' table is full (65536 frames named): later frames are unnamed" \
	"a full table is said in INFO lang.frames"

# A Python function named main is not C's main, whose callers the views
# drop: <module> stays above it (it was cut off, in every table and export).
cat > mainfn.py <<'PYEOF'
def work():
    return [str(i) * 5 for i in range(50000)]
def main():
    x = work()
    print(len(x))
if __name__ == "__main__":
    main()
PYEOF
MPROF_OUT=mf.data LD_PRELOAD=$lib "$PY" mainfn.py > /dev/null
b=$("$MPROF" export --format folded --counter alloc_space mf.data |
	awk '$1 == "mainfn.<module>;mainfn.main;mainfn.work;mainfn.work.<locals>.<listcomp>" { print $2 }')
ok "$([ "${b:-0}" -gt 1000000 ]; echo $?)" "def main(): its caller <module> kept (<module>;main;work: ${b:-none} bytes)"

# The sampled monitor keeps native stacks, and says so (it said nothing).
"$MPROF" run --sample -o smp.data "$PY" mainfn.py > /dev/null
is "$(infov smp.data lang.frames)" "none: the sampled monitor (--sample) keeps native stacks" \
	"--sample: INFO lang.frames says the stacks are native"

# -X dev (PYTHONMALLOC=pymalloc_debug) puts its debug allocator in place
# of the hooks before the program runs: they go in front again at its
# first Python frame (python.c).  They saw ~1% of the allocations.
MPROF_OUT=dev.data LD_PRELOAD=$lib "$PY" -X dev mainfn.py > /dev/null
b=$("$MPROF" export --format folded --counter alloc_space dev.data |
	awk '$1 == "mainfn.<module>;mainfn.main;mainfn.work;mainfn.work.<locals>.<listcomp>" { print $2 }')
ok "$([ "${b:-0}" -gt 10000000 ]; echo $?)" "-X dev: work()'s strings all seen (${b:-none} bytes > 10,000,000)"

# A recursion deeper than a stack keeps (1,024 frames): its allocations
# at the bottom, 5 x 2,000 strings and their ints, on one stack, the
# innermost 1,024 frames (the key
# of a Python chain reads no further: python3 30,000 deep took 4.9 s, 0.045
# s bare; 1.1 s now).
cat > deep.py <<'PYEOF'
import sys
sys.setrecursionlimit(10000)
def r(n):
    if n == 0:
        return [str(i) for i in range(2000)]
    return r(n - 1)
for _ in range(5):
    x = r(5000)
print(len(x))
PYEOF
MPROF_OUT=deep.data LD_PRELOAD=$lib "$PY" deep.py > /dev/null
d=$("$MPROF" export --format folded --counter alloc_objects deep.data |
	awk '{ n = split($1, a, ";") } a[n] == "deep.r.<locals>.<listcomp>" { print n, $2 }')
ok "$(echo "$d" | awk '{ exit !(NR == 1 && $1 == 1024 && $2 >= 10000) }'; echo $?)" \
	"5,000 deep: the strings (and their ints) on one stack of the innermost 1,024 frames ($d)"
# ... and such a stack says it was cut (it did not: its outer callers'
# shares were low by 0.7 with no word of why), as a C stack cut short does;
# the views say what share of the bytes is in cut stacks.  At 1,000 frames
# nothing is cut: driver() holds what rec() does.
cp "$TOP/tests/progs/py_deep.py" .
CPPROF=$B/bin/cpprof
for d in 1000 1500; do
	MPROF_OUT=d$d.data LD_PRELOAD=$lib "$PY" py_deep.py $d > /dev/null || exit 1
done
cuts() { "$MPROF" dump "$1" | awk '$1 == "stack" && $3 % 2 == 1 { n++ } END { print n + 0 }'; }
fnb() { "$CPPROF" -c 'resource alloc-bytes; function' "$1" | awk -v f="$2" '$2 == f { gsub(/[][]/, "", $3); print $3 }'; }
is "$(cuts d1000.data)/$("$CPPROF" -c 'resource alloc-bytes; function' d1000.data | grep -c 'cut short')" "0/0" \
	"1,000 deep: no stack cut, no word of it"
ok "$([ "$(fnb d1000.data py_deep.driver)" -ge "$(fnb d1000.data py_deep.rec)" ]; echo $?)" \
	"1,000 deep: driver holds what rec does ($(fnb d1000.data py_deep.driver) >= $(fnb d1000.data py_deep.rec))"
ok "$([ "$(cuts d1500.data)" -ge 1 ]; echo $?)" "1,500 deep: the stacks of 1,024 frames are flagged cut ($(cuts d1500.data))"
like "$("$CPPROF" -c 'resource alloc-bytes; function' d1500.data)" \
	'^\((5[0-9]|[6-8][0-9])\.[0-9]% of the samples are in stacks cut short, deeper than the recorder keeps' \
	"1,500 deep: the function profile says what share is in cut stacks (about 3/4)"
is "$("$MPROF" d1500.data | sed -n '/ALLOCATION CALL GRAPH/,$p' | grep -c '^(.*of the bytes were allocated in stacks cut short')" 1 \
	"1,500 deep: so does mprof's call graph"
# pymalloc's 16-byte blocks are 16 apart: two live ones start in one
# 32-byte granule of the address map, and the second's record took the
# first's slot.  Of 30,000 such objects freed, 15,028 frees were unknown
# and churn_small() kept 239,760 bytes it had freed; now those in a
# granule's second half have the fine shadow (addrmap.h).
cp "$TOP/tests/progs/py_small16.py" .
tm16=$("$PY" -X tracemalloc=1 py_small16.py tm | awk '$1 == "tm" { print $2 }')
MPROF_OUT=s16.data LD_PRELOAD=$lib "$PY" py_small16.py > /dev/null
is "$(infov s16.data unknown_frees)/$(kept s16.data "py_small16.<module>;py_small16.churn_small;py_small16.churn_small.<locals>.<listcomp>")" "0/0" \
	"16-byte objects 16 apart: every free known (unknown frees/bytes churn_small keeps)"
k16=$(kept s16.data "py_small16.<module>;py_small16.keep_small;py_small16.keep_small.<locals>.<listcomp>")
near "$k16" "$tm16" 0.1
ok $? "16-byte objects: keep_small() keeps $k16 bytes; tracemalloc says $tm16 (0.1%)"
k16o=$("$MPROF" export --format folded --counter inuse_objects s16.data |
	awk '$1 == "py_small16.<module>;py_small16.keep_small;py_small16.keep_small.<locals>.<listcomp>" { print $2 }')
is "$k16o" 15001 "16-byte objects: keep_small() keeps its 15,000 objects and the list's array"

# Functions of two modules that share a name are two functions, each
# named after its module as Python names it: the script's load() and
# json.load were one row, "load", their bytes summed; every module's code
# was one "<module>".  Known answer (kept: os._exit, as py_alloc.py): names.load() keeps 4,000 strings whose
# sizes the script sums (sys.getsizeof), json.load the file it read.
cat > names.py <<'PYEOF'
import json, os, sys
def load(n):
    return ["x" * 1000 + str(i) for i in range(n)]
def main():
    global keep
    keep = load(4000)
    with open(sys.argv[1]) as f:
        data = json.load(f)
    print(sum(sys.getsizeof(s) for s in keep) + sys.getsizeof(keep), len(data), flush=True)
keep = None
main()
os._exit(0)
PYEOF
"$PY" -c 'import json; print(json.dumps([{"k": "v" * 50}] * 20000))' > names.json
bare=$("$PY" names.py names.json)
out=$(MPROF_OUT=nm.data LD_PRELOAD=$lib "$PY" names.py names.json)
is "$out" "$bare" "two load()s: the output is the program's"
direct=$("$MPROF" nm.data | awk '/^--------- DIRECT/ { d = 1 } /^--------- ALLOCATION CALL/ { d = 0 } d { print $NF }')
is "$(printf '%s\n' "$direct" | grep -Ec '^(names\.load|json\.load)$')/$(printf '%s\n' "$direct" | grep -c '^load$')" "2/0" \
	"two load()s: the direct allocation table has names.load and json.load, no bare load"
"$MPROF" export --format folded --counter alloc_space nm.data > nm.folded
k=$(kept nm.data "names.<module>;names.main;names.load;names.load.<locals>.<listcomp>")
near "$k" "${bare% *}" 0.5
ok $? "two load()s: names.load keeps $k bytes, the script's own sum ${bare% *} (0.5%), none of json's"
jl=$(awk '$1 ~ /^names[.]<module>;names[.]main;json[.]load(;|$)/ { n += $NF } END { print n + 0 }' nm.folded)
ok "$([ "$jl" -ge "$(wc -c < names.json)" ]; echo $?)" \
	"two load()s: json.load allocates at least what it read ($jl bytes >= the file's $(wc -c < names.json))"
is "$("$B/bin/cpprof" -c 'threshold 0; up load' nm.data | sed -n 's/^[0-9.]* (\([a-z.]*load\)) .*/\1/p' | sort | tr '\n' ' ')" \
	"json.load names.load " "cpprof: up load, by the name typed, finds both, each by its module"
# python3 -m pkg: the package's __init__.py and its __main__.py, each
# with a main(), are pkg and __main__, as Python names them (the two
# main()s were one, pkg.main, with both's bytes), and the default root is
# __main__'s code under runpy's frames (there was none: "no root").
mkdir -p pkg
cat > pkg/__init__.py <<'PYEOF'
KEEP = []
def main():
    KEEP.append(["i" * 100 + str(i) for i in range(3000)])
main()
PYEOF
cat > pkg/__main__.py <<'PYEOF'
import os, sys
from pkg import KEEP
def main():
    KEEP.append(["m" * 100 + str(i) for i in range(6000)])
main()
print(len(KEEP[0]), len(KEEP[1]), flush=True)
os._exit(0)
PYEOF
out=$(MPROF_OUT=pk.data LD_PRELOAD=$lib "$PY" -m pkg)
is "$out" "3000 6000" "python3 -m pkg: the output is the program's"
"$MPROF" export --format folded pk.data > pk.folded
ki=$(awk '$1 ~ /;pkg[.]<module>;pkg[.]main;pkg[.]main[.]<locals>[.]<listcomp>$/ { n += $NF } END { print n + 0 }' pk.folded)
km=$(awk '$1 ~ /;__main__[.]<module>;__main__[.]main;__main__[.]main[.]<locals>[.]<listcomp>$/ { n += $NF } END { print n + 0 }' pk.folded)
ok "$(awk -v i="$ki" -v m="$km" 'BEGIN { exit !(i > 300000 && m > 1.9 * i && m < 2.1 * i) }'; echo $?)" \
	"python3 -m pkg: pkg.main keeps $ki bytes, __main__.main twice as many ($km)"
is "$("$B/bin/cpprof" -c 'threshold 0.1; down' pk.data | sed -n 's/^[01]\.[0-9]* (\([^ ]*\)) .*/\1/p' | head -1)" \
	"__main__.<module>" "python3 -m pkg: the down profile's root is __main__'s code"
is "$("$B/bin/cpprof" -c 'threshold 0; up main.<locals>.<listcomp>' pk.data | sed -n 's/^[0-9.]* (\([^ ]*\)) .*/\1/p' | sort | tr '\n' ' ')" \
	"__main__.main.<locals>.<listcomp> pkg.main.<locals>.<listcomp> " \
	"cpprof: up by a qualified name finds the functions of that name, not every <listcomp>"
# A diff's two sides name a function alike: a run that loads a/util.py
# alone names its f util.f, one that loads b/util.py beside it a.util.f
# and b.util.f; the diff names it a.util.f on both sides, so a's f
# (2,000 strings both times) has no row, b's is new.
mkdir -p a b
printf 'def f(n, k):\n    return ["u" * k + str(i) for i in range(n)]\n' > a/util.py
cp a/util.py b/util.py
cat > one.py <<'PYEOF2'
import sys
sys.path.insert(0, "a")
import util
KEEP = util.f(2000, 50)
PYEOF2
cat > two.py <<'PYEOF2'
import importlib.util
def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m
KEEP = load("ua", "a/util.py").f(2000, 50), load("ub", "b/util.py").f(1000, 80)
PYEOF2
MPROF_OUT=one.data LD_PRELOAD=$lib "$PY" one.py && MPROF_OUT=two.data LD_PRELOAD=$lib "$PY" two.py
like "$("$MPROF" one.data)" ' util\.f\.<locals>\.<listcomp>$' "a run with one util.py names its f util.f"
d=$("$MPROF" diff one.data two.data | sed -n '/^--------- DIRECT ALLOCATION/,/^--------- ALLOCATION CALL GRAPH/p')
unlike "$d" '  (a\.)?util\.f\.<locals>\.<listcomp>$' "diff: a/util.py's f named alike on both sides, unchanged: no row"
like "$d" '^ +\+[0-9]+ .*  b\.util\.f\.<locals>\.<listcomp>$' "diff: b/util.py's f, new"
# The same code in two directories (two checkouts): util.f on both sides,
# unchanged, no row (naming by both sides' files named them v1.app.util.f
# and v2.app.util.f: every function removed and added).
for v in v1 v2; do
	mkdir -p $v/app
	cp a/util.py $v/app/util.py
	: > $v/app/__init__.py
	printf 'from app import util\nKEEP = util.f(1500, 40)\n' > $v/main.py
	(cd $v && MPROF_OUT=../$v.data LD_PRELOAD=$lib "$PY" main.py)
done
d=$("$MPROF" diff v1.data v2.data | sed -n '/^--------- DIRECT ALLOCATION/,/^--------- ALLOCATION CALL GRAPH/p')
unlike "$d" 'util\.f' "diff of one program in two directories: its util.f named alike, unchanged: no row"
# And so does pprof's diff (export --diff-base).
if [ -x "$B/tools/pprof" ]; then
	"$MPROF" export --format pprof --diff-base one.data -o d.pb.gz two.data
	top=$("$B/tools/pprof" -top -sample_index=alloc_space d.pb.gz 2>&1)
	like "$top" ' b\.util\.f\.<locals>\.<listcomp>$' "pprof --diff-base: b's f"
	unlike "$top" ' (a\.)?util\.f\.<locals>\.<listcomp>$' "pprof --diff-base: a's f, alike on both sides, nets to nothing"
else
	fail "pprof not built at $B/tools/pprof (make builds it)"
	fail "not run: no pprof"
fi
done_testing
