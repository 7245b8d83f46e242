# cfprof record and signal handlers: a void handler whose exit hook is
# reached by a jump after its epilogue (sp: the handler's own CFA) must
# be popped, or its caller's time is charged to it.  A handler landing
# inside an entry hook's stores must not cost the live frame its entry
# (every exit below it would then scan the whole stack: a hang).  A
# handler that siglongjmps out of a hook's slow path must not leave its
# thread busy for good (nothing more counted).
. "$(dirname "$0")/../lib.sh"
plan 8
CFPROF=$B/bin/cfprof
cd "$T" || exit 1
. "$TOP/tests/cf.sh"
# pct TEXT NAME: %time of NAME in a flat profile, as an integer.
pct() { printf '%s\n' "$1" | awk -v n="$2" '$NF == n { printf "%d\n", $1; exit }'; }

${CC:-cc} -O2 -g -finstrument-functions -o sv "$TOP/tests/progs/cf_sigvoid.c" || exit 1
./sv > sv.bare
"$CFPROF" record -o sv.data ./sv > sv.out 2> sv.err
is "$?/$(cat sv.out)" "0/$(cat sv.bare)" "sigvoid: exit status and output as in a bare run"
flat=$("$CFPROF" -p ./sv sv.data)
d=$(pct "$flat" deep) h=$(pct "$flat" on_usr1)
ok $([ "${d:-0}" -ge 80 ]; echo $?) "sigvoid: deep's loop after raise is deep's time (${d:-none}%)"
ok $([ "${h:-0}" -le 5 ]; echo $?) "sigvoid: the handler, returned, is charged nothing (${h:-none}%)"

${CC:-cc} -O2 -g -finstrument-functions -o sr "$TOP/tests/progs/cf_sigrace.c" || exit 1
./sr > sr.bare
timeout 60 "$CFPROF" record -o sr.data ./sr > sr.out 2> sr.err
is "$?/$(cat sr.out)" "0/$(cat sr.bare)" "sigrace: done within 60 s (a hang's guard: bare 0.2 to 2.8 s, as the 10 us timer's storm goes), exit status and output as in a bare run"
flat=$("$CFPROF" -p ./sr sr.data)
is "$(printf '%s\n' "$flat" | awk '$NF == "rec" { print $3 }')" "$(awk '$1 == "rec" { print $2 }' sr.bare)" \
	"sigrace: rec's calls exact"

${CC:-cc} -O2 -g -finstrument-functions -o sj "$TOP/tests/progs/cf_sigjump.c" || exit 1
timeout 60 "$CFPROF" record -o sj.data ./sj > sj.out 2> sj.err
is "$?/$(awk '$1 != "f"' sj.out)/$(cat sj.err)" "0/$(printf 'after 1000\njumps 1000')/" \
	"sigjump: exit status, output and nothing on stderr, as bare"
flat=$("$CFPROF" -p ./sj sj.data)
f=$(printf '%s\n' "$flat" | awk '$NF ~ /^f[0-9]+$/ { n += $3 } END { print n + 0 }')
want=$(awk '$1 == "f" { print $2 }' sj.out)
g=$("$CFPROF" -q ./sj sj.data)
[ "$f" -ge "$want" ] && [ "$f" -le $((want + 1000)) ] && [ "$(graph "$g" after callers)" = "1000/1000 main" ]
ok $? "sigjump: the f's calls counted ($f of $want, and at most the 1000 jumps' entries more), then after's 1000 from main"
# The handler on an alternate signal stack (as one is that interrupts the
# sampler's handler, which runs on its own): each jump leaves a frame of
# another stack than its target's, which is dead too.  Before, every
# on_alrm stayed on the logical stack: after's calls were charged under
# the last one.
timeout 60 "$CFPROF" record -o sa.data ./sj alt > sa.out 2> sa.err
g=$("$CFPROF" -q ./sj sa.data)
is "$?/$(awk '$1 != "f"' sa.out)/$(graph "$g" after callers)" "0/$(printf 'after 1000\njumps 1000')/1000/1000 main" \
	"sigjump on an alternate stack: after's 1000 calls from main"
done_testing
