"""bench/cost.py - bench/run's cost table (issue 23): what each memory
profiler costs, in instructions counted by callgrind and in wall time,
beside the program alone, on one machine in one run.

Rows (columns: bare, mprof exact, mprof --sample, heaptrack, jemalloc's
profiling build sampled at 512 KiB, and jemalloc alone, the allocator's
own effect):

  churn: bench/loop.c, 200k malloc+free pairs: instructions a pair above
    bare;
  python json: bench/run's python workload (Debian's /usr/bin/python3,
    PYTHONMALLOC=malloc, PYTHONHASHSEED=0): instructions x bare;
  deep22: bench/deep22.c, 1e5 allocations each from a distinct 22-deep
    stack: instructions an allocation above bare;
  churn and python json: wall time x bare, the medians of bench/run's
    interleaved runs of its loop and python workloads (passed in);
  cfprof: primes (bench/cfbench.py builds it), instructions x the same
    binary with glibc's no-op hooks, gcc -pg beside; and its wall time
    from bench/run's primes section.

Instructions: each program runs under callgrind's tool binary started
directly (valgrind's launcher is a program of its own, and LD_PRELOAD
would load the profiler into it first: heaptrack's library then removes
itself from the environment, so the program would run untraced); the
figure is the program's process alone.  Each profiler is preloaded as
`mprof run`, `heaptrack` and jemalloc's documentation do it: libmprof.so
with MPROF_OUT (and MPROF_SAMPLE=524288 for --sample; without the
launcher's keep, ~17k instructions a run), libheaptrack_preload.so with
DUMP_HEAPTRACK_OUTPUT writing heaptrack's raw stream to a file (whose
interpretation, heaptrack_interpret's work in a process of its own, is
counted apart and shown under the table), libjemalloc.so.2 with
MALLOC_CONF.  Every profiler's output is checked: a profile that reads,
with allocations; a heap file from jemalloc.
"""

import concurrent.futures
import glob
import itertools
import os
import shutil
import signal
import subprocess

JEMALLOC = "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2"
SAMPLE = 524288  # mprof --sample's default and jemalloc's lg_prof_sample:19
TOOLS = ["mprof", "mprof-sample", "heaptrack", "jemalloc-prof", "jemalloc"]
HEADS = {"bare": "bare", "mprof": "mprof (exact)", "mprof-sample": "mprof --sample",
         "heaptrack": "heaptrack", "jemalloc-prof": "jemalloc prof (sampled)",
         "jemalloc": "jemalloc alone"}


def jemalloc_conf(prefix):
    """The profiling configuration of issue 23: sampled every 2^19 bytes
    on average, a heap file written at exit (prof_final) to prefix.*."""
    return "prof:true,prof_final:true,lg_prof_sample:19,prof_prefix:" + prefix


class Ctx:
    """What bench/run passes: its helpers and settings."""

    def __init__(self, **kw):
        self.__dict__.update(kw)


# ---------------------------------------------------------------- callgrind

def callgrind_tool():
    """(launcher, tool binary, its library directory) or a reason."""
    vg = shutil.which("valgrind")
    if not vg:
        return "valgrind not installed (apt-get install valgrind)"
    dirs = [os.environ.get("VALGRIND_LIB", ""), "/usr/libexec/valgrind",
            "/usr/lib/x86_64-linux-gnu/valgrind", "/usr/lib/valgrind",
            os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(vg))),
                         "libexec", "valgrind")]
    for d in dirs:
        t = os.path.join(d, "callgrind-amd64-linux")
        if d and os.access(t, os.X_OK):
            return vg, t, d
    return "callgrind's tool binary (callgrind-amd64-linux) not found"


def heaptrack_parts():
    """(preload library, interpreter) as the heaptrack script finds them:
    ../lib/heaptrack beside the script's real path; or a reason."""
    ht = shutil.which("heaptrack")
    if not ht:
        return "not installed (apt-get install heaptrack)"
    lib = os.path.join(os.path.dirname(os.path.realpath(ht)), "..", "lib", "heaptrack")
    pre = os.path.realpath(os.path.join(lib, "libheaptrack_preload.so"))
    interp = os.path.realpath(os.path.join(lib, "libexec", "heaptrack_interpret"))
    if not os.path.exists(pre) or not os.access(interp, os.X_OK):
        return "heaptrack's preload library or interpreter not found under " + lib
    return pre, interp


class Counter:
    """Runs one program under callgrind and returns its instruction count.
    Callable from several threads at once: each run has files of its own."""

    def __init__(self, c, cg):
        self.c, (self.launcher, self.tool, self.libdir) = c, cg
        self.ids = itertools.count(1)

    def __call__(self, argv, env_extra, stdin=None, cwd=None, block=()):
        """(instructions, None) or (None, why).  block: signals the
        program starts with blocked (inherited through exec, as valgrind
        passes the mask on to the program)."""
        k = next(self.ids)
        out = os.path.join(self.c.WORK, "cg.%d.out" % k)
        err = os.path.join(self.c.WORK, "cg.%d.stderr" % k)
        env = dict(os.environ)
        env.update(VALGRIND_LIB=self.libdir, VALGRIND_LAUNCHER=self.launcher)
        env.update(env_extra)
        cmd = [self.tool, "--tool=callgrind", "--callgrind-out-file=" + out] + argv
        try:
            with open(err, "wb") as e, open(stdin or os.devnull, "rb") as i:
                p = subprocess.run(cmd, env=env, cwd=cwd, stdin=i, stdout=subprocess.DEVNULL,
                                   stderr=e, timeout=3600, preexec_fn=(
                                       lambda: signal.pthread_sigmask(signal.SIG_BLOCK, block))
                                   if block else None)
        except (OSError, subprocess.SubprocessError) as ex:
            return None, "callgrind: %s" % ex
        n = None
        try:
            with open(out) as f:
                for line in f:
                    if line.startswith(("summary:", "totals:")):
                        n = int(line.split()[1])
                        break
            os.unlink(out)
        except (OSError, ValueError, IndexError):
            pass
        if p.returncode != 0 or n is None:
            with open(err, "rb") as f:
                tail = [ln for ln in f.read().decode("utf-8", "replace").splitlines()
                        if not ln.startswith("==")][-1:]
            return None, "under callgrind: exit status %d%s" % (
                p.returncode, (": " + tail[0][:100]) if tail else "")
        return n, None


# ---------------------------------------------------------------- tools

def tools(c, selected):
    """name -> (available-or-why, make(tag) -> (env, check() -> why or None))."""
    W = c.WORK
    ht = heaptrack_parts()
    mp = os.access(c.MPROF, os.X_OK) and os.path.exists(c.MPROF_LIB) or "not built (make)"
    je = os.path.exists(JEMALLOC) or "not installed (apt-get install libjemalloc2)"

    def clean(*pats):
        for p in pats:
            for f in glob.glob(p):
                os.unlink(f)

    def mprof(tag, sample):
        f = os.path.join(W, "cg.%s.mprof.data" % tag)
        clean(f)
        env = {"LD_PRELOAD": c.MPROF_LIB, "MPROF_OUT": f}
        if sample:
            env["MPROF_SAMPLE"] = str(SAMPLE)

        def check():
            if not os.path.exists(f):
                return "wrote no profile"
            return c.mprof_check([f], SAMPLE if sample else 0)
        return env, check

    def heaptrack(tag):
        f = os.path.join(W, "cg.%s.heaptrack.raw" % tag)
        clean(f)
        return ({"LD_PRELOAD": ht[0], "DUMP_HEAPTRACK_OUTPUT": f},
                lambda: None if os.path.exists(f) and os.path.getsize(f) > 0
                else "wrote no raw output")

    def jeprof(tag):
        prefix = os.path.join(W, "cg.%s.jeprof" % tag)
        clean(prefix + ".*.heap")
        return ({"LD_PRELOAD": JEMALLOC, "MALLOC_CONF": jemalloc_conf(prefix)},
                lambda: c.jeprof_check(glob.glob(prefix + ".*.heap")))

    t = {"bare": (True, lambda tag: ({}, lambda: None)),
         "mprof": (mp, lambda tag: mprof(tag, False)),
         "mprof-sample": (mp, lambda tag: mprof(tag, True)),
         "heaptrack": (True if isinstance(ht, tuple) else ht, heaptrack),
         "jemalloc-prof": (je, jeprof),
         "jemalloc": (je, lambda tag: ({"LD_PRELOAD": JEMALLOC}, lambda: None))}
    return {k: v for k, v in t.items() if k == "bare" or k in selected}


# ---------------------------------------------------------------- rows

def workloads(c, quick):
    """(tag, what the row says, argv, env, n, unit) for the instruction rows."""
    pairs = 20000 if quick else 200000
    allocs = 10000 if quick else 100000
    records = 500 if quick else 20000
    return [
        ("churn", "churn %dk pairs (bench/loop.c): instructions per pair above bare"
         % (pairs // 1000), [os.path.join(c.OUT, "loop"), str(pairs)], {}, pairs, "pair"),
        ("python", "python json, %s records (PYTHONMALLOC=malloc): instructions x bare"
         % ("%dk" % (records // 1000) if records >= 1000 else records),
         [c.PYTHON, "-c", c.PY_JSON % records],
         {"PYTHONMALLOC": "malloc", "PYTHONHASHSEED": "0"}, None, None),
        ("deep22", "%s distinct 22-deep stacks (bench/deep22.c): instructions per "
         "allocation above bare" % ("1e4" if quick else "1e5"),
         [os.path.join(c.OUT, "deep22"), str(allocs)], {}, allocs, "allocation"),
    ]


def measure(c, count, tl, quick):
    """{tag: {tool: instructions or None}}, {tag: interpreter's
    instructions}, primes's {tool: instructions}; failures go to
    c.problems.  Callgrind's counts do not depend on the machine's load, so
    the runs go as many at once as there are CPUs (they come after every
    timed run of bench/run)."""
    counts = {tag: {} for tag, _, _, _, _, _ in workloads(c, quick)}
    interp = {}
    ht = heaptrack_parts()

    def one(tag, argv, env, t, check):
        n, why = count(argv, env)
        why = why or check()
        if why:
            c.problems.append("cost: %s under %s: %s" % (tag, t, why))
            n = None
        else:
            c.note("cost: %s under %s: %s instructions" % (tag, t, format(n, ",")))
        counts[tag][t] = n
        raw = os.path.join(c.WORK, "cg.%s.heaptrack.raw" % tag)
        if t == "heaptrack" and n is not None and (tag == "churn" or not quick):
            # heaptrack_interpret's part: the raw stream, interpreted apart
            # (the heaptrack script pipes it through and compresses the
            # result; the compressor is not counted).  --quick: the churn's
            # only (~1G instructions of its start, symbolizing).
            n, why = count([ht[1]], {}, stdin=raw)
            if why:
                c.problems.append("cost: heaptrack_interpret on %s's stream: %s" % (tag, why))
            interp[tag] = n
        if t == "heaptrack" and os.path.exists(raw):
            os.unlink(raw)

    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        jobs = [pool.submit(c.cfbench.primes_instructions, c.cf_ctx(), count, quick)]
        for tag, _, argv, wenv, _, _ in workloads(c, quick):
            for t, (ok, make) in tl.items():
                if ok is True:
                    env, check = make(tag)
                    jobs.append(pool.submit(one, tag, argv, dict(wenv, **env), t, check))
        for j in jobs[1:]:
            j.result()  # an exception here is bench/cost.py's bug: let it show
        return counts, interp, jobs[0].result()


def per(unit):
    return ("an " if unit[0] in "aeiou" else "a ") + unit


def figure(tag, n, unit, counts, t):
    """The row's cell for tool t: per unit above bare, or x bare."""
    bare, x = counts.get("bare"), counts.get(t)
    if x is None or not bare:
        return None
    return (x - bare) / n if unit else x / bare


def cell(v, unit):
    if v is None:
        return "FAILED"
    return ("%.0f" % v if abs(v) >= 100 else "%.1f" % v) if unit else "%.3f" % v


def report(c, selected, quick, wall, primes_wall):
    """Measure and print the cost table for the selected tools (bare is
    always run).  wall: bench/run's medians {workload: {tool: s}} (loop and
    python used); primes_wall: its primes section's medians, or None."""
    cg = callgrind_tool()
    tl = tools(c, selected)
    c.say("## Issue 23: what each memory profiler costs%s"
          % (" (--quick: small inputs, a smoke run)" if quick else ""))
    c.say()
    for k, v in c.machine():
        c.say("- %s: %s" % (k, v))
    c.say("- python: %s (%s; Debian's, whatever python3 is first on PATH%s)"
          % (c.PYTHON, c.run_text([c.PYTHON, "--version"]) or "?",
             ": here " + shutil.which("python3") if shutil.which("python3") else ""))
    c.say("- versions: %s; heaptrack %s; jemalloc %s (libjemalloc2, Debian's build with "
          "profiling); MALLOC_CONF=%s"
          % (c.run_text(["valgrind", "--version"]) or "valgrind ?",
             dpkg("heaptrack"), dpkg("libjemalloc2"), jemalloc_conf("...")))
    c.say("- instructions: callgrind's tool run directly on the program, the profiler "
          "preloaded as its launcher would (bench/cost.py); the program's process alone, "
          "heaptrack's interpreter counted apart (below the table)")
    c.say("- wall rows: bench/run's loop and python sections of this run (the bench/run "
          "block: medians of interleaved runs, and the load they ran under)")
    if not isinstance(cg, tuple):
        c.problems.append("cost: " + cg)
        c.say()
        c.say("not run: " + cg)
        return
    cols = [t for t in ["bare"] + TOOLS if t in tl]
    for t in cols:
        if tl[t][0] is not True:
            c.problems.append("cost: %s %s" % (t, tl[t][0]))
    count = Counter(c, cg)
    counts, interp, pcounts = measure(c, count, tl, quick)

    rows = []
    for tag, desc, _, _, n, unit in workloads(c, quick):
        row = [desc]
        for t in cols:
            if tl[t][0] is not True:
                row.append("missing")
            elif t == "bare":
                row.append("0" if unit else "1.000")
            else:
                row.append(cell(figure(tag, n, unit, counts[tag], t), unit))
        rows.append(row)
    for name, desc in (("loop", "churn %s pairs (bench/run's loop): wall x bare (median of "
                        "interleaved runs)" % ("200k" if quick else "2M")),
                       ("python", "python json, %s records: wall x bare (median of "
                        "interleaved runs)" % ("2k" if quick else "20k"))):
        m = (wall or {}).get(name) or {}
        row = [desc]
        for t in cols:
            if tl[t][0] is not True:
                row.append("missing")
            elif not m.get("bare"):
                row.append("not run")
            elif m.get(t) is None:
                row.append("not run" if t not in m else "FAILED")
            else:
                row.append("%.2f" % (m[t] / m["bare"]))
        rows.append(row)
    c.say()
    c.say(c.table(rows, [""] + [HEADS[t] for t in cols]))

    # The raw counts, so that any figure above can be checked.
    c.say()
    c.say("Instructions (callgrind, the program's process):")
    c.say()
    rows = []
    for tag, desc, _, _, n, unit in workloads(c, quick):
        rows.append([desc.split(":")[0]] + [
            "missing" if tl[t][0] is not True else
            "FAILED" if counts[tag].get(t) is None else format(counts[tag][t], ",")
            for t in cols])
    c.say(c.table(rows, ["workload"] + [HEADS[t] for t in cols]))
    if interp:
        c.say()
        c.say("heaptrack's interpreter (heaptrack_interpret, a process of its own, on "
              "another core if there is one; its start symbolizes the program's libraries) "
              "reads the stream the program writes; on the same streams it executed, beside "
              "the program's instructions above: " + "; ".join(
                  "%s %s" % (tag, "FAILED" if interp[tag] is None else format(interp[tag], ","))
                  for tag in counts if tag in interp) + ".")
    c.say()
    c.say("jemalloc alone: the program on jemalloc without profiling, so that the "
          "allocator's own effect is seen apart from its profiler's; the jemalloc "
          "columns' wall times include /usr/bin/env, which sets the environment for "
          "the program alone (~0.5 ms a run here).")
    if "jemalloc-prof" in cols and "jemalloc" in cols:
        out = []
        for tag, _, _, _, n, unit in workloads(c, quick):
            a, b = counts[tag].get("jemalloc-prof"), counts[tag].get("jemalloc")
            if a is not None and b:
                out.append("%s %s" % (tag, "%+.1f %s" % ((a - b) / n, per(unit)) if unit
                                      else "x%.3f" % (a / b)))
        if out:
            c.say()
            c.say("jemalloc's profiler against jemalloc alone (what its sampling costs, "
                  "instructions): " + "; ".join(out) + ".")

    cfprof_table(c, pcounts, primes_wall, quick)


def cfprof_table(c, pc, primes_wall, quick):
    """The cfprof rows: instructions x no-op hooks; wall from bench/run."""
    heads = ["no-op hooks", "uninstrumented", "cfprof record", "gcc -pg (gmon.out)"]
    c.say()
    rows = []
    n = c.cfbench.PRIMES_N[quick]
    row = ["cfprof, primes N=%s: instructions x no-op hooks (callgrind); gprof -pg beside" % n]
    base = pc.get("no-op hooks")
    for h in heads:
        v = pc.get(h)
        row.append("FAILED" if v is None or not base else "%.3f" % (v / base))
    rows.append(row)
    row = ["cfprof, primes N=%s: wall x no-op hooks (bench/run's primes section)" % n]
    base = (primes_wall or {}).get("no-op hooks")
    for h in heads:
        v = (primes_wall or {}).get(h)
        row.append("not run" if not base else "FAILED" if v is None else "%.2f" % (v / base))
    rows.append(row)
    rows.append(["cfprof, jq 1.6 test suite / a 4 MB filter: wall x no-op hooks",
                 "not measured", "", "", ""])
    c.say(c.table(rows, [""] + heads))
    c.say()
    c.say("Instructions: " + "; ".join(
        "%s %s" % (h, "FAILED" if pc.get(h) is None else format(pc[h], ",")) for h in heads)
        + ".  The jq row needs a jq 1.6 built with -finstrument-functions, which bench/ "
        "does not build yet.")


def dpkg(pkg):
    try:
        p = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", pkg],
                           capture_output=True, text=True, timeout=60)
        return p.stdout.strip() or "?"
    except (OSError, subprocess.SubprocessError):
        return "?"
