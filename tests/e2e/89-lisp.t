# mprof's Lisp port (issue 15, item 1; the mprof paper, "Lisp
# Implementation"): a program run by ECL is profiled as a Lisp one, its
# objects by type, cons (c), floating point (f), structure or vector (s),
# other (o), under the Lisp functions that made them, interpreted and
# compiled alike; no leak table.  tests/progs/lisp_alloc.lisp makes 1000
# structures in make-point (called by make-points), 2000 double-floats in
# sum-floats and 5000 conses in build-list.
#
# Exact: compiled, every function's objects of each type and their bytes
# (ECL 21, x86-64: a cons and a double-float 16 bytes, a structure of two
# slots 80: its header and its slot vector, one object).  Interpreted, the
# f, s and o columns are exact too; the c column adds the conses ECL's
# bytecode interpreter makes for a function's lexical environment, 2 per
# variable or block it binds per call: the bound checked is 2 * 2 per call
# for make-point (x, y), 2 * 4 for the others (n, v or l, i, dotimes's
# block) over the program's own.  ECL's own objects (its boot, reading and
# compiling the forms) are other rows: only the program's are checked.
. "$(dirname "$0")/../lib.sh"
plan 31
cd "$T" || exit 1

if ! command -v ecl > /dev/null 2>&1; then
	diag "ecl is not installed: scripts/install-deps.sh installs it (Debian's package ecl)"
	i=0
	while [ $i -lt 31 ]; do
		fail "ecl is needed (scripts/install-deps.sh)"
		i=$((i + 1))
	done
	done_testing
fi

cp "$TOP/tests/progs/lisp_alloc.lisp" prog.lisp
ecl --norc -eval "(progn (compile-file \"prog.lisp\" :output-file \"$T/prog.fas\") (ext:quit 0))" \
	> compile.out 2>&1
[ -f prog.fas ] || { diag "compile-file failed:" "$(tail -5 compile.out)"; }

# row DATA FN: "bytes objects c f s o" of FN's line in the direct
# allocation table (nothing if it has none).
row() {
	"$MPROF" "$1" | awk -v f="$2" '/^--------- DIRECT/ { d = 1 } /^--------- ALLOCATION CALL/ { d = 0 }
		d && $NF == f { print $2, $(NF - 5), $(NF - 4), $(NF - 3), $(NF - 2), $(NF - 1) }'
}
# infov DATA KEY: an INFO value, spaces and all.
infov() { "$MPROF" dump "$1" | awk -v k="$2" '$1 == "info" && $2 == k { sub(/^info [^ ]+ /, ""); print }'; }
# within N LO HI: a number between LO and HI.
within() { [ "$1" -ge "$2" ] && [ "$1" -le "$3" ]; }
# after DATA ERE: the line after table 4's entry line that matches ERE.
after() { "$MPROF" "$1" | awk -v re="$2" 'n { print; exit } $0 ~ re && /^\[/ { n = 1 }'; }

for mode in interpreted compiled; do
	if [ $mode = interpreted ]; then src=prog.lisp d=i; else src=prog.fas d=c; fi
	ecl --norc --shell $src > $d.bare.out 2> $d.bare.err
	bst=$?
	"$MPROF" run -o $d.data -- ecl --norc --shell $src > $d.out 2> $d.err
	is "$?/$(cat $d.out)" "$bst/999 3000.0d0 5000" "$mode: exit status 3 and the output, as bare"
	is "$(cat $d.err)" "$(cat $d.bare.err)" "$mode: stderr as bare"
	is "$(infov $d.data classes)/$(info $d.data lisp.names)/$(info $d.data lisp.unmatched)/$(info $d.data frees)" \
		"c f s o/ihs/0/0" "$mode: a Lisp profile (INFO classes), names from ECL's history, no frees"
	t=$("$MPROF" $d.data)
	like "$t" '^mprof: ecl --norc --shell .* \(pid [0-9]+\): [0-9]+ Lisp objects of [0-9]+ bytes \(garbage collected: no frees\)$' \
		"$mode: the header counts Lisp objects, no frees"
	like "$t" 'none in a Lisp profile: the garbage collector frees objects' "$mode: no leak table, a note"
	like "$t" '^  % mem        bytes  % mem\(type\) ' "$mode: table 3 breaks memory down by type"
	like "$t" '^ +c  f  s  o   c  f  s  o *$' "$mode: table 4's class columns are c f s o"
	unlike "$t" 'kept|ecl_interpret|ecl_cons|si_make_structure|cl_boot|main' \
		"$mode: no kept bytes, no C frame of ECL"
done

# Compiled: exact, per function.
is "$(row c.data make-point)" "80000 1000 0 0 1000 0" "compiled: make-point made 1000 structures (s), 80000 bytes"
is "$(row c.data sum-floats)" "32000 2000 0 2000 0 0" "compiled: sum-floats made 2000 floats (f), 32000 bytes"
is "$(row c.data build-list)" "80000 5000 5000 0 0 0" "compiled: build-list made 5000 conses (c), 80000 bytes"
is "$(row c.data make-points)" "" "compiled: make-points made nothing itself"
like "$(after c.data ' make-points \[[0-9]+\]$')" '^ +80000 \(\*\*\) .* 1000/1000 +make-point \[[0-9]+\]$' \
	"compiled: table 4, make-points calls make-point, its 1000 structures below it"
like "$("$MPROF" export --format folded c.data)" '^\(top-level\);make-points;make-point 80000$' \
	"compiled: the chain names Lisp functions (folded export)"

# Interpreted: f, s, o exact; c within the interpreter's bound.
set -- $(row i.data make-point)
is "$4 $5 $6" "0 1000 0" "interpreted: make-point made 1000 structures, no float, no other"
within "$3" 0 4000; ok $? "interpreted: make-point's conses ($3) are its environment's, at most 4 a call"
set -- $(row i.data sum-floats)
is "$4 $5 $6" "2000 0 0" "interpreted: sum-floats made 2000 floats"
within "$3" 0 8; ok $? "interpreted: sum-floats's conses ($3) are its environment's, at most 8"
set -- $(row i.data build-list)
is "$4 $5 $6" "0 0 0" "interpreted: build-list made conses only"
within "$3" 5000 5008; ok $? "interpreted: build-list made 5000 conses, and its environment's ($3 in all)"
set -- $(row i.data make-points) 0 0 0 0 0 0
is "$4 $5 $6" "0 0 0" "interpreted: make-points made no structure itself"
like "$(after i.data ' make-points \[[0-9]+\]$')" ' [0-9]+/[0-9]+ +make-point \[[0-9]+\]$' \
	"interpreted: table 4, make-points calls make-point"
like "$("$MPROF" export --format folded i.data)" '^\(top-level\);make-points;make-point [0-9]+$' \
	"interpreted: the chain names Lisp functions (folded export)"

done_testing
