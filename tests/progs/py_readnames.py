# tests/e2e/89-python-cp.t: 4,000 Python functions, each first met in a
# read (cpprof names a read's Python frames: the name table's lock is
# taken there), under CPU samples every 20 us, which come while it is held.
import os
import sys

N = 4000
src = "".join(f"def f{i}(fd):\n    x = [j * j for j in range(200)]\n"
              f"    os.lseek(fd, 0, 0)\n    return len(os.read(fd, 65536)) + len(x)\n"
              for i in range(N))
ns = {"os": os}
exec(compile(src, "gen.py", "exec"), ns)
fd = os.open(sys.argv[1], os.O_RDONLY)
print(sum(ns[f"f{i}"](fd) for i in range(N)))
