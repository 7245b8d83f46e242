# cfprof record and dlclose: two instrumented libraries dlopen'd and
# dlclose'd one after the other, usually at the same address: the file
# must still be readable (no overlapping modules), and its functions
# named.  (Two libraries at one address share their nodes: the names are
# the first library's.)
. "$(dirname "$0")/../lib.sh"
plan 3
CFPROF=$B/bin/cfprof
cd "$T" || exit 1
. "$TOP/tests/cf.sh"

for p in 1 2; do
	${CC:-cc} -O2 -g -fPIC -shared -finstrument-functions -DPLUG=$p -o cf_plug$p.so \
		"$TOP/tests/progs/cf_plug.c" || exit 1
done
cf_build cf_plugins cf_plugins.c -ldl || exit 1
record pl ./cf_plugins
note "same address: $(truth pl.bare.err same_address)"
flat=$("$CFPROF" -p ./cf_plugins pl.data 2>pl.show.err)
is "$?/$(cat pl.show.err)" "0/" "plugins: cfprof reads the file"
like "$flat" ' plug1_inner$' "plugins: the library's functions named"
done_testing
