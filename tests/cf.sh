# tests/cf.sh - helpers of the cfprof end-to-end tests (tests/e2e/7*-cf-*.t),
# sourced after lib.sh: building test programs as users build them, and
# reading cfprof's flat profile and call graph as text.

# cf_build OUT SRC [FLAGS...]: a test program as users build one.
cf_build() {
	c_o=$1 c_s=$2; shift 2
	case $c_s in *.cc) c_c=${CXX:-g++} ;; *) c_c=${CC:-cc} ;; esac
	$c_c -O2 -g -finstrument-functions -o "$T/$c_o" "$TOP/tests/progs/$c_s" "$@"
}
# truth FILE NAME: the program's own figure NAME from its output.
truth() { awk -v k="$2" '$1 == k { print $2 }' "$1"; }
# Names are compared without a C++ parameter list: thrower(int) is thrower.
CF_AWK='function base(s,  i) { i = index(s, "("); return i > 1 ? substr(s, 1, i - 1) : s }'
# flat TEXT NAME FIELD: a field of NAME's line of the flat profile.
flat() { printf '%s\n' "$1" | awk -v n="$2" -v f="$3" "$CF_AWK"' base($NF) == n { print $f; exit }'; }
# graph TEXT FN WHICH: in FN's block of the call graph, "called name" of
# each caller (WHICH=callers), of each callee (callees), the called field
# of the primary line (primary), or "name self children" of each caller
# (times).
graph() {
	printf '%s\n' "$1" | awk -v fn="$2" -v which="$3" "$CF_AWK"'
	function flush(  i, p) {
		for (i = 1; i <= n; i++) if (pri[i]) { p = i; break }
		if (p && nm[p] == fn)
			for (i = 1; i <= n; i++)
				if (which == "primary" ? i == p : which == "callees" ? i > p : i < p)
					print which == "primary" ? cl[i] : which == "times" ? nm[i] " " se[i] " " ch[i] : cl[i] " " nm[i]
		n = 0
	}
	/^ *-+ *$/ { flush(); next }
	NF < 2 || $1 == "index" { next }
	{
		n++; pri[n] = $1 ~ /^\[[0-9]+\]$/; se[n] = $1; ch[n] = $2
		if ($NF ~ /^\[[0-9]+\]$/) { nm[n] = base($(NF - 1)); cl[n] = $(NF - 2) }
		else { nm[n] = base($NF); cl[n] = $(NF - 1) }
	}
	END { flush() }'
}

# near GOT WANT TOL: |GOT - WANT| < TOL, GOT missing is a failure.
near() { awk -v a="${1:-x}" -v b="$2" -v t="$3" 'BEGIN { if (a !~ /^[0-9.]+$/) exit 1; d = a - b; exit !(d < t && d > -t) }'; }
# share FLAT NAME: NAME's %time as a fraction (0.523 for 52.3).
share() { flat "$1" "$2" 1 | awk '{ printf "%.4f\n", $1 / 100 }'; }

# record NAME PROG [ARGS...]: bare run, then under cfprof record (NAME.data);
# checks that stdout and exit status are the bare run's (one assertion).
record() {
	c_n=$1; shift
	"$@" > "$c_n.bare" 2> "$c_n.bare.err"
	c_bst=$?
	"$CFPROF" record -o "$c_n.data" "$@" > "$c_n.out" 2> "$c_n.err"
	c_st=$?
	is "$c_st/$(cat "$c_n.out")" "$c_bst/$(cat "$c_n.bare")" "$c_n: stdout and exit status ($c_bst) as in a bare run"
}
