# export --format html (issue 14): the self-contained report, opened in a
# real browser, Debian's headless chromium, driven over the DevTools
# protocol by tests/browser.py.  For each kind of profile: no console
# error and nothing fetched; the flame graph draws the expected frames
# with the program's own figures; a real click zooms; typing in the search
# box highlights; hovering shows the exact figure; the function view and
# the callees/callers of a root; mprof's four tables.
. "$(dirname "$0")/../lib.sh"
plan 27
CPPROF=$B/bin/cpprof
CFPROF=$B/bin/cfprof
PY=/usr/bin/python3 # Debian's: python3-websocket is installed for it
cd "$T" || exit 1
if ! command -v chromium > /dev/null || ! "$PY" -c 'import websocket' 2> /dev/null; then
	diag "chromium or python3-websocket is missing (scripts/install-deps.sh installs them)"
	for i in $(seq 26); do fail "a browser to test the report in"; done
	done_testing
fi
# browse PAGE: run the commands on stdin in PAGE, one JSON line each.
browse() { "$PY" "$TOP/tests/browser.py" "$1"; }
# Frames of the drawn flame graph as "name=value" lines.
FRAMES="[...document.querySelectorAll('#flame .fr')].map(e => e.dataset.name + '=' + e.dataset.value).join(' ')"
frame() { echo "[...document.querySelectorAll('#flame .fr')].find(e => e.dataset.name === '$1')"; }

# --- mprof: main -> big_alloc keeps 3 x 1000 bytes, main -> branch ->
# leaf_alloc keeps 5 x 200; branch makes 7 x 10 it frees.
cc_prog report report.c || exit 1
"$MPROF" run -o r.data ./report > /dev/null 2>&1
"$MPROF" export --format html -o r.html ./report r.data
is "$?/$(grep -c '<script src\|<link ' r.html)" "0/0" "mprof: the page is written, with no external script or style"
out=$(browse r.html <<EOF
errors
requests
eval $FRAMES
eval document.getElementById('counter').selectedOptions[0].textContent
eval (() => { const s = document.getElementById('counter'); s.value = 0; s.dispatchEvent(new Event('change')); return 0; })()
eval $FRAMES
hover $(frame big_alloc)
eval document.getElementById('tip').textContent
click $(frame branch)
eval [document.getElementById('flame').clientWidth, ...[...document.querySelectorAll('#flame .fr')].map(e => e.dataset.name + '@' + Math.round(parseFloat(e.style.width)))].join(' ')
click $(frame branch)
eval $FRAMES
type document.getElementById('search') ||| leaf_
eval [...document.querySelectorAll('#flame .fr.match')].map(e => e.dataset.name).join(' ')
eval document.getElementById('status').textContent
click document.querySelector('button[data-tab=functions]')
eval [...document.querySelectorAll('#functions tbody tr')].map(r => r.dataset.name + ':' + r.dataset.total + '/' + r.dataset.self).join(' ')
click [...document.querySelectorAll('#functions td.name')].find(e => e.textContent === 'branch')
eval [document.querySelector('button.tab.on').textContent, $FRAMES].join(' | ')
click document.querySelector('button[data-tab=up]')
eval $FRAMES
click document.querySelector('button[data-tab=tables]')
eval document.getElementById('tables').textContent
errors
EOF
)
line() { printf '%s\n' "$out" | sed -n "${1}p"; }
is "$(line 1)" "[]" "mprof: no console error or exception on load"
is "$(line 2)" "[]" "mprof: nothing fetched (the page is self-contained)"
is "$(line 3)" '"(all)=4000 main=4000 big_alloc=3000 branch=1000 leaf_alloc=1000"' \
	"mprof: inuse_space (the default) draws the kept bytes: big_alloc 3000, branch > leaf_alloc 1000"
is "$(line 4)" '"inuse_space (bytes)"' "mprof: the counter shown first is pprof's default"
is "$(line 6)" '"(all)=15 main=15 branch=12 leaf_alloc=5 big_alloc=3"' \
	"mprof: alloc_objects: branch 12 (7 of its own, 5 in leaf_alloc), big_alloc 3"
like "$(line 8)" '^"big_alloc.*alloc_objects: 3, 20\.00% of all; self 3"$' "mprof: hovering a frame shows its exact figure"
like "$(line 10)" '^"([0-9]+) \(all\)@\1 main@\1 branch@\1 leaf_alloc@[0-9]+"$' \
	"mprof: a click on branch zooms: it fills the width, big_alloc is gone"
is "$(line 12)" "$(line 6)" "mprof: a click on the zoomed frame zooms back out"
is "$(line 14)" '"leaf_alloc"' "mprof: typing in the search box highlights leaf_alloc's frame"
like "$(line 15)" '^"search: 5, 33\.33% of all' "mprof: the search reports what it matched: 5 of 15"
is "$(line 17)" '"main:15/0 branch:12/7 leaf_alloc:5/5 big_alloc:3/3"' \
	"mprof: the function view: total and self per function"
is "$(line 19)" '"Callees of branch | branch=12 leaf_alloc=5"' \
	"mprof: clicking a function roots the callees view there"
is "$(line 21)" '"branch=12 main=12"' "mprof: the callers view of branch: main"
like "$(line 23)" '4000 bytes kept' "mprof: the tables tab has mprof's header"
like "$(line 23)" 'MEMORY LEAKS.*main > branch > leaf_alloc' "mprof: and its leak table"
is "$(line 24)" "[]" "mprof: no console error after all that"

# --- cpprof: the phases example, every frame worth its samples x 1 ms
cc -O2 -g -o phases "$TOP/examples/phases.c" || exit 1
"$CPPROF" record -o c.data ./phases 300 > /dev/null
"$CPPROF" export --format html -o c.html ./phases c.data
fold=$("$CPPROF" export --format folded ./phases c.data)
sum() { printf '%s\n' "$fold" | awk -v f="$1" '$0 ~ f { s += $NF } END { printf "%d\n", s }'; }
out=$(browse c.html <<EOF
errors
requests
eval document.querySelector('#flame .fr[data-name=main]').dataset.value
eval document.querySelector('#flame .fr[data-name=parse_input]').dataset.value
eval document.querySelector('button[data-tab=tables]').hidden
EOF
)
is "$(line 1)/$(line 2)" "[]/[]" "cpprof: no console error, nothing fetched"
is "$(line 3)" "\"$(sum '^main')\"" "cpprof: main's frame is worth every sample in ns ($(sum '^main'))"
is "$(line 4)" "\"$(sum 'parse_input')\"" "cpprof: parse_input's frame is worth its samples"
is "$(line 5)" "true" "cpprof: no tables tab (they are mprof's)"

# --- cfprof: the paper's primes with N = 1000: test 78191 calls,
# isPrime 1000 (examples/primes.c)
cc -O2 -g -finstrument-functions -o primes "$TOP/examples/primes.c" || exit 1
"$CFPROF" record -o f.data ./primes 1000 > primes.out
"$CFPROF" export --format html -o f.html ./primes f.data
out=$(browse f.html <<EOF
errors
eval (() => { const s = document.getElementById('counter'); s.value = [...s.options].find(o => o.textContent.startsWith('calls')).value; s.dispatchEvent(new Event('change')); return 0; })()
click document.querySelector('button[data-tab=functions]')
eval [...document.querySelectorAll('#functions tbody tr')].filter(r => /^(test|isPrime)$/.test(r.dataset.name)).map(r => r.dataset.name + ':' + r.dataset.self).sort().join(' ')
click [...document.querySelectorAll('#functions td.name')].find(e => e.textContent === 'isPrime')
click document.querySelector('button[data-tab=up]')
eval $FRAMES
errors
EOF
)
t=$(awk '$1 == "test" { print $2 }' primes.out)
# The page's facts: each counter's total, as cfprof's flat profile says
# them (before: only "N distinct stacks", the totals on hover only).
calls=$("$CFPROF" -p ./primes f.data | sed -n 's/.*; \([0-9]*\) calls$/\1/p')
like "$(grep -o 'distinct stacks; calls [0-9]*, cpu [0-9]* nanoseconds' f.html)" "^distinct stacks; calls $calls, cpu [0-9]+ nanoseconds\$" \
	"cfprof: the page's facts give each counter's total ($calls calls)"
is "$(line 1)" "[]" "cfprof: no console error on load"
is "$(line 4)" "\"isPrime:1000 test:$t\"" "cfprof: calls: the function view's self is each function's exact count ($t tests)"
is "$(line 7)" "\"isPrime=$((t + 1000)) f=$((t + 1000)) subset=$((t + 1000)) main=$((t + 1000))\"" \
	"cfprof: the callers of isPrime: f < subset < main, with the 1000 calls of isPrime and the $t of test below it"
is "$(line 8)" "[]" "cfprof: no console error after all that"

# --- bad input: as every export
head -c 100 r.data > cut.data
"$MPROF" export --format html -o x.html cut.data 2> e
is "$?/$(wc -l < e)/$(test -e x.html && echo written)" "2/1/" "a truncated file: exit 2, one line, no page"
done_testing
