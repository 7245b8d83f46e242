# The HTML report draws the heap over time (issue 24, item 5), in a real
# browser (Debian's headless chromium, through tests/browser.py, as
# tests/e2e/84-report.t): tests/progs/phases.c's profile has a Timeline
# tab whose chart marks the program's peak (31,457,380 bytes, the tables'
# header's), whose points give the figures `mprof timeline --csv` gives,
# and whose peak point shows the flame graph of the peak (phase_two's 20
# MiB, phase_one's 10) and whose last point what was live at the end
# (phase_one's 5 MiB); lives.c's lifetimes table; no console error,
# nothing fetched.  A profile with no timeline has no such tab.
. "$(dirname "$0")/../lib.sh"
plan 11
PY=/usr/bin/python3
cd "$T" || exit 1
if ! command -v chromium > /dev/null || ! "$PY" -c 'import websocket' 2> /dev/null; then
	diag "chromium or python3-websocket is missing (scripts/install-deps.sh installs them)"
	for i in $(seq 11); do fail "a browser to test the report in"; done
	done_testing
fi
browse() { "$PY" "$TOP/tests/browser.py" "$1"; }
FRAMES="[...document.querySelectorAll('#flame .fr')].map(e => e.dataset.name + '=' + e.dataset.value).join(' ')"
cc_prog phases phases.c || exit 1
cc_prog lives lives.c || exit 1
"$MPROF" run -o ph.data ./phases
"$MPROF" timeline --csv ph.data > ph.csv
"$MPROF" export --format html -o ph.html ./phases ph.data
ok $? "export --format html of a profile with a timeline"
out=$(browse ph.html <<EOF2
click document.querySelector('button[data-tab=timeline]')
eval document.getElementById('timeline').dataset.peak
eval document.getElementById('tl-key').textContent
hover document.querySelector('#timeline circle.pt[data-end]')
eval document.getElementById('tip').textContent
click document.querySelector('#timeline circle.pt[data-peak]')
eval $FRAMES
click document.querySelector('#timeline circle.pt[data-end]')
eval $FRAMES
errors
requests
EOF2
)
line() { printf '%s\n' "$out" | sed -n "${1}p"; }
is "$(line 2)" '"31457380"' "the chart's peak: the program's, 31,457,380 bytes"
is "$(line 3)" '"phase_two (most 20.00 MiB)phase_one (most 10.00 MiB)"' "its key: phase_two's 20 MiB, phase_one's 10"
end=$(tail -n 1 ph.csv)
like "$(line 5)" "^\"at [0-9.]+ s \\(the end\\)\\\\nlive: 5,242,880 bytes \\(5.00 MiB\\)\\\\nobjects: 5\\\\nallocated so far: $(printf '%s' "$end" | cut -d, -f4 | sed ':a;s/\B[0-9]\{3\}\>/,&/;ta') bytes" \
	"hovering the last point: the CSV's figures (5 MiB live in 5 objects, every byte allocated)"
is "$(line 7)" '"(all)=31457380 main=31457380 phase_two=20971520 phase_one=10485760"' \
	"clicking the peak: its flame graph, phase_two 20 MiB and phase_one 10 MiB"
is "$(line 9)" '"(all)=5242880 main=5242880 phase_one=5242880"' "clicking the end: phase_one's 5 MiB live"
is "$(line 10)/$(line 11)" "[]/[]" "no console error, nothing fetched"

"$MPROF" run -o lv.data ./lives
"$MPROF" export --format html -o lv.html ./lives lv.data
out=$(browse lv.html <<EOF2
click document.querySelector('button[data-tab=timeline]')
eval [...document.querySelectorAll('#lifetimes tbody tr')].map(r => r.dataset.name + ':' + (r.dataset.live === '0' ? 'none' : r.dataset.live === r.dataset.samples ? 'all' : 'some') + ' live').join(' ')
eval [...document.querySelectorAll('#lifetimes tbody tr')].find(r => r.dataset.name === 'shortlived').cells[6].textContent
errors
EOF2
)
is "$(line 2)" '"shortlived:none live longlived:all live"' "the lifetimes table: shortlived's samples all freed, longlived's all live"
is "$(line 3)" '"100%"' "shortlived's under 4 KiB allocated meanwhile"
is "$(line 4)" "[]" "no console error"

# A profile with no timeline: a cpprof one.
cat > spin.c <<'C'
int main(void) { volatile unsigned long x = 0; for (unsigned long i = 0; i < 100000000; i++) x += i; return 0; }
C
cc -O1 -o spin spin.c
"$B/bin/cpprof" record -o c.data ./spin > /dev/null 2>&1
"$B/bin/cpprof" export --format html -o c.html ./spin c.data
out=$(browse c.html <<EOF2
eval document.querySelector('button[data-tab=timeline]').hidden
errors
EOF2
)
is "$(line 1)/$(line 2)" "true/[]" "a profile with no timeline: no Timeline tab, no error"
done_testing
