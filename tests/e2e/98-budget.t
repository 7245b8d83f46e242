# The cost budget (issue 23, item 4): instructions counted by callgrind
# (the same every run, on any machine of this kind), on fixed workloads,
# bare and under the monitor, so that a change that adds cost is seen the
# day it lands.  The margin is 2% over each figure.
#
#   sampled monitor (--sample, 512 KiB)   goal                       budget
#     bench/loop.c, 200k malloc+free      40 instructions a pair     40.8
#     python3 json, 5k records            1.05 x bare                1.071
#   exact monitor: its goals (200 a pair, 1.30 x, 1,000 an allocation
#   from 1e5 distinct deep stacks) are not met (issue 23, item 2: the
#   floor of a checked stack, bench/RESULTS.md); until they are, the
#   budget is what it costs today, plus the margin, so that it only goes
#   down:
#     bench/loop.c, 200k pairs            today 405.3 a pair         407
#     python3 json, 5k records            today 1.687 x bare         1.721
#     bench/deep22.c, 1e5 allocations     today 2,205 an allocation  2,246
#       each from a distinct 22-deep stack (the save at exit included)
#   Issue 24 raised two of these: the temporaries (a test at every free,
#   two counters more a stack in the file: deep22's frees are all
#   temporary, and its save writes 1e5 stacks; 2,135 -> 2,205) and the
#   timeline (a countdown at every allocation; with errno no longer kept
#   on the hot path, loop 399.1 -> 404.4 with the lifetimes, within its budget).
#   Heaptrack's rule for temporaries (any free ends the run: a store at
#   every free) made it 405.3.
#   The python figure was 1.777 in the test's environment, and 1.68 to
#   1.85 as the environment's size moved the stack: the CI's clone went
#   over 1.806.  With 128 remembered-walk sets and the environment fixed
#   (instr), it is 1.687, and 1.681 to 1.695 over 10 environment sizes;
#   1.694 on Debian's python3.11 3.11.2-6+deb12u9 (before 924d975 and after).
#   the Python view (issue 25)        goal 1.1 x the native view; today 1.107,
#     python3 json, pymalloc            budget 1.121 (1.099 with Debian's
#                                       python3.11 3.11.2-6+deb12u6; the same
#                                       monitor measures 1.108 on deb12u9)
#
# python3 is Debian's /usr/bin/python3 (the bench's; a python3 earlier on
# PATH, pyenv's, costs another number of instructions), with
# PYTHONMALLOC=malloc (every object through malloc) and a fixed hash seed;
# the exact monitor's native view of it (MPROF_PYTHON=0), and its Python
# view (issue 25: pymalloc's objects under their Python frames).
. "$(dirname "$0")/../lib.sh"
plan 11
cd "$T" || exit 1

if ! command -v valgrind > /dev/null; then
	fail "valgrind not found: this test needs Debian's valgrind (scripts/install-deps.sh)"
	for i in 2 3 4 5 6 7 8 9 10; do fail "not run: no valgrind"; done
	exit 1
fi
cc -O2 -g -o loop "$TOP/bench/loop.c" || exit 1
PY=/usr/bin/python3
cat > pj.py <<'EOF'
import json
d = [{"id": i, "name": "item%d" % i, "tags": ["t%d" % (i % 7), "x", str(i)],
      "pos": [i * 0.5, -i], "ok": i % 3 == 0, "sub": {"k": i, "v": "v" * (i % 20)}}
     for i in range(5000)]
s = json.dumps(d)
e = json.loads(s)
assert e == d
print(len(s))
EOF

# instr [VAR=VALUE...] -- PROG ARGS...: the instructions PROG executed
# (env's own are not counted: the last process's count).  The environment
# is only what is given, every path relative to $T: where the stack
# begins moves with the environment's size, and the monitor's remembered
# walks (unwind_memo.h) with it, so a clone in a longer path, or a CI's
# variables, would otherwise count otherwise.
instr() {
	valgrind --tool=callgrind --trace-children=yes --callgrind-out-file="$T/cg.%p" \
		env -i PATH=/usr/bin:/bin MPROF_OUT=cg.data "$@" 2>&1 > /dev/null |
		awk '/Collected :/ { n = $NF } END { print n + 0 }'
}
ln -s "$LIBMPROF/libmprof.so" libmprof.so || exit 1
lib=./libmprof.so

bare=$(instr ./loop 200000)
sampled=$(instr MPROF_SAMPLE=524288 LD_PRELOAD="$lib" ./loop 200000)
exact=$(instr LD_PRELOAD="$lib" ./loop 200000)
pair() { awk -v a="$1" -v b="$bare" 'BEGIN { printf "%.1f", (a - b) / 200000 }'; }
within() { awk -v x="$1" -v m="$2" 'BEGIN { exit !(x > 0 && x <= m) }'; }
s=$(pair "$sampled")
within "$s" 40.8
ok $? "sampled, loop: $s instructions a pair above bare (goal 40, budget 40.8)"
e=$(pair "$exact")
within "$e" 407
ok $? "exact, loop: $e instructions a pair above bare (today's 405.3, budget 407; goal 200)"

if [ -x "$PY" ]; then
	pbare=$(instr PYTHONHASHSEED=0 PYTHONMALLOC=malloc "$PY" pj.py)
	psampled=$(instr PYTHONHASHSEED=0 PYTHONMALLOC=malloc MPROF_SAMPLE=524288 LD_PRELOAD="$lib" "$PY" pj.py)
	pexact=$(instr PYTHONHASHSEED=0 PYTHONMALLOC=malloc MPROF_PYTHON=0 LD_PRELOAD="$lib" "$PY" pj.py)
	pview=$(instr PYTHONHASHSEED=0 LD_PRELOAD="$lib" "$PY" pj.py)
else
	diag "missing: $PY (Debian's python3, scripts/install-deps.sh)"
	pbare=1 psampled=0 pexact=0 pview=0
fi
ratio() { awk -v a="$1" -v b="$pbare" 'BEGIN { printf "%.3f", a / b }'; }
r=$(ratio "$psampled")
within "$r" 1.071
ok $? "sampled, python json: $r x bare (goal 1.05, budget 1.071)"
r=$(ratio "$pexact")
within "$r" 1.721
ok $? "exact, python json: $r x bare (today's 1.694, budget 1.721; goal 1.30)"
# The Python view (issue 25, item 5): the same program with pymalloc, its
# objects under their Python frames, against the native view above (every
# object by malloc, native stacks).  Goal 1.1; today's 1.107 with
# python3.11 3.11.2-6+deb12u9 (1.099 with deb12u6, where the budget was
# set: the interpreter's update moved it, not the monitor; 2.05 when every
# object walked its stack: runtime/mprof/langrec.h), budget 1.121.
r=$(awk -v a="$pview" -v b="$pexact" 'BEGIN { printf "%.3f", (b > 0 ? a / b : 0) }')
within "$r" 1.121
ok $? "exact, python json, the Python view: $r x the native view (today's 1.107, budget 1.121; goal 1.1)"
cc -O2 -g -o deep22b "$TOP/bench/deep22.c" || exit 1
dbare=$(instr ./deep22b 100000)
dexact=$(instr LD_PRELOAD="$lib" ./deep22b 100000)
d=$(awk -v a="$dexact" -v b="$dbare" 'BEGIN { printf "%.0f", (a - b) / 100000 }')
within "$d" 2246
ok $? "exact, 1e5 distinct 22-deep stacks: $d instructions an allocation above bare (today's 2,205, budget 2,246; goal 1,000)"

# The sampled runs wrote profiles that read (a budget met by a monitor
# that records nothing would be no budget).
MPROF_SAMPLE=524288 MPROF_OUT=chk.data LD_PRELOAD="$lib" ./loop 200000 > /dev/null
is "$(info chk.data allocs)/$(info chk.data sample_bytes)" "200001/524288" \
	"the sampled loop's profile: every allocation counted, sampled"

# The save at exit, per distinct stack (issue 23: 944 instructions a
# stack 22 frames deep, of 3,600 an allocation, where every allocation
# is a new stack; 290 since the encoder writes in place, counters are
# read a batch at a time and the checksum folds).  deep22 makes each
# allocation on a stack of its own, 22 deep (a binary counter's bits
# choose between two call sites at 20 levels); run with 20000 and 60000
# stacks, callgrind counting only inside mon_fini_last (the exit handler:
# libc's buffers given back, then the save, with the same fixed work in
# both runs), the difference over 40000 stacks is the save's cost of one.
# Budget: today's 323 plus 5%, 339 (290 before issue 24's two counters of
# temporaries: deep22's are all temporary, a two-byte number each).
cat > deep22.c <<'EOF'
#include <stdio.h>
#include <stdlib.h>
static unsigned long sink;
#define D 22
__attribute__((noinline)) static unsigned long down(int d, unsigned long i)
{
	unsigned long r;
	if (d == 0) {
		char *p = malloc(16 + i % 64);
		if (!p)
			abort();
		p[0] = 1;
		r = (unsigned long)p[0];
		free(p);
		return r;
	}
	if (d <= 20 && (i >> (d - 1)) & 1)
		r = down(d - 1, i) * 3;
	else
		r = down(d - 1, i) + 1;
	__asm__ volatile("" ::: "memory");
	return r;
}
int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], 0, 10) : 100000;
	for (unsigned long i = 0; i < n; i++)
		sink += down(D - 2, i);
	printf("%lu\n", sink);
	return 0;
}
EOF
cc -O2 -g -o deep22 deep22.c || exit 1
# fini N: the instructions inside mon_fini_last (the exit handler the
# destructor registers) with N distinct stacks.
fini() {
	valgrind --tool=callgrind --toggle-collect=mon_fini_last --trace-children=yes \
		--callgrind-out-file="$T/cgf.%p" env MPROF_OUT="$T/d$1.data" LD_PRELOAD="$lib" \
		./deep22 "$1" 2>&1 > /dev/null | awk '/Collected :/ { n = $NF } END { print n + 0 }'
}
f1=$(fini 20000)
f2=$(fini 60000)
per=$(awk -v a="$f1" -v b="$f2" 'BEGIN { printf "%.1f", (b - a) / 40000 }')
within "$per" 339
ok $? "exact, the save at exit: $per instructions a distinct 22-deep stack (today's 323, budget 339; 944 before)"
is "$("$MPROF" dump d60000.data | grep -c '^stack')" 60001 \
	"and the profile it wrote holds every stack (and printf's)"

# A short process: what the monitor costs a process that allocates
# nothing, its load and its save at exit, in page faults above the same
# run bare (the least of 3; /usr/bin/time's %R, the minor faults, env's
# included in both).  A build, a shell script or find -exec start
# thousands of such processes.  Today 64; 161 when the save read the
# lifetimes' empty 384 KiB table (96 faults).  Budget 80.
faults() {
	for i in 1 2 3; do
		{ /usr/bin/time -f %R env -i "$@" /bin/true; } 2>&1
	done | sort -n | head -1
}
fb=$(faults)
fm=$(faults MPROF_OUT="$T/true.data" LD_PRELOAD="$lib")
[ -s "$T/true.data" ] && [ -n "$fb" ] && [ -n "$fm" ] && [ $((fm - fb)) -le 80 ]
ok $? "a short process (/bin/true): $((fm - fb)) page faults above bare ($fm, bare $fb; today's 64, budget 80)"

# ---- cfprof (issue 23, item 3) ----
# The hooks' cost: examples/primes.c (the paper's Figure 1), N = 5000:
# 1.58M calls, almost all of them test's direct recursion, built as users
# build it (-O2 -finstrument-functions).  The reference is the same binary
# run bare, with glibc's no-op hooks (bench/cfbench.py's "no-op hooks").
#
#   cfprof (LD_PRELOAD libcfprof.so)   goal 1.30 x no-op   measured 1.266
#                                      (13 instructions a call)
#                                      budget 1.291 (measured + 2%)
#
# And its profile counts every one of test's calls (a budget met by hooks
# that count nothing would be no budget).
cc -O2 -g -finstrument-functions -o primes "$TOP/examples/primes.c" || exit 1
cflib=$LIBMPROF/libcfprof.so
cfinstr() {
	valgrind --tool=callgrind --trace-children=yes --callgrind-out-file="$T/cf.%p" \
		env CFPROF_OUT="$T/cf.data" "$@" 2>&1 > /dev/null |
		awk '/Collected :/ { n = $NF } END { print n + 0 }'
}
cnoop=$(cfinstr ./primes 5000)
ccf=$(cfinstr LD_PRELOAD="$cflib" ./primes 5000)
r=$(awk -v a="$ccf" -v b="$cnoop" 'BEGIN { printf "%.3f", a / b }')
calls=$("$B/bin/cfprof" -p ./primes "$T/cf.data" 2> /dev/null | awk '$NF == "test" { print $3 }')
within "$r" 1.291 && [ "$calls" = "$(./primes 5000 | awk '$1 == "test" { print $2 }')" ]
ok $? "cfprof, primes: $r x the no-op hooks (goal 1.30, budget 1.291), test's $calls calls counted"
done_testing
