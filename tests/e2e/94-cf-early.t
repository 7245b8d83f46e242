# cfprof counts from the first hook (issue 22, item 7): a library built
# with -finstrument-functions whose constructor calls its functions
# (tests/progs/cf_ctorlib.c), which the loader runs before libcfprof's
# own constructor, as jq's libjq runs jv_mem_uninit_setup.  Every call
# is counted, the constructor's too, with libcfprof preloaded by cfprof
# record (with one resource and with two: a node's room for hits is
# fixed at that first hook) and linked (-lcfprof before the library).
. "$(dirname "$0")/../lib.sh"
plan 9
CFPROF=$B/bin/cfprof
cd "$T" || exit 1
. "$TOP/tests/cf.sh"

${CC:-cc} -O2 -g -fPIC -shared -finstrument-functions -o libcf_ctorlib.so \
	"$TOP/tests/progs/cf_ctorlib.c" || exit 1
cf_build cf_ctor cf_ctor.c -L. -lcf_ctorlib -Wl,-rpath,"$T" || exit 1
# Linked after libcfprof, whose constructor then runs after its own.
cf_build cf_ctor_linked cf_ctor.c -L"$B/lib" -lcfprof -L. -lcf_ctorlib -Wl,-rpath,"$T:$B/lib" || exit 1

# The premise: the loader runs the library's constructor first, both
# ways.
# inits CMD...: the libraries of interest in the order their
# constructors run.
inits() {
	rm -f ld.*
	LD_DEBUG=files LD_DEBUG_OUTPUT="$T/ld" "$@" > /dev/null 2>&1
	cat ld.* | awk '/calling init: .*(libcf_ctorlib|libcfprof)\.so/ { sub(/.*\//, ""); printf "%s ", $0 }'
}
is "$(inits "$CFPROF" record -o order.data ./cf_ctor)/$(inits env CFPROF_OUT="$T/order.data" ./cf_ctor_linked)" \
	"libcf_ctorlib.so libcfprof.so /libcf_ctorlib.so libcfprof.so " \
	"the loader runs cf_ctorlib's constructor before libcfprof's (preloaded/linked)"

# calls TEXT: "ctor_init ctor_walk ctor_leaf main" call counts.
calls() { echo "$(flat "$1" ctor_init 3) $(flat "$1" ctor_walk 3) $(flat "$1" ctor_leaf 3) $(flat "$1" main 3)"; }

record pre ./cf_ctor
is "$(cat pre.bare)" "$(printf 'ctor_walk 2\nctor_leaf 8')" "the program counts 2 walks and 8 leaves, the constructor's 1 and 5 among them"
flat=$("$CFPROF" -p ./cf_ctor pre.data)
is "$(calls "$flat")" "1 2 8 1" "preloaded: every call counted, the constructor's too (ctor_init ctor_walk ctor_leaf main)"
g=$("$CFPROF" -q ./cf_ctor pre.data)
is "$(graph "$g" ctor_walk callers | sort | tr '\n' ' ')" "1/2 ctor_init 1/2 main " \
	"preloaded: ctor_walk's callers, the constructor and main, once each"

"$CFPROF" record -e cpu -e real -o two.data ./cf_ctor > two.out 2> two.err
flat=$("$CFPROF" -p ./cf_ctor two.data 2> two.show.err)
is "$(calls "$flat")/$(cat two.err two.show.err)" "1 2 8 1/" "two resources: the same counts, the file reads"
is "$("$MPROF" dump two.data | awk '$1 == "counter" { printf "%s ", $2 }')" "calls cpu real " \
	"two resources: the file's counters are calls, cpu and real"

./cf_ctor_linked > linked.bare
CFPROF_OUT=$T/linked.data ./cf_ctor_linked > linked.out 2> linked.err
is "$?/$(cat linked.out)/$(cat linked.err)" "0/$(cat linked.bare)/" "linked with -lcfprof: the program's output, nothing on stderr"
flat=$("$CFPROF" -p ./cf_ctor_linked linked.data)
is "$(calls "$flat")" "1 2 8 1" "linked with -lcfprof: every call counted"
done_testing
