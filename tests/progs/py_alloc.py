# Two functions that keep what they make: the bytes each keeps, by mprof
# (under the monitor) and by tracemalloc (argument "tm"), at one point
# (tests/e2e/89-python.t).  The program ends with os._exit: the objects
# are still live when the monitor saves, as when tracemalloc looks.
import inspect
import os
import sys


def strings(n):
    out = []
    for i in range(n):
        out.append("s" * 200 + str(i))
    return out


def tuples(n):
    out = []
    for i in range(n):
        out.append((i, i + 1.5, -i))
    return out


a = strings(20000)
b = tuples(30000)
if sys.argv[1:] == ["tm"]:
    import tracemalloc
    snap = tracemalloc.take_snapshot()
    for f in (strings, tuples):
        lines, first = inspect.getsourcelines(f)
        total = sum(t.size for t in snap.traces
                    if t.traceback[0].filename == __file__
                    and first <= t.traceback[0].lineno < first + len(lines))
        print(f.__name__, total)
print("done", len(a), len(b))
sys.stdout.flush()
os._exit(0)
