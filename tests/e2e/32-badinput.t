# Bad input: every broken data file gets one line naming the file and the
# problem, exit status 2, and no partial report; bad options likewise.
. "$(dirname "$0")/../lib.sh"
plan 35
cc_prog "$T/fg" fg.c
"$MPROF" run -o "$T/good.data" "$T/fg"
size=$(wc -c < "$T/good.data")

# expect_bad NAME PATTERN ARGS...: exit 2, empty stdout, one stderr line.
expect_bad() {
	name=$1 pat=$2; shift 2
	"$MPROF" "$@" >"$T/out" 2>"$T/err"; st=$?
	is "$st" 2 "$name: exit status 2"
	lines=$(wc -l < "$T/err"); out=$(wc -c < "$T/out")
	is "$lines/$out" "1/0" "$name: one line on stderr, nothing on stdout"
	like "$(cat "$T/err")" "$pat" "$name: says what is wrong"
}

head -c $((size / 2)) "$T/good.data" > "$T/trunc.data"
expect_bad truncated "^mprof: $T/trunc.data: truncated" "$T/trunc.data"
: > "$T/empty.data"
expect_bad empty "^mprof: $T/empty.data: empty file" "$T/empty.data"
head -c 5000 /dev/urandom > "$T/garbage.data"
expect_bad garbage "^mprof: $T/garbage.data: not a profile data file" "$T/fg" "$T/garbage.data"
cp "$T/good.data" "$T/version.data"; printf '\007' | dd of="$T/version.data" bs=1 seek=8 conv=notrunc 2>/dev/null
expect_bad "other version" "format version 7, this tool reads versions 1 to 2" "$T/version.data"
cp "$T/good.data" "$T/kind.data"; printf '\002' | dd of="$T/kind.data" bs=1 seek=12 conv=notrunc 2>/dev/null
expect_bad "cpprof data" "not mprof allocation data [(]a cpprof sample profile[)]: read it with cpprof\$" "$T/kind.data"
cc -O2 -finstrument-functions -o "$T/fgcf" "$TOP/tests/progs/fg.c" &&
	"$B/bin/cfprof" record -o "$T/cf.data" "$T/fgcf" > /dev/null || exit 1
expect_bad "cfprof data" "not mprof allocation data [(]a cfprof call profile[)]: read it with cfprof\$" "$T/cf.data"
cp "$T/good.data" "$T/flip.data"; printf 'X' | dd of="$T/flip.data" bs=1 seek=$((size - 20)) conv=notrunc 2>/dev/null
expect_bad "flipped byte" "fails its checksum" "$T/flip.data"
expect_bad missing "No such file" "$T/nope.data"
expect_bad "a directory" "is a directory" "$T/fg" "$T"
expect_bad "unknown option" "unknown option '-bogus'" -bogus "$T/good.data"
expect_bad "dump of a bad file" "truncated" dump "$T/trunc.data"

"$MPROF" --help > "$T/help"; ok $? "--help exits 0"
like "$(cat "$T/help")" "noleaktable" "--help lists the options"
done_testing
