# The HTML report draws the heap over time (issue 24, item 5), in a real
# browser (Debian's headless chromium, through tests/browser.py, as
# tests/e2e/84-report.t), against the program's own figures:
# tests/progs/phases.c holds 10 MiB (phase_one), then 30 MiB (phase_two
# adds 20), then 5 MiB; its peak is 30 MiB and one churn block of 100
# bytes, 31,457,380 bytes, the tables' header's.  Its profile has a
# Timeline tab (the flame graph stays the first): the chart's peak marker
# gives that figure; hovering a point gives the figures `mprof timeline
# --csv` gives for it; clicking the peak draws the flame graph of the peak
# (phase_two's 20 MiB, phase_one's 10), a point after it the tracked
# stacks' and the churn block as (untracked), the last point phase_one's
# 5 MiB.  Two runs merged: the second run's peak is that run's, not the
# two runs' peak counters added up.  lives.c's lifetimes table (every
# sample of shortlived's freed, longlived's all live).  Files with no
# timeline: a cpprof profile and an mprof file from before it have no
# tab; a merge of more points than a file holds keeps its lifetimes, in a
# Lifetimes tab.  No console error, nothing fetched.
. "$(dirname "$0")/../lib.sh"
plan 25
PY=/usr/bin/python3
cd "$T" || exit 1
if ! command -v chromium > /dev/null || ! "$PY" -c 'import websocket' 2> /dev/null; then
	diag "chromium or python3-websocket is missing (scripts/install-deps.sh installs them)"
	for i in $(seq 25); do fail "a browser to test the report in"; done
	done_testing
fi
browse() { "$PY" "$TOP/tests/browser.py" "$1"; }
line() { printf '%s\n' "$out" | sed -n "${1}p"; }
FRAMES="[...document.querySelectorAll('#flame .fr')].map(e => e.dataset.name + '=' + e.dataset.value).join(' ')"
NOTES="[...document.querySelectorAll('#view p.note')].map(e => e.textContent).join(' | ')"
# The tooltip's lines, without grouping commas or the human units in
# parentheses: "at 0.315614 s (the end)" keeps its words.
TIP='document.getElementById("tip").innerText.split("\n").map(l => l.replace(/ \([0-9.]+ [KMGT]iB\)/g, "").replace(/(\d),(?=\d)/g, "$1")).join("|")'
# A lifetimes row: samples | the 5 shares by time | the 5 by bytes | live.
LT="[...document.querySelectorAll('#lifetimes tbody tr')].map(r => r.dataset.name + ':' + [[0, 1], [1, 6], [6, 11], [11, 12]].map(([a, b]) => [...r.cells].slice(a, b).map(c => c.textContent).join(',')).join('|')).join(' ')"
MiB=1048576
cc_prog phases phases.c || exit 1
cc_prog lives lives.c || exit 1
"$MPROF" run -o ph.data ./phases
"$MPROF" timeline --csv ph.data > ph.csv
peak_hdr=$("$MPROF" ./phases ph.data | sed -n '1s/.*, peak \([0-9]*\) bytes live$/\1/p')
"$MPROF" export --format html -o ph.html ./phases ph.data
ok $? "export --format html of a profile with a timeline"

# Points as the page numbers them: the CSV's rows from 0.  The point after
# the peak still holds the peak's 30 MiB and churn block.
pk=$(awk -F, '$5 ~ /peak/ { print NR - 2 }' ph.csv)
row() { sed -n "$(($1 + 2))p" ph.csv; }
csvtip() { # the tooltip the CSV's row $1 makes, marked $2, then stack lines $3
	row "$1" | awk -F, -v m="$2" -v s="$3" '{ printf "at %s s%s|live: %s bytes|objects: %s|allocated so far: %s bytes%s\n", $1, m, $2, $3, $4, s }'
}
after=$((pk + 1))
last=$(($(wc -l < ph.csv) - 2))
out=$(browse ph.html <<EOF2
eval [...document.querySelectorAll('button.tab')].filter(b => !b.hidden).map(b => b.textContent + (b.classList.contains('on') ? '*' : '')).join(' ')
click document.querySelector('button[data-tab=timeline]')
eval document.getElementById('tl-peak').dataset.bytes + ' ' + document.getElementById('tl-peak').textContent
eval document.getElementById('tl-key').textContent
hover document.querySelector('#timeline circle.pt[data-i="$after"]')
eval $TIP
hover document.querySelector('#timeline circle.pt[data-i="$last"]')
eval $TIP
click document.querySelector('#timeline circle.pt[data-i="$pk"]')
eval $FRAMES
click document.querySelector('#timeline circle.pt[data-i="$after"]')
eval $FRAMES
eval $NOTES
click [...document.querySelectorAll('#flame .fr')].find(e => e.dataset.name === 'phase_two')
eval $FRAMES
click document.querySelector('#timeline circle.pt[data-end]')
eval $FRAMES
errors
requests
shot $T/ph.png
EOF2
)
is "$(line 1)" '"Flame graph* Functions Callees Callers Tables Timeline"' \
	"a Timeline tab; the flame graph is still the one shown first"
is "$(line 3)" "\"$peak_hdr peak 31,457,380 bytes (30.00 MiB) at $(row "$pk" | cut -d, -f1) s\"" \
	"the chart's peak marker: the program's peak, 31,457,380 bytes, the header's ($peak_hdr), at the CSV's time"
is "$peak_hdr" 31457380 "(the header's peak: 30 MiB and a churn block)"
is "$(line 4)" '"phase_two (most 20.00 MiB)phase_one (most 10.00 MiB)the rest of the heap"' \
	"its key: phase_two's 20 MiB, phase_one's 10, the rest of the heap"
is "$(row "$after" | cut -d, -f6- | tr , '\n' | grep . | sort -n | tr '\n' ' ')" "10485760 20971520 " \
	"(the CSV: after the peak, the tracked stacks hold 10 MiB and 20 MiB)"
is "$(line 6)" "\"$(csvtip "$after" "" "|phase_two: $((20 * MiB)) bytes|phase_one: $((10 * MiB)) bytes")\"" \
	"hovering the point after the peak: the CSV's time, live bytes, objects and bytes allocated; phase_two's 20 MiB, phase_one's 10"
is "$(line 8)" "\"$(csvtip "$last" " (the end)" "|phase_one: $((5 * MiB)) bytes")\"" \
	"hovering the last point: the CSV's figures, phase_one's 5 MiB"
is "$(row "$last" | cut -d, -f2,3,5)" "$((5 * MiB)),5,end" "(the CSV's last point: 5 MiB in 5 objects, the end)"
is "$(line 10)" "\"(all)=$peak_hdr main=$peak_hdr phase_two=$((20 * MiB)) phase_one=$((10 * MiB))\"" \
	"clicking the peak: its flame graph, the peak's every byte, phase_two's 20 MiB and phase_one's 10"
is "$(line 12)" "\"(all)=$(row "$after" | cut -d, -f2) main=$((30 * MiB)) phase_two=$((20 * MiB)) phase_one=$((10 * MiB))\"" \
	"clicking the point after it: the CSV's live bytes, the tracked stacks' 30 MiB"
like "$(line 13)" "the rest of the heap, $(($(row "$after" | cut -d, -f2) - 30 * MiB)) bytes, is one \\(untracked\\) frame" \
	"the rest, the churn block's 100 bytes, is one (untracked) frame"
is "$(line 15)" "\"(all)=$(row "$after" | cut -d, -f2) main=$((30 * MiB)) phase_two=$((20 * MiB))\"" \
	"a click on phase_two zooms on it"
is "$(line 17)" "\"(all)=$((5 * MiB)) main=$((5 * MiB)) phase_one=$((5 * MiB))\"" "clicking the end: phase_one's 5 MiB live"
is "$(line 18)/$(line 19)" "[]/[]" "no console error, nothing fetched"

# --- two runs merged: each run's peak is its own
"$MPROF" run -o ph2.data ./phases
"$MPROF" merge ph.data ph2.data -o pm.data
"$MPROF" export --format html -o pm.html ./phases pm.data
pk2=$("$MPROF" timeline --csv pm.data | awk -F, '$5 ~ /peak/ { n = NR - 2 } END { print n }')
out=$(browse pm.html <<EOF2
click document.querySelector('button[data-tab=timeline]')
click document.querySelector('#timeline circle.pt[data-i="$pk2"]')
eval $FRAMES
eval $NOTES
errors
EOF2
)
is "$(line 3)" "\"(all)=$peak_hdr main=$((30 * MiB)) phase_two=$((20 * MiB)) phase_one=$((10 * MiB))\"" \
	"merged: the second run's peak holds its own phase_two's 20 MiB and phase_one's 10, not both runs'"
like "$(line 4)" "2 runs merged.*a merged file's peak counters add up every run's" "and says why it shows the tracked stacks only"
is "$(line 5)" "[]" "no console error"

# --- lifetimes: lives.c
"$MPROF" run -o lv.data ./lives
"$MPROF" export --format html -o lv.html ./lives lv.data
lt() { "$MPROF" timeline ./lives lv.data | awk -v f="$1" '/^LIFETIMES/ { l = 1 } l && $NF == f { print $1 }'; }
out=$(browse lv.html <<EOF2
click document.querySelector('button[data-tab=timeline]')
eval $LT
errors
requests
EOF2
)
# (By time: shortlived's under 10 us, unless the machine stopped the
# program between its malloc and free, as 86-timeline says.)
like "$(line 2)" "^\"shortlived:$(lt shortlived)\\|[0-9%,]*\\|100%,,,,\\| longlived:$(lt longlived)\\|,,,,\\|,,,,\\|100%\"\$" \
	"the lifetimes table: shortlived's samples (as many as mprof timeline's) all freed with under 4 KiB allocated meanwhile, none live; longlived's all live"
is "$(line 3)/$(line 4)" "[]/[]" "no console error, nothing fetched"

# --- no timeline: a cpprof profile; an mprof file with none (the fuzz
# corpus's chain, made by tests/hostile as files were before the
# timeline); a merge of more points than a file holds
# (its lifetimes kept, in a Lifetimes tab).
cat > spin.c <<'C'
int main(void) { volatile unsigned long x = 0; for (unsigned long i = 0; i < 100000000; i++) x += i; return 0; }
C
cc -O1 -o spin spin.c
"$B/bin/cpprof" record -o c.data ./spin > /dev/null 2>&1
"$B/bin/cpprof" export --format html -o c.html ./spin c.data
OLD=$TOP/tests/fuzz/corpus/chain
like "$("$MPROF" timeline "$OLD" 2>&1)" "has no timeline" "(the corpus's chain has no timeline)"
"$MPROF" export --format html -o old.html "$OLD" 2> /dev/null
n=$(($(wc -l < ph.csv) - 1))
"$MPROF" merge $(for i in $(seq $((4096 / n + 1))); do echo ph.data; done) -o big.data 2> big.err
like "$("$MPROF" timeline big.data 2>&1)" "has no timeline" "(a merge of $((4096 / n + 1)) runs of $n points: no timeline)"
"$MPROF" export --format html -o big.html ./phases big.data
for f in c old; do
	out=$(browse $f.html <<EOF2
eval document.querySelector('button[data-tab=timeline]').hidden
errors
requests
EOF2
	)
	is "$(line 1)/$(line 2)/$(line 3)" "true/[]/[]" "$f.html: no Timeline tab, no error, nothing fetched"
done
ph2=$("$MPROF" timeline ./phases ph.data | awk '/^LIFETIMES/ { l = 1 } l && $NF == "phase_two" { print $1 }')
out=$(browse big.html <<EOF2
eval (b => b.hidden + ' ' + b.textContent)(document.querySelector('button[data-tab=timeline]'))
click document.querySelector('button[data-tab=timeline]')
eval !!document.getElementById('timeline') + ' ' + [...document.querySelectorAll('#lifetimes tbody tr')].find(r => r.dataset.name === 'phase_two').dataset.samples
errors
EOF2
)
is "$(line 1)/$(line 3)/$(line 4)" "\"false Lifetimes\"/\"false $((ph2 * (4096 / n + 1)))\"/[]" \
	"big.html: a Lifetimes tab, no chart; phase_two's samples, every run's ($ph2 each), in one row"
done_testing
