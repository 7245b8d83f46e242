# Hostile data files (tests/fuzz/hostile.c: valid checksums, harmful
# content) and paths that name something other than a regular file: a
# clear line and exit status 2, or a warning and an answer; never a crash,
# a read of freed memory (the sanitizer build runs this too) or a hang.
# Counters that add up past 2^64 and INFO numbers that are none (issue
# 22, item 6): refused in one line, never printed wrapped or as they are.
. "$(dirname "$0")/../lib.sh"
plan 43
CPPROF=$B/bin/cpprof
H=$B/tests/hostile
cd "$T" || exit 1
cc_prog "$T/fg" fg.c
cp "$T/fg" "$T/fg2"
mkfifo "$T/fifo"

# run ARGS...: the tool under a time limit (a hang fails, not waits);
# status in $st, stdout in $T/out, stderr in $T/err.
run() { timeout 60 "$@" > "$T/out" 2> "$T/err"; st=$?; }

"$H" dupmod dup.data "$T/fg"
run "$MPROF" dup.data
is "$st/$(wc -l < "$T/err")/$(wc -c < "$T/out")" "2/1/0" "one ELF listed twice: exit 2, one line"
like "$(cat "$T/err")" "^mprof: dup.data: corrupt modules section: modules 0 and 1 overlap$" "and it says so"
"$H" overlap over.data "$T/fg"
run "$MPROF" dump over.data
is "$st/$(cat "$T/err")" "2/mprof: over.data: corrupt modules section: modules 0 and 1 overlap" \
	"overlapping modules: dump says so too"

# Two files at one bias whose recorded ranges do not overlap: the files'
# own do.  Each file is opened apart, so libdw never drops one for the other.
"$H" samebias same.data "$T/fg" "$T/fg2"
run "$MPROF" same.data
is "$st" 0 "two files at one bias: read"
like "$(cat "$T/out")" "> _init$" "and symbolized from its file"
unlike "$(cat "$T/err")" "overlap|AddressSanitizer|runtime error" "without a complaint from libdw or a sanitizer"
run "$CPPROF" -c 'function; tree' same.data
is "$st" 0 "cpprof on it too"
# libdw's own reads are not instrumented by ASan: valgrind sees them.
case $B in
*-san) skip 1 "valgrind does not run sanitized programs" ;;
*)	valgrind -q --error-exitcode=9 "$MPROF" same.data > /dev/null 2> "$T/err"
	is "$?/$(grep -c 'Invalid read' "$T/err")" "0/0" "valgrind: no read of freed memory" ;;
esac

# Module paths that are no regular file: a warning, no hang.
for what in fifo dir dev; do
	case $what in fifo) p=$T/fifo ;; dir) p=$T ;; dev) p=/dev/zero ;; esac
	"$H" modpath "m$what.data" "$p"
	run "$MPROF" "m$what.data"
	is "$st/$(grep -c "cannot open $p: .*module+offset" "$T/err")" "0/1" "a module that is a $what: mprof warns, goes on"
	run "$CPPROF" -c function "m$what.data"
	is "$st/$(grep -c "cannot open $p: .*module+offset" "$T/err")" "0/1" "a module that is a $what: cpprof warns, goes on"
done

# The data file or the a.out named as a FIFO: refused at once.
run "$MPROF" "$T/fifo"
is "$st/$(cat "$T/err")" "2/mprof: $T/fifo: not a regular file" "mprof FIFO: not a regular file"
run "$MPROF" "$T/fifo" mfifo.data
is "$st/$(cat "$T/err")" "2/mprof: $T/fifo: not a regular file" "mprof FIFO data: the a.out is not a regular file"
run "$CPPROF" -c function "$T/fifo"
is "$st/$(cat "$T/err")" "2/cpprof: $T/fifo: not a regular file" "cpprof FIFO: not a regular file"
# Named without a slash, in the current directory: the same (it said "No
# such file or directory", searching PATH for it).
st=0; (cd "$T" && timeout 60 "$MPROF" fifo mfifo.data) > /dev/null 2> "$T/err" || st=$?
is "$st/$(cat "$T/err")" "2/mprof: fifo: not a regular file" "mprof FIFO by its bare name: not a regular file"

# No stacks, counters all zero, counters in another order: every view.
"$H" nostacks none.data
"$H" zeros zeros.data
"$H" reorder reorder.data
for f in none zeros reorder; do
	run "$CPPROF" -c 'function; body; tree; down main; up main' $f.data
	unlike "$(cat "$T/err")" "AddressSanitizer|runtime error" "$f: cpprof's views"
done
run "$MPROF" reorder.data
is "$st" 0 "reorder: mprof finds its counters by name"
# A stack sharing all the frames of one whose frame 0 is a pc (cpprof):
# there that frame is a return address, looked up at its address - 1.
# The views must give what the same stacks written out whole give.
sym() { nm "$H" | awk -v n="$1" '$3 == n { print "0x" $1 }'; }
g=$(sym put_module) mn=$(sym main) us=$(sym usage)
"$H" pcref pr.data "$H" "$g" $((mn + 8)) $((us + 4))
"$H" pcref prf.data "$H" "$g" $((mn + 8)) $((us + 4)) flat
# (function: sorted, as ties come in the order addresses were first met)
v() { "$CPPROF" -c 'threshold 0; tree; up usage' "$1" 2>&1; "$CPPROF" -c 'threshold 0; function' "$1" 2>&1 | sort; }
v pr.data > shared.out
v prf.data > flat.out
is "$(cmp -s shared.out flat.out && echo same)" same "a pc shared as a return address: the views of the stacks written whole"
like "$(cat shared.out)" '^  hostile\+0x[0-9a-f]+ \(0\.50000\) \[1\]$' \
	"and the shared pc is looked up as the return address it is there (not put_module)"

# Counters adding up past 2^64: three stacks (bins) of 2^62 + 2^61 each
# once printed a total of 2^61, less than any of its rows.  Refused whole.
"$H" bigsum bigsum.data
run "$MPROF" bigsum.data
is "$st/$(cat "$T/err")/$(wc -c < "$T/out")" \
	"2/mprof: bigsum.data: corrupt stacks section: its counters add up to 2^63 or more (at stack 1, counter bytes.x)/0" \
	"counters adding up past 2^64: mprof refuses the file in one line"
"$H" cpbigsum cpbigsum.data
run "$CPPROF" -c function cpbigsum.data
is "$st/$(cat "$T/err")" \
	"2/cpprof: cpbigsum.data: corrupt stacks section: its counters add up to 2^63 or more (at stack 1, counter cpu)" \
	"hits adding up past 2^64: cpprof refuses the file"
"$H" bigbins bigbins.data
run "$MPROF" bigbins.data
is "$st/$(cat "$T/err")" \
	"2/mprof: bigbins.data: corrupt bins section: its figures add up to 2^63 or more (at bin 32)" \
	"bins adding up past 2^64: refused"
# One such stack reads; two merged would not: merge refuses.
"$H" bigsum one.data 1
run "$MPROF" one.data
is "$st/$(head -1 "$T/out")" "0/mprof: bigsum (pid ?): 1 allocation of 6917529027641081856 bytes, 0 frees of 0 bytes, 6917529027641081856 bytes kept" \
	"one stack of 2^62 + 2^61 bytes reads"
run "$MPROF" merge one.data one.data -o two.data
is "$st/$(cat "$T/err")/$([ -e two.data ] && echo written)" \
	"2/mprof: merge: one.data: with the files before it, the counters add up to 2^63 or more: cannot be merged/" \
	"merge: two of them would add up past 2^63: refused, nothing written"

# INFO numbers that are no numbers, or out of their range.
for kv in "pid -5" "pid 12x" "pid 0" "pid 99999999" "start_ns 1e9" "end_ns 18446744073709551616" \
	"interval.cpu 0" "interval.cpu -1000000"; do
	set -- $kv
	"$H" info info.data $1 $2
	run "$CPPROF" -c function info.data
	like "$st/$(cat "$T/err")/$(wc -c < "$T/out")" \
		"^2/cpprof: info\.data: corrupt info section: $1 is '$2', not a number from [0-9]+ to [0-9]+/0\$" \
		"INFO $1 '$2': refused in one line, exit 2"
done
# An interval of 2^62 is one cpprof record takes; two hits of it pass
# 2^63 in an export (pprof's values are signed): refused there.
"$H" info iv.data interval.cpu 4611686018427387904
run "$CPPROF" -c function iv.data
is "$st" 0 "an interval of 2^62 gticks reads"
run "$CPPROF" export --format folded iv.data
is "$st/$(cat "$T/err")/$(wc -c < "$T/out")" \
	"2/cpprof: iv.data: counter cpu: 2 hits of 4611686018427387904 each add up to 2^63 or more/0" \
	"export: hits times the interval past 2^63: refused in one line"
# A program whose .rela.plt says it holds 2^52 entries: the symbolizer
# takes as many PLT stubs as the file can hold (it asked malloc for them
# all, and, refused, named no function at all; ASan aborted).
# (No DWARF: the names come from the symbol table alone.)
strip --strip-debug -o "$T/fgnd" "$T/fg" && "$MPROF" run -o plt.data "$T/fgnd" > /dev/null || exit 1
/usr/bin/python3 - "$T/fgnd" "$T/fgplt" <<'PY' || exit 1
import struct, sys
d = bytearray(open(sys.argv[1], 'rb').read())
shoff, = struct.unpack_from('<Q', d, 0x28)
shnum, shstrndx = struct.unpack_from('<HH', d, 0x3c)
stroff, = struct.unpack_from('<Q', d, shoff + shstrndx * 64 + 24)
for i in range(shnum):
    h = shoff + i * 64
    name, = struct.unpack_from('<I', d, h)
    if d[stroff + name:stroff + name + 10] == b'.rela.plt\0':
        struct.pack_into('<Q', d, h + 32, 0xffffffffff000)
        open(sys.argv[2], 'wb').write(d)
        sys.exit(0)
sys.exit('no .rela.plt in ' + sys.argv[1])
PY
run "$MPROF" -verbose "$T/fgplt" plt.data
is "$st" 0 "a .rela.plt of 2^52 entries: read"
like "$(cat "$T/out")" "^ *10 \\(50\\) .*main > H$" "and its functions named"
# A program cut short (its section headers past its end): said, as a
# build-id that differs is (every frame printed as fgnd+0x... silently).
size=$(wc -c < "$T/fgnd")
head -c 1000 "$T/fgnd" > "$T/fgcut"
run "$MPROF" "$T/fgcut" plt.data
is "$st/$(cat "$T/err")" \
	"0/mprof: warning: $T/fgcut is cut short (1000 bytes; its section headers end at $size): its addresses print as module+offset" \
	"an a.out cut short: one line, the tables"
like "$(cat "$T/out")" "fgnd\+0x" "... with module+offset names"
done_testing
