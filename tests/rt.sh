# tests/rt.sh - helpers for the runtime's end-to-end tests (tests/e2e/1x-*.t),
# sourced after lib.sh.  Every runtime test runs its program three ways:
#   preload  LD_PRELOAD=libmprof.so ./prog
#   so       linked with -lmprof (shared, found through the rpath)
#   a        linked with libmprof.a at the end of the link line
RT_MODES="preload so a"

# rt_build NAME SRC: $T/NAME, $T/NAME-so and $T/NAME-a from tests/progs/SRC.
rt_build() {
	cc_prog "$T/$1" "$2" &&
	cc_prog "$T/$1-so" "$2" -L"$LIBMPROF" -lmprof -Wl,-rpath,"$LIBMPROF" &&
	cc_prog "$T/$1-a" "$2" "$LIBMPROF/libmprof.a"
}

# rt_run MODE NAME [ARGS...]: run the MODE build of NAME (in the current
# directory; MPROF_OUT and the rest come from the environment).
rt_run() {
	_m=$1 _p=$2; shift 2
	case $_m in
	preload) LD_PRELOAD="$LIBMPROF/libmprof.so" "$T/$_p" "$@" ;;
	so) "$T/$_p-so" "$@" ;;
	a) "$T/$_p-a" "$@" ;;
	esac
}

# rt_cmd MODE NAME: the same as a command line (for exec; paths without spaces).
rt_cmd() {
	case $1 in
	preload) echo "env LD_PRELOAD=$LIBMPROF/libmprof.so $T/$2" ;;
	so) echo "$T/$2-so" ;;
	a) echo "$T/$2-a" ;;
	esac
}

# rt_bins FILE: the bin lines of a data file, "SIZE ALLOCS FREES BYTES FREED".
rt_bins() { "$MPROF" dump "$1" | awk '$1 == "bin" { $1 = ""; sub(/^ /, ""); print }'; }
# rt_bin FILE SIZE: one bin's line, or nothing.
rt_bin() { rt_bins "$1" | awk -v s="$2" '$1 == s'; }
# rt_totals FILE: "allocs frees bytes bytes_freed unknown_frees dropped".
rt_totals() {
	"$MPROF" dump "$1" | awk '$1 == "info" { v[$2] = $3 }
		END { print v["allocs"], v["frees"], v["bytes"], v["bytes_freed"], v["unknown_frees"], v["dropped"] }'
}
# rt_sums FILE: the stack counters summed by kind: "allocs bytes frees freed".
rt_sums() {
	"$MPROF" dump "$1" | awk '$1 == "stack" { for (c = 0; c < 16; c++) s[int(c / 4)] += $(4 + c) }
		END { printf "%.0f %.0f %.0f %.0f\n", s[0], s[1], s[2], s[3] }'
}
