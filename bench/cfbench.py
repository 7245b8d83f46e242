"""bench/cfbench.py - bench/run's cfprof sections (issue 13), kept out of
bench/run's mprof driver; bench/run imports it and passes its helpers.

primes: the paper's Figure 1 program (examples/primes.c, ~64M calls), built
  -O2 -finstrument-functions and run bare: glibc's no-op hooks are the
  reference (cfprof's goal: at most 1.3x of it).  Beside it, round-robin,
  medians: the same source without instrumentation (for information: what
  the hooks themselves cost), `cfprof record`, a `gcc -pg` build (gprof's
  gmon.out; then gprof's analysis, timed apart) and `uftrace record` of the
  instrumented binary.  Each tool's output size, and how many of test's
  calls its profile holds (the program counts them itself).

fg: the paper's section 4 criticism of gprof, on tests/progs/cf_fg.c (f
  calls isPrime with large primes, g with small ones, equally often):
  gprof apportions isPrime's time to f and g by call counts (half each),
  cfprof --unprofiled isPrime charges each what it caused, and cfprof's
  call graph splits isPrime's time by the real per-path samples; beside the
  shares the program measures with its own clock.

primes_instructions: issue 23's cost table (bench/cost.py) asks primes's
  instructions, counted by callgrind: the same four builds and runs as
  primes (no-op hooks, uninstrumented, libcfprof, -pg), none of uftrace.
"""

import os
import re
import shutil
import signal
import statistics
import subprocess

PRIMES_N = {True: "5000", False: "35700"}  # N for --quick, for a full run

class Ctx:
    """What bench/run passes: its helpers and settings."""

    def __init__(self, **kw):
        self.__dict__.update(kw)


def build(c):
    """The primes binaries and the f/g binaries (in c.OUT)."""
    src = os.path.join(c.ROOT, "examples", "primes.c")
    fg = os.path.join(c.ROOT, "tests", "progs", "cf_fg.c")
    # Without -finstrument-functions gcc would inline test and turn its
    # tail recursion into a loop: -fno-optimize-sibling-calls keeps the
    # 64M calls (examples/primes.c says why).
    c.cc([src, "-finstrument-functions", "-o", os.path.join(c.OUT, "primes-inst")])
    c.cc([src, "-fno-optimize-sibling-calls", "-o", os.path.join(c.OUT, "primes-plain")])
    c.cc([src, "-pg", "-fno-optimize-sibling-calls", "-o", os.path.join(c.OUT, "primes-pg")])
    c.cc([fg, "-finstrument-functions", "-o", os.path.join(c.OUT, "fg-inst")])
    c.cc([fg, "-pg", "-o", os.path.join(c.OUT, "fg-pg")])


def text(argv, cwd=None, env=None):
    """(exit status, stdout) of argv; (-1, why) if it cannot start."""
    try:
        p = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    except (OSError, subprocess.SubprocessError) as e:
        return -1, str(e)
    return p.returncode, p.stdout


def dir_bytes(path):
    n = 0
    for d, _, files in os.walk(path):
        for f in files:
            try:
                n += os.path.getsize(os.path.join(d, f))
            except OSError:
                pass
    return n


# ---------------------------------------------------------------- parsing

def flat_rows(out):
    """prof/gprof/cfprof flat profile: name (last field) -> fields."""
    rows = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 3 and re.match(r"^[0-9.]+$", f[0]) and re.match(r"^[0-9.]+$", f[1]):
            rows.setdefault(f[-1], f)
    return rows


def graph_blocks(out):
    """gprof's call graph layout (gprof -q, cfprof -q): a list of blocks,
    each {"name", "pct", "called", "callers": {name: (self, children,
    called)}, "callees": {...}}.  Names are the field before " [N]"."""
    blocks, cur = [], []

    def flush():
        b = {"callers": {}, "callees": {}}
        side = "callers"
        for f in cur:
            if re.match(r"^\[\d+\]$", f[0]):
                if len(f) < 4 or not re.match(r"^[0-9.]+$", f[1]):
                    continue
                name = f[-2] if re.match(r"^\[\d+\]$", f[-1]) else f[-1]
                b.update(name=name, pct=f[1], called=f[-3] if len(f) >= 6 else "")
                side = "callees"
                continue
            if not re.match(r"^\[\d+\]$", f[-1]) or len(f) < 3:
                continue  # <spontaneous>, headers
            name, called = f[-2], f[-3]
            self_, children = (f[0], f[1]) if len(f) >= 5 else ("", "")
            b[side][name] = (self_, children, called)
        if "name" in b:
            blocks.append(b)
        cur.clear()

    for line in out.splitlines():
        if line.startswith("Index by function name"):
            break  # gprof's index: "[3] f  [4] g" is not a block
        if re.match(r"^\s*-{10,}\s*$", line):
            flush()
        elif line.strip() and not line.lstrip().startswith("index"):
            cur.append(line.split())
    flush()
    return {b["name"]: b for b in blocks}


def num(s, default=0.0):
    try:
        return float(s)
    except (TypeError, ValueError):
        return default


def ncalls(s):
    """'1000', '6+5994', '500/1000' -> total calls (A+R, numerator)."""
    s = (s or "").split("/")[0]
    try:
        return sum(int(x) for x in s.split("+"))
    except ValueError:
        return None


# ---------------------------------------------------------------- primes

def primes(c, reps, quick):
    c.say()
    n = PRIMES_N[quick]
    c.say("### primes: the paper's Figure 1 program (examples/primes.c), N = %s%s"
          % (n, "" if quick else ": ~64M calls, recursion ~71000 frames deep"))
    c.say()
    inst, plain, pg = (os.path.join(c.OUT, b) for b in ("primes-inst", "primes-plain", "primes-pg"))
    uftrace, gprof = shutil.which("uftrace"), shutil.which("gprof")
    cf_data = os.path.join(c.WORK, "primes.cfprof.data")
    uf_dir = os.path.join(c.WORK, "primes.uftrace")
    gmon = os.path.join(c.WORK, "gmon.out")
    cf_ok = os.access(c.CFPROF, os.X_OK) and os.path.exists(c.CFPROF_LIB)

    # name, available-or-why, argv, outputs (globs), before-run, output size
    tools = [
        ("no-op hooks", True, [inst, n], [], None, None),
        ("uninstrumented", True, [plain, n], [], None, None),
        ("cfprof record", True if cf_ok else "not built (build/bin/cfprof)",
         [c.CFPROF, "record", "-o", cf_data, inst, n], [cf_data + "*"], None, None),
        ("gcc -pg (gmon.out)", True if gprof else "gprof not installed (binutils)",
         [pg, n], [gmon], None, None),
        ("uftrace record", True if uftrace else "not installed (apt-get install uftrace)",
         [uftrace or "uftrace", "record", "-d", uf_dir, inst, n], [],
         lambda: shutil.rmtree(uf_dir, ignore_errors=True), lambda: dir_bytes(uf_dir)),
    ]
    for name, avail, _, _, _, _ in tools:
        if avail is not True:
            c.problems.append("primes: %s %s" % (name, avail))
    env = dict(os.environ)
    old = os.getcwd()
    os.chdir(c.WORK)  # gmon.out goes to the current directory
    try:
        truth = text([inst, n])[1]
        want = re.search(r"^test (\d+)", truth, re.M)
        want = int(want.group(1)) if want else None
        res = {t[0]: [] for t in tools}
        failed = {}
        for rep in range(reps):
            for name, avail, argv, outs, before, size in tools:
                if avail is not True or name in failed:
                    continue
                if before:
                    before()
                r = c.run_one(argv, env, outs)
                if r.ok and size:
                    r.out_bytes = size()
                if not r.ok:
                    failed[name] = r.why
                    c.problems.append("primes under %s: %s" % (name, r.why))
                    continue
                res[name].append(r)
            c.note("primes: repetition %d done" % (rep + 1))
        recorded = {"no-op hooks": want, "uninstrumented": want}
        extra = []
        if res["cfprof record"]:
            st, out = text([c.CFPROF, "-p", inst, cf_data])
            row = flat_rows(out).get("test")
            recorded["cfprof record"] = ncalls(row[2]) if row and st == 0 else None
            if st != 0:
                c.problems.append("cfprof cannot read the primes profile (exit %d)" % st)
            ts = []
            for _ in range(reps):
                r = c.run_one([c.CFPROF, inst, cf_data], env)
                if r.ok:
                    ts.append(r.wall)
            if ts:
                extra.append(["`cfprof` displaying the profile: wall s (median of %d)" % len(ts),
                              c.fmt_s(statistics.median(ts))])
        if res["gcc -pg (gmon.out)"]:
            ts, out = [], ""
            for _ in range(reps):
                r = c.run_one([gprof, "-b", pg, gmon], env)
                if r.ok:
                    ts.append(r.wall)
            st, out = text([gprof, "-b", "-q", pg, gmon])
            b = graph_blocks(out).get("test")
            recorded["gcc -pg (gmon.out)"] = ncalls(b["called"]) if b else None
            if ts:
                extra.append(["gprof's analysis of gmon.out: wall s (median of %d)" % len(ts),
                              c.fmt_s(statistics.median(ts))])
        if res["uftrace record"]:
            st, out = text([uftrace, "report", "-d", uf_dir, "-s", "call"])
            m = re.search(r"^\s*\S+ \S+\s+\S+ \S+\s+(\d+)\s+test\s*$", out, re.M)
            recorded["uftrace record"] = int(m.group(1)) if m else None
    finally:
        os.chdir(old)

    med = {k: statistics.median(r.wall for r in v) for k, v in res.items() if v}
    base, bplain = med.get("no-op hooks"), med.get("uninstrumented")
    rows = []
    for name, avail, _, _, _, _ in tools:
        rs = res[name]
        if avail is not True:
            rows.append([name, "-", "missing: " + avail] + [""] * 6)
        elif name in failed:
            rows.append([name, "-", "FAILED: " + failed[name]] + [""] * 6)
        else:
            w = med[name]
            rec = recorded.get(name)
            rows.append([name, len(rs), c.fmt_s(w), "%.2f" % (w / base) if base else "-",
                         "%.2f" % (w / bplain) if bplain else "-",
                         c.fmt_s(statistics.median(r.cpu for r in rs)),
                         c.fmt_mb(max(r.maxrss_kb for r in rs)),
                         c.fmt_size(rs[-1].out_bytes) if rs[-1].out_bytes is not None else "-",
                         "-" if rec is None else "%d%s" % (rec, "" if rec == want else " (of %s)" % want)])
    c.say(c.table(rows, ["tool", "runs", "wall s (median)", "x no-op hooks", "x uninstrumented",
                         "cpu s", "peak RSS MB", "output", "test's calls in the profile"]))
    if extra:
        c.say()
        c.say(c.table(extra, ["figure", "measured"]))
    c.say()
    if med.get("cfprof record") and base:
        x = med["cfprof record"] / base
        c.say("goal: cfprof record at most 1.3x the no-op-hook run: %.2f, %s"
              % (x, "met" if x <= 1.3 else "MISSED"))
    else:
        c.say("goal: cfprof record at most 1.3x the no-op-hook run: not measured")
    if res["uftrace record"]:
        c.say()
        c.say("uftrace records calls down to depth 1024 only (its --max-stack default, with "
              "a warning): the recursion here is ~71000 frames deep, so its file and its "
              "count of test's calls hold what it kept.")
    return med


def primes_instructions(c, count, quick):
    """Issue 23's cost table: primes's instructions, counted by callgrind
    (count(argv, env, cwd=) -> (instructions, why), bench/cost.py's), with
    glibc's no-op hooks (the reference), without instrumentation, with
    libcfprof preloaded (as `cfprof record` runs it, without its launcher)
    and built -pg (mcount and the gmon.out write).
    -> {tool: instructions or None}; failures go to c.problems."""
    n = PRIMES_N[quick]
    inst, plain, pg = (os.path.join(c.OUT, b) for b in ("primes-inst", "primes-plain", "primes-pg"))
    data = os.path.join(c.WORK, "cg.primes.cfprof.data")
    gmon = os.path.join(c.WORK, "gmon.out")
    truth = re.search(r"^test (\d+)", text([inst, n])[1], re.M)

    def cf_check():
        st, out = text([c.CFPROF, "-p", inst, data])
        row = flat_rows(out).get("test") if st == 0 else None
        got = ncalls(row[2]) if row else None
        if truth and got == int(truth.group(1)):
            return None
        return "the profile does not read, or holds %s of test's calls" % got

    # The -pg run starts with SIGPROF blocked: under callgrind, a SIGPROF
    # still queued when gmon's exit handler has stopped profil() and put
    # back the default action kills the program (exit status -27, at
    # N = 35700).  Its count is then mcount's and the gmon.out write's,
    # without profil's 100 Hz histogram ticks (~36k instructions there).
    runs = [("no-op hooks", [inst, n], {}, None, None, ()),
            ("uninstrumented", [plain, n], {}, None, None, ()),
            ("cfprof record", [inst, n], {"LD_PRELOAD": c.CFPROF_LIB, "CFPROF_OUT": data},
             data, cf_check, ()),
            ("gcc -pg (gmon.out)", [pg, n], {}, gmon,
             lambda: None if os.path.exists(gmon) else "wrote no gmon.out", (signal.SIGPROF,))]
    res = {}
    for name, argv, env, out, check, block in runs:
        if out and os.path.exists(out):
            os.unlink(out)
        v, why = count(argv, env, cwd=c.WORK, block=block)
        why = why or (check() if check else None)
        if why:
            c.problems.append("cost: primes %s: %s" % (name, why))
            v = None
        else:
            c.note("cost: primes %s: %s instructions" % (name, format(v, ",")))
        res[name] = v
    return res


# ---------------------------------------------------------------- fg

def fg(c):
    c.say()
    c.say("### fg: gprof's apportioning beside the truth and cfprof (the paper, section 4)")
    c.say()
    c.say("tests/progs/cf_fg.c: f and g each call isPrime 16000 times; f's calls are "
          "about 10 times as costly.  Shares of the program's CPU time; the truth is "
          "what the program measured with its own clock in the same run.")
    c.say()
    inst, pg = os.path.join(c.OUT, "fg-inst"), os.path.join(c.OUT, "fg-pg")
    gprof = shutil.which("gprof")
    cf_ok = os.access(c.CFPROF, os.X_OK) and os.path.exists(c.CFPROF_LIB)
    cols = {}  # column -> {"f": share, "g": share, "isPrime to f": fraction}
    truth = {}

    def to_f(blocks):
        """isPrime's caller lines: f's self+children over f's and g's."""
        ip = blocks.get("isPrime", {}).get("callers", {})
        t = {fn: num(ip[fn][0]) + num(ip[fn][1]) for fn in ("f", "g") if fn in ip}
        s = sum(t.values())
        return t.get("f", 0) / s if s > 0 else None

    def shares(out):
        return {m.group(1): float(m.group(2))
                for m in re.finditer(r"^(\w+) ([0-9.]+)$", out, re.M)}

    old = os.getcwd()
    os.chdir(c.WORK)
    try:
        if gprof:
            st, out = text([pg])
            if os.path.exists("gmon.out") and st == 0:
                t = shares(out)
                truth.setdefault("gprof run", t)
                st, g = text([gprof, "-b", "-q", pg, "gmon.out"])
                b = graph_blocks(g)
                col = {}
                for fn in ("f", "g"):
                    if fn in b:
                        col[fn] = num(b[fn]["pct"]) / 100
                x = to_f(b)
                if x is not None:
                    col["isPrime to f"] = x
                cols["gprof (call graph)"] = col
            else:
                c.problems.append("fg: the -pg build wrote no gmon.out (exit %d)" % st)
        if cf_ok:
            data = os.path.join(c.WORK, "fgu.cfprof.data")
            st, out = text([c.CFPROF, "record", "--unprofiled", "isPrime", "-o", data, inst])
            if st == 0:
                truth.setdefault("cfprof run", shares(out))
                st, p = text([c.CFPROF, "-p", inst, data])
                rows = flat_rows(p)
                cols["cfprof --unprofiled isPrime"] = {fn: num(rows[fn][0]) / 100
                                                      for fn in ("f", "g") if fn in rows}
            else:
                c.problems.append("fg: cfprof record --unprofiled isPrime failed (exit %d)" % st)
            data = os.path.join(c.WORK, "fg.cfprof.data")
            st, out = text([c.CFPROF, "record", "-o", data, inst])
            if st == 0:
                st, g = text([c.CFPROF, "-q", inst, data])
                x = to_f(graph_blocks(g))
                if x is not None:
                    cols["cfprof (call graph)"] = {"isPrime to f": x}
            else:
                c.problems.append("fg: cfprof record failed (exit %d)" % st)
    finally:
        os.chdir(old)

    t = next(iter(truth.values()), {})
    tcol = {}
    if t:
        tcol = {"f": t.get("f_share"), "g": t.get("g_share")}
        if t.get("isPrime_share"):
            tcol["isPrime to f"] = t["isPrime_f_share"] / t["isPrime_share"]
    heads = ["truth (the program's clock)"] + list(cols)
    allc = [tcol] + [cols[k] for k in cols]
    labels = [("f", "f: share of the time, f and what it called"),
              ("g", "g: share of the time, g and what it called"),
              ("isPrime to f", "fraction of isPrime's time charged to f")]
    rows = []
    for key, label in labels:
        rows.append([label] + ["-" if col.get(key) is None else "%.3f" % col[key] for col in allc])
    c.say(c.table(rows, ["figure"] + heads))
    if not gprof:
        c.say()
        c.say("gprof not installed (binutils): no gprof column")
        c.problems.append("fg: gprof not installed")
    if not cf_ok:
        c.say()
        c.say("cfprof not built: no cfprof columns")
        c.problems.append("fg: cfprof not built")
    c.say()
    c.say("gprof's call graph charges f and g each half of isPrime's time, because they "
          "called it equally often; the time f and g really caused is in the truth column.")
