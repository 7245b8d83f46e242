# tests/e2e/60-corpus.t: python3 under mprof and cpprof.  Four threads
# count strings in Counters; a subprocess (the same interpreter) sums a
# range.  Deterministic output.
import subprocess
import sys
import threading
from collections import Counter


def work(seed, out):
    c = Counter()
    for i in range(40000):
        c[str((i * seed) % 1013)] += 1
    out[seed] = sorted(c.items())[:2]


out = {}
threads = [threading.Thread(target=work, args=(s, out)) for s in (3, 5, 7, 11)]
for t in threads:
    t.start()
for t in threads:
    t.join()
child = subprocess.run([sys.executable, "-c", "print(sum(range(10**5)))"],
                       capture_output=True, text=True, check=True)
print(sorted(out.items()))
print(child.stdout.strip())
