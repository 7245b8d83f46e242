#!/usr/bin/env python3
"""bench/pyview.py - issue 25, item 5: what mprof's Python view costs,
side by side with tracemalloc and with mprof's native view, on one
program in one run.

The program is bench/run's python workload (json dumps and loads of N
records) run by Debian's /usr/bin/python3 (PYTHONHASHSEED=0):

  bare                 python3 alone (pymalloc)
  tracemalloc 25       python3 -X tracemalloc=25 (25 frames a trace, as
                       mprof keeps whole stacks)
  mprof, Python view   libmprof.so preloaded: every object under its
                       Python frames (the default)
  bare, malloc         PYTHONMALLOC=malloc: every object through malloc
  mprof, native view   the same with libmprof.so and MPROF_PYTHON=0: every
                       object under its C frames

Instructions: callgrind, the program's process alone, with the
environment fixed (env -i, as tests/e2e/98-budget.t), on 5k records.
Wall time: the median of --reps interleaved runs on 20k records.  The
profiles are checked: mprof's name the program's <module>.

usage: bench/pyview.py [--reps N] [--build DIR]   (make first)
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

PY = "/usr/bin/python3"
PROG = """import json
d = [{"id": i, "name": "item%%d" %% i, "tags": ["t%%d" %% (i %% 7), "x", str(i)],
      "pos": [i * 0.5, -i], "ok": i %% 3 == 0, "sub": {"k": i, "v": "v" * (i %% 20)}}
     for i in range(%d)]
s = json.dumps(d)
e = json.loads(s)
assert e == d
print(len(s))
"""


def configs(lib):
    """(label, argv prefix after python3's path, extra environment)."""
    return [
        ("bare", [], {}),
        ("tracemalloc 25", ["-X", "tracemalloc=25"], {}),
        ("mprof, Python view", [], {"LD_PRELOAD": lib, "MPROF_OUT": "m.data"}),
        ("bare, malloc", [], {"PYTHONMALLOC": "malloc"}),
        ("mprof, native view", [], {"PYTHONMALLOC": "malloc", "MPROF_PYTHON": "0",
                                    "LD_PRELOAD": lib, "MPROF_OUT": "n.data"}),
    ]


def instructions(wd, lib, args, extra, prog):
    env = ["env", "-i", "PATH=/usr/bin:/bin", "PYTHONHASHSEED=0"] + \
        ["%s=%s" % kv for kv in sorted(extra.items())]
    out = subprocess.run(["valgrind", "--tool=callgrind", "--trace-children=yes",
                          "--callgrind-out-file=" + os.path.join(wd, "cg.%p")] + env +
                         [PY] + args + [prog], cwd=wd, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True, check=True).stderr
    n = [int(l.split()[-1].replace(",", "")) for l in out.splitlines() if "Collected :" in l]
    return n[-1]


def wall(wd, args, extra, prog):
    env = dict(os.environ, PYTHONHASHSEED="0", **extra)
    t = time.perf_counter()
    subprocess.run([PY] + args + [prog], cwd=wd, env=env, stdout=subprocess.DEVNULL,
                   check=True)
    return time.perf_counter() - t


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--build", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                    "..", "build"))
    a = ap.parse_args()
    lib = os.path.realpath(os.path.join(a.build, "lib", "libmprof.so"))
    mprof = os.path.realpath(os.path.join(a.build, "bin", "mprof"))
    for f in (PY, lib, mprof):
        if not os.access(f, os.R_OK):
            sys.exit("bench/pyview.py: missing %s (make; scripts/install-deps.sh)" % f)
    wd = tempfile.mkdtemp(prefix="pyview.")
    with open(os.path.join(wd, "small.py"), "w") as f:
        f.write(PROG % 5000)
    with open(os.path.join(wd, "big.py"), "w") as f:
        f.write(PROG % 20000)
    os.symlink(lib, os.path.join(wd, "libmprof.so"))
    cs = configs("./libmprof.so")
    ins = {}
    for label, args, extra in cs:
        ins[label] = instructions(wd, lib, args, extra, "small.py")
    for data in ("m.data", "n.data"):
        v = subprocess.run([mprof, os.path.join(wd, data)], stdout=subprocess.PIPE, text=True,
                           check=True).stdout
        if "<module>" not in v and data == "m.data":
            sys.exit("bench/pyview.py: the Python view's profile names no <module>")
    walls = {label: [] for label, _, _ in cs}
    for _ in range(a.reps):
        for label, args, extra in cs:
            walls[label].append(wall(wd, args, extra, "big.py"))
    med = {k: statistics.median(v) for k, v in walls.items()}
    cpu = subprocess.run(["sh", "-c", "grep -m1 'model name' /proc/cpuinfo | cut -d: -f2"],
                         stdout=subprocess.PIPE, text=True).stdout.strip()
    print("- machine: %s, %d CPUs; %s" % (cpu, os.cpu_count(),
                                          subprocess.run([PY, "--version"], stdout=subprocess.PIPE,
                                                         text=True).stdout.strip()))
    print("- instructions: callgrind, json of 5k records; wall: median of %d interleaved runs,"
          " 20k records; 'its bare': python3 alone with the same allocator (pymalloc, or"
          " malloc for the last two rows)" % a.reps)
    print()
    print("| | instructions | x its bare | x the native view | wall s | x its bare |")
    print("|:--|--:|--:|--:|--:|--:|")
    for label, _, _ in cs:
        ref = "bare, malloc" if label in ("bare, malloc", "mprof, native view") else "bare"
        vs = {"mprof, Python view": "mprof, native view"}.get(label)
        print("| %s | %s | %.3f | %s | %.3f | %.2f |" % (
            label, format(ins[label], ","), ins[label] / ins[ref],
            "%.3f" % (ins[label] / ins[vs]) if vs else "",
            med[label], med[label] / med[ref]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
