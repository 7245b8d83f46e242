# bench/floor's layers (bench/layers/*.diff): each diff applies to this
# tree, the runtime it makes builds, leaves the program's output and exit
# status alone, and does what bench/floor says it does: peak-off counts
# every event but keeps no peak while the program runs; identity finds every allocation's stack
# and counts nothing; addrmap and interpose record no stack and count
# nothing.  A layer that rotted (stopped applying, or began to count)
# would make bench/floor's table say something untrue.
. "$(dirname "$0")/../lib.sh"
plan 26
command -v git > /dev/null || { absent 26 "git (scripts/install-deps.sh installs it)"; done_testing; }
cc_prog "$T/peak" peak.c -pthread || exit 1
want_out=$("$T/peak")
want_rc=$?
# The tree's tracked files, as they are, in $T/src (as bench/floor copies them).
mkdir "$T/src" && (cd "$TOP" && git ls-files -z | xargs -0 cp --parents -t "$T/src" 2> /dev/null)
test -f "$T/src/Makefile"
ok $? "the tree's tracked files are copied"
# stacks FILE: stacks with frames in the file.
stacks() { "$MPROF" dump "$1" | awk '$1 == "stack"' | wc -l | tr -d ' '; }
# peaksum FILE: the peak_bytes column over all stacks.
peaksum() {
	"$MPROF" dump "$1" | awk '$1 == "counter" { n++; if ($2 == "peak_bytes") c = n }
		$1 == "stack" && c { s += $(3 + c) } END { printf "%d\n", s }'
}
for layer in peak-off identity addrmap interpose; do
	d=$T/$layer
	cp -a "$T/src" "$d"
	(cd "$d" && git apply "$TOP/bench/layers/$layer.diff")
	ok $? "$layer: bench/layers/$layer.diff applies"
	# A make of its own: not make check's (MAKEFLAGS may carry SANITIZE,
	# which moves the build to build-san, and a jobserver).
	(cd "$d" && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u SANITIZE \
		make -s build/lib/libmprof.so > /dev/null 2>&1)
	ok $? "$layer: its runtime builds"
	out=$(MPROF_OUT="$T/$layer.data" LD_PRELOAD="$d/build/lib/libmprof.so" "$T/peak")
	rc=$?
	is "$rc/$out" "$want_rc/$want_out" "$layer: the program's output and exit status are its own"
	test -s "$T/$layer.data"
	ok $? "$layer: a profile is saved"
	case $layer in
	peak-off)
		is "$(info "$T/$layer.data" allocs)/$(info "$T/$layer.data" frees)" 104/103 \
			"peak-off: every allocation and free is counted"
		is "$(peaksum "$T/$layer.data")" 777 \
			"peak-off: no peak is kept while it runs (the saver's is the 777 bytes kept at exit)"
		;;
	identity)
		is "$(info "$T/$layer.data" allocs)" 0 "identity: nothing is counted"
		test "$(stacks "$T/$layer.data")" -ge 3
		ok $? "identity: the stacks are found (at least 3)"
		;;
	*)
		is "$(info "$T/$layer.data" allocs)" 0 "$layer: nothing is counted"
		is "$(stacks "$T/$layer.data")" 0 "$layer: no stack is found"
		;;
	esac
done
# The full runtime (this tree's build) on the same program, for contrast.
MPROF_OUT="$T/full.data" LD_PRELOAD="$LIBMPROF/libmprof.so" "$T/peak" > /dev/null
is "$(info "$T/full.data" allocs)/$(peaksum "$T/full.data")" 104/150777 \
	"full: counted, with the peak (150777 bytes)"
done_testing
