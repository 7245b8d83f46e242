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
plan 45
cd "$T" || exit 1

if ! command -v ecl > /dev/null 2>&1; then
	absent 45 "ecl (scripts/install-deps.sh installs Debian's package ecl)"
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
# after DATA ERE: the line after table 4's entry line that matches ERE
# (from the environment: awk -v would take its backslashes as escapes).
after() { "$MPROF" "$1" | RE="$2" awk 'n { print; exit } $0 ~ ENVIRON["RE"] && /^\[/ { n = 1 }'; }

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

# Out of the terminal (issue 22, item 5): the pprof export names the Lisp
# functions, with the figures of the tables, whichever command writes it
# (the real pprof reads it: make check builds it); a failed export leaves
# the output as it was.  Two runs' Lisp functions are numbered each by
# its own run (make-point is 3 compiled, 4 interpreted): a merge and a
# diff name each run's frames by that run's names.
PPROF=$B/tools/pprof
[ -x "$PPROF" ] || diag "no $PPROF: make check builds it (make $PPROF)"
# top PB INDEX FN: FN's flat figure in pprof -top (bytes or objects).
top() {
	"$PPROF" -top -sample_index="$2" -unit=B -nodefraction=0 "$1" 2> /dev/null |
		awk -v f="$3" '$NF == f { sub(/B$/, "", $1); print $1 }'
}
for tool in mprof cpprof cfprof; do
	rm -f $tool.pb
	"$B/bin/$tool" export --format pprof -o $tool.pb c.data 2> $tool.pb.err
	is "$?/$(cat $tool.pb.err)" "0/" "compiled: $tool export --format pprof, exit 0"
done
is "$(top mprof.pb alloc_space make-point) $(top mprof.pb alloc_objects make-point) $(top mprof.pb alloc_space build-list) $(top mprof.pb alloc_space sum-floats)" \
	"80000 1000 80000 32000" "compiled: pprof -top: make-point 80000 bytes in 1000 objects, build-list 80000, sum-floats 32000"
is "$(top cpprof.pb inuse_space make-point)/$(top cfprof.pb alloc_space build-list)" "80000/80000" \
	"compiled: the same figures in what cpprof and cfprof export"
"$MPROF" export --format pprof -o i.pb i.data
set -- $(row i.data make-point)
is "$(top i.pb alloc_space make-point)" "$1" "interpreted: pprof -top gives make-point the bytes of the direct table ($1)"

# A failed write (a file size limit, SIGXFSZ ignored) leaves OUT as it was.
echo before > kept.html
(trap '' XFSZ; ulimit -f 1; exec "$MPROF" export --format html -o kept.html c.data) 2> kept.err
is "$?/$(cat kept.html)/$(ls | grep -c 'kept\.html\.')" "2/before/0" \
	"a failed export: exit 2, the old file untouched, no temporary left"
like "$(cat kept.err)" '^mprof: export: write error on kept.html: ' "a failed export: one line says why"

# Merged: each file's functions by their names.  first.lisp calls
# build-list first, so its run numbers it 3, where prog.lisp's numbers
# make-points 3 (its interpreted functions are pseudo-frames, named by
# number; the compiled ones are C frames, by address).
awk '/^\(defvar \*points\*/ { print "(build-list 10)" } { print }' prog.lisp > first.lisp
"$MPROF" run -o f.data -- ecl --norc --shell first.lisp > /dev/null 2>&1
"$MPROF" merge i.data f.data c.data -o all.data
ok $? "merge: two interpreted runs, numbered each its own way, and a compiled one"
# bytes DATA...: make-point's, make-points', sum-floats' and build-list's
# bytes, summed over the files.
bytes() {
	for fn in make-point make-points sum-floats build-list; do
		for f in "$@"; do row $f $fn | cut -d' ' -f1; done | awk '{ s += $1 } END { printf "%d ", s }'
	done
}
is "$(bytes all.data)" "$(bytes i.data f.data c.data)" \
	"merge: each Lisp function's bytes are those of the three runs (make-point make-points sum-floats build-list)"

# Diffs: pprof's of the compiled run over the interpreted one, and the
# call path fractions from the top-level forms (no main in Lisp).
"$MPROF" export --format pprof --diff-base i.data -o d.pb c.data
set -- $(row i.data make-point)
is "$(top d.pb alloc_space make-point)" "$((80000 - $1))" "export --diff-base: make-point's change is 80000 - $1"
like "$("$B/bin/cpprof" diff --threshold 0 i.data c.data)" '^[0-9.]+ [0-9.]+ [-+][0-9.]+ \(\(top-level\) make-points make-point\)$' \
	"cpprof diff: paths down from (top-level) by default"
like "$("$B/bin/cpprof" -c 'threshold 0; down' c.data)" '^[0-9.]+ \(\(top-level\) make-points make-point\) \[80000\]$' \
	"cpprof: the down profile's root is (top-level)"

# cpprof record has no Lisp port: ECL's C frames, exported all the same.
"$B/bin/cpprof" record -o cp.data -- ecl --norc --shell prog.fas > /dev/null 2>&1
"$B/bin/cpprof" export --format pprof -o cp.pb cp.data
like "$("$PPROF" -top -nodefraction=0 cp.pb 2> /dev/null)" ' cl_boot$' "cpprof record: its export names ECL's C functions (cl_boot)"

done_testing
