# diff [--counter NAME] [--root F] [a.out] BASE NEW (issue 14): call path
# fractions of two profiles side by side, largest change first.  Checked on
# cfprof's exact calls, whose fractions the program's own counts give: the
# paper's primes up to 1000 and up to 3000, where test's share of all calls
# grows.  And the refusals.
. "$(dirname "$0")/../lib.sh"
plan 18
CFPROF=$B/bin/cfprof
CPPROF=$B/bin/cpprof
cd "$T" || exit 1

cc -O2 -g -finstrument-functions -o primes "$TOP/examples/primes.c" || exit 1
"$CFPROF" record -o a.data ./primes 1000 > a.out
"$CFPROF" record -o b.data ./primes 3000 > b.out
out=$("$CFPROF" diff --counter calls ./primes a.data b.data)
ok $? "cfprof diff: exit 0"
want=$(awk 'FNR == 1 { f++ } $1 == "calls" { c[f] = $2 } $1 == "test" { t[f] = $2 }
	END { printf "%.5f %.5f %+.5f", t[1] / c[1], t[2] / c[2], t[2] / c[2] - t[1] / c[1] }' a.out b.out)
is "$(printf '%s\n' "$out" | awk '$NF == "test)" && $(NF - 1) == "isPrime" { print $1, $2, $3 }')" "$want" \
	"test's share of the calls in both runs and its change ($want)"
like "$out" '^1\.00000 1\.00000 \+0\.00000 \(main\)$' "main has everything in both"
# BASE of another build (before a change) with NEW's a.out given: the
# a.out is NEW's; BASE is named from its own binary (it was read in the
# new one's symbols, with a warning: paths through other functions).
cc -O2 -g -finstrument-functions -DANOTHER_BUILD=1 -fno-inline-small-functions -o primes2 "$TOP/examples/primes.c" || exit 1
"$CFPROF" record -o c.data ./primes2 3000 > /dev/null
"$CFPROF" diff --counter calls ./primes2 a.data c.data > o 2> e
is "$?/$(wc -c < e)/$(awk '$NF == "test)" && $(NF - 1) == "isPrime" { print $1, $2 }' o)" \
	"0/0/$(printf '%s\n' "$out" | awk '$NF == "test)" && $(NF - 1) == "isPrime" { print $1, $2 }')" \
	"BASE of another build: no warning, its paths named as in the same build's diff"
ok $(printf '%s\n' "$out" | awk '/^[0-9]/ { c = $3 < 0 ? -$3 : $3; if (n++ && c > last + 1e-9) bad = 1; last = c } END { exit bad || n < 5 }'; echo $?) \
	"rows by decreasing change"
# refusals
cc -g -O0 -o widgets "$TOP/examples/widgets.c" && "$MPROF" run -o m.data ./widgets > /dev/null 2>&1
"$CFPROF" diff a.data m.data > o 2> e
is "$?/$(wc -l < e)/$(wc -c < o)" "2/1/0" "different kinds: exit 2, one line, nothing printed"
# An mprof file relabelled cfprof (the header's kind, which no CRC
# covers): no 'calls' counter.  The cfprof view refused it; export, diff
# and merge read it, and merge wrote a file the view then refused.
cp m.data k3.data && printf '\003' | dd of=k3.data bs=1 seek=12 conv=notrunc 2> /dev/null
for verb in "export --format folded" "diff k3.data" "merge -o k3m.data k3.data"; do
	"$CFPROF" $verb k3.data > o 2> e
	is "$?/$(wc -l < e)/$(grep -c "k3.data: corrupt: a cfprof profile without its 'calls' counter" e)/$(ls k3m.data 2> /dev/null)" "2/1/1/" \
		"a cfprof file without calls: cfprof ${verb%% *} refuses it in one line, exit 2"
done
"$CFPROF" diff --counter nosuch a.data b.data > o 2> e
is "$?/$(wc -l < e)" "2/1" "an unknown counter: exit 2, one line"
# A root neither profile has printed an empty table, exit 0.
"$CFPROF" diff --root nosuchfn a.data b.data > o 2> e
is "$?/$(cat e)/$(wc -c < o)" "2/cfprof: diff: no function named 'nosuchfn' in a.data or b.data/0" \
	"--root of no function: refused in one line, exit 2"
like "$("$CFPROF" diff --counter calls --root isPrime ./primes a.data b.data)" '^[01]\.[0-9]{5} [01]\.[0-9]{5} [-+][01]\.[0-9]{5} \(isPrime test\)$' \
	"--root isPrime: its paths, from it"
# Options (issue 22): a threshold is a fraction; --help is the usage.
"$CPPROF" diff --threshold abc a.data b.data > o 2> e
is "$?/$(cat e)/$(wc -c < o)" "2/cpprof: diff: --threshold: 'abc' is not a fraction from 0 to 1/0" \
	"--threshold abc: refused in one line, exit 2"
# The hooks' own row (a quarter of primes' samples here) is not the
# program's: the shares are of the rest, main's whole (before, main was
# 0.7 or so, and moved with the hooks' cost from run to run).
"$CFPROF" record -o h.data ./primes 10000 > /dev/null
like "$("$CFPROF" diff --threshold 0 ./primes h.data h.data)" '^1\.00000 1\.00000 \+0\.00000 \(main\)$' \
	"cfprof diff: shares of the program's time, without the hooks' row: main is 1"
"$CFPROF" diff --threshold 1.5 a.data b.data > o 2> e
is "$?/$(wc -l < e)" "2/1" "--threshold 1.5: refused"
"$CFPROF" diff --help > o 2> e
is "$?/$(head -1 o | awk '{ print $1, $2, $3 }')/$(wc -c < e)" "0/usage: cfprof diff/0" \
	"diff --help: the usage on standard output, exit 0"
# A share that falls by less than the last digit shown: +0.00000, not
# -0.00000 (mprof data: a's 100000 bytes of 200000, then of 200001).
cat > two.c <<'EOC'
#include <stdlib.h>
__attribute__((noinline)) void *a(size_t n) { return malloc(n); }
__attribute__((noinline)) void *b(size_t n) { return malloc(n); }
int main(int argc, char **argv) { (void)argc; free(a(100000)); free(b(strtoul(argv[1], 0, 10))); return 0; }
EOC
cc -O0 -g -o two two.c || exit 1
"$MPROF" run -o t1.data ./two 100000 && "$MPROF" run -o t2.data ./two 100001 || exit 1
like "$("$MPROF" diff --paths --counter alloc_space ./two t1.data t2.data)" '^0\.50000 0\.50000 \+0\.00000 \(main a\)$' \
	"a change that rounds to zero is +0.00000"
# One path left out: 'path', 'its' (a's share falls from 0.5 to 0.25).
"$MPROF" run -o t3.data ./two 300000 || exit 1
like "$("$MPROF" diff --paths --counter alloc_space --threshold 0.6 ./two t1.data t3.data)" \
	'^\(1 path below the threshold 0\.6, in both and in its change, not shown\)$' "one path left out: singular"
done_testing
