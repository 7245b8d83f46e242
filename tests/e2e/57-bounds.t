# What a data file may cost (doc/format.md, "What a file may cost"): on the
# worst files tests/fuzz/hostile.c makes, the tools answer, or say in one
# line why not, within 64 bytes of memory per byte of the file and 16 MB;
# before issue 12 an 886 KB file took 1.6 GB.  Peak RSS from /usr/bin/time
# (sanitizer builds, with their shadow memory, only check the answers).
. "$(dirname "$0")/../lib.sh"
plan 36
CPPROF=$B/bin/cpprof
H=$B/tests/hostile
cd "$T" || exit 1
case $B in *-san) san=1 ;; *) san=0 ;; esac

# run FILE FACTOR CMD...: CMD's status in $st, stdout in out, stderr in err,
# and a test that its peak RSS is within FACTOR * size(FILE) + 16 MB.
run() {
	_f=$1 _k=$2; shift 2
	/usr/bin/time -f %M -o rss "$@" > out 2> err; st=$?
	if [ $san = 1 ]; then skip 1 "$*: no RSS bound under sanitizers"; return; fi
	_rss=$(tail -n 1 rss) _size=$(wc -c < "$_f")
	_limit=$(( (_k * _size + 16 * 1024 * 1024) / 1024 ))
	if [ "$_rss" -le "$_limit" ]; then pass "$(basename "$1") on $_f: $_rss KB <= $_k * $_size B + 16 MB"
	else fail "$(basename "$1") on $_f: $_rss KB > $_k * $_size B + 16 MB"; fi
}

# 8001 stacks 4096 deep, sharing 4095 frames each: 33M frames in 223 KB.
"$H" chain chain.data 8000
run chain.data 64 "$MPROF" chain.data
is "$st/$(head -n 1 out | sed 's/.*: //')" "0/8001 allocations of 128016 bytes, 0 frees of 0 bytes, 128016 bytes kept" \
	"chain: mprof's tables"
run chain.data 64 "$MPROF" -verbose -depth 1000 chain.data
is "$st/$(grep -c '^ *16 ( \.) *1 *16 ( \.) *\.\.\. > 0x13e70 > ' out)" "0/8001" "chain: every leak chain, 1000 deep"
run chain.data 64 sh -c '"$0" dump "$1" | awk "\$1 == \"stack\" { n++; f += NF - 20 } END { print n, f }" > dump.out' "$MPROF" chain.data
is "$st/$(cat dump.out)" "0/8001 32772096" "chain: dump spells out every frame (4096 x 8001)"
# dump --shared prints what the file holds: in proportion to it.
run chain.data 64 sh -c '"$0" dump --shared "$1" > shared.out' "$MPROF" chain.data
is "$st/$(grep -c ' \^[0-9]*:4095$' shared.out)" "0/8000" "chain: dump --shared refers to the shared frames"
is "$(($(wc -c < shared.out) <= 64 * $(wc -c < chain.data)))" 1 "chain: dump --shared prints at most 64 bytes a byte"
# Spelled out again (awk, on a chain of 51 stacks), the references give
# every frame of the plain dump.
"$H" chain small.data 50
"$MPROF" dump small.data | awk '$1 == "stack"' > plain.out
"$MPROF" dump --shared small.data | awk 'BEGIN { si = 0 } $1 == "stack" {
	n = 0; head = $1; for (i = 2; i <= NF && $i != ":"; i++) head = head " " $i
	for (i++; i <= NF; i++) {
		if ($i ~ /^\^/) { split(substr($i, 2), r, ":"); d = fn[r[1]]
			for (k = d - r[2] + 1; k <= d; k++) f[si, ++n] = f[r[1], k]
		} else f[si, ++n] = $i
	}
	fn[si] = n; line = head " :"; for (k = 1; k <= n; k++) line = line " " f[si, k]
	print line; si++ }' > expanded.out
is "$(cmp -s plain.out expanded.out && echo same)/$(wc -l < plain.out)" "same/51" \
	"dump --shared and dump give the same stacks"
run chain.data 64 "$CPPROF" -c 'tree; function; body; up 0x1fff0' chain.data
is "$st/$(grep -c '^0x1fff0 (1.00000) \[128016\]$' out)" "0/1" "chain: cpprof's views"

# Each stack a leaf under its own caller: an upward profile from the leaf
# would grow a path of 4096 for each stack.
"$H" fan fan.data 4000
run fan.data 64 "$CPPROF" -c 'up 0x7f0000' fan.data
is "$st/$(wc -l < err)" "2/1" "fan: an upward profile over its bound: one line, status 2"
like "$(cat err)" '^cpprof: fan.data: up: over [0-9]+ call paths, more than the file.s [0-9]+ bytes pay for: not shown$' \
	"fan: and it says why"
run fan.data 64 "$CPPROF" -c 'down 0x1fff0; function' fan.data
is "$st" 0 "fan: a downward profile is within bounds"

# Stacks whose frames are all the previous one's, frame 0 a pc in both:
# a return address there, so one frame is expanded again, not the stack
# (which cost 122 MB for this 141 KB file).
"$H" pcshare pcs.data 20000
run pcs.data 64 "$CPPROF" -c tree pcs.data
is "$st/$(grep -c ' 0x10000 (1.00000) \[20001\]$' out)" "0/1" "pcshare: cpprof's tree"

# A legitimate upward profile grows with the square of a chain's depth: a
# chain of 400 functions, each calling alloc() and the next, makes 80k
# call paths from 400 stacks in a 14 KB file, within its budget: shown
# (the answer is the square of the chain: 54 MB of text; no RSS bound).
{
	echo '#include <stdlib.h>'
	echo 'void *volatile sink; __attribute__((noinline)) void alloc(void) { sink = malloc(8); }'
	echo '__attribute__((noinline)) void f400(void) { alloc(); }'
	i=399
	while [ $i -ge 1 ]; do
		echo "__attribute__((noinline)) void f$i(void) { alloc(); f$((i + 1))(); __asm__ volatile(\"\"); }"
		i=$((i - 1))
	done
	echo 'int main(void) { f1(); return 0; }'
} > chain400.c
cc -O1 -g -o chain400 chain400.c
"$MPROF" run -o c400.data ./chain400 2> /dev/null
"$CPPROF" -c 'threshold 0; up alloc' ./chain400 c400.data > out 2> err
is "$?/$(wc -l < err)" "0/0" "chain of 400: the upward profile from alloc is shown"
like "$(grep -c '^0\.00250 (main f1 f2 .* f399 f400 alloc) \[8\]$' out)" '^1$' "with its deepest path, 402 frames"

# Over the reader's bound: one line, status 2, at once.
"$H" cpchain cpchain.data 20000
run cpchain.data 64 "$CPPROF" -c tree cpchain.data
like "$st/$(cat err)" "^2/cpprof: cpchain.data: corrupt stacks section: its stacks would hold more than [0-9]+ frames and counters$" \
	"cpchain: more frames than 256 a byte"
# Under it, a large file whose stacks add up to more than 2^27 frames and
# counters reads: a cfprof file of a C++ test suite under gmock (8.6M
# paths, 146 MB, ~300M frames) was refused as corrupt.  500,001 stacks
# of 300 frames sharing 299, 27 frames a byte: 150M; the bound is 2^30.
"$H" cpchain wide.data 500000 300
run wide.data 64 "$CPPROF" -c function wide.data
like "$st/$(cat err)/$(sed -n 5p out)" '^0//1\.00000 0x[0-9a-f]+ \[500001\]$' \
	"wide: 150M frames and counters at 27 a byte: the profile, not an error"

# Every frame a new address in no module, so a function of its own: at
# one distinct address per 4 bytes, the most a file may have.
"$H" distinct dist.data 3000 0x8000000
run dist.data 64 "$CPPROF" -c 'function; tree' dist.data
is "$st/$(grep -c 'Profile for resource: CPU Time' out)" "0/2" "distinct: cpprof's views"
"$H" mdistinct mdist.data 3000 0x8000000
# mprof's call graph spends ~320 bytes a function (doc/format.md): about
# 1.4 times the bound when every address is a function.
run mdist.data 96 "$MPROF" mdist.data
is "$st/$(head -n 1 out | sed 's/.*: //')" "0/3000 allocations of 48000 bytes, 0 frees of 0 bytes, 48000 bytes kept" \
	"mdistinct: mprof's tables"
# One byte a frame: over the bound, rejected before symbolizing them all.
"$H" distinct dist1.data 3000 1
run dist1.data 64 "$CPPROF" -c 'function' dist1.data
like "$st/$(cat err)" "^2/cpprof: dist1.data: corrupt: over [0-9]+ distinct addresses, more than a file of [0-9]+ bytes holds \(one per 4 bytes\)$" \
	"distinct, one byte a frame: rejected"
run dist1.data 64 "$MPROF" dist1.data
is "$st/$(wc -l < err)" "2/1" "mprof too, in one line"

# Python's functions are named after their modules, each with as many
# last parts of its path as tell it from another module of the name
# (lib/model/langview.c).  512 modules of one name whose paths end in
# the same 100 parts: compared pairwise, a 2 MB file took 13.2G
# instructions (0.8 s); in the order of their tails, each beside the next,
# 0.45G.  Counted by callgrind, which counts the same from run to run.
"$H" pynames pyn.data 16 512 100
run pyn.data 64 "$CPPROF" -c 'threshold 0; function' pyn.data
is "$st/$(grep -c '^0\.[0-9]* x[0-9]*\.d\.d\.d\..*\.util\.f[0-9]* \[1\]$' out)" "0/8192" \
	"pynames: every function named after its module, whole paths needed"
if [ $san = 1 ]; then
	skip 1 "pynames: no callgrind under sanitizers"
elif ! command -v valgrind > /dev/null; then
	fail "pynames: valgrind missing (scripts/install-deps.sh installs it)"
else
	n=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null "$CPPROF" -c function pyn.data 2>&1 > /dev/null |
		sed -n 's/^==[0-9]*== Collected : \([0-9]*\)$/\1/p')
	per=$(( ${n:-0} / $(wc -c < pyn.data) ))
	ok "$([ "${n:-0}" -gt 0 ] && [ "$per" -le 400 ]; echo $?)" \
		"pynames: $per instructions a byte of the file (<= 400; pairwise: 6,400)"
fi
done_testing
