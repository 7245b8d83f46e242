# 15,000 objects of 16 bytes kept and 30,000 freed (object(): pymalloc's
# smallest blocks, 16 apart, two to a 32-byte granule of the monitor's
# address map), for tests/e2e/89-python.t; with "tm", the bytes that
# tracemalloc says keep_small's line keeps.  Ends with os._exit: what is
# kept stays.
import os
import sys


def keep_small(n):
    return [object() for _ in range(n)]


def churn_small(n):
    for _ in range(3):
        tmp = [object() for _ in range(n)]
        del tmp


kept = keep_small(15000)
churn_small(10000)
if sys.argv[1:] == ["tm"]:
    import tracemalloc
    line = keep_small.__code__.co_firstlineno + 1
    snap = tracemalloc.take_snapshot()
    print("tm", sum(t.size for t in snap.traces
                    if t.traceback[0].filename == __file__ and t.traceback[0].lineno == line))
print(len(kept))
sys.stdout.flush()
os._exit(0)
