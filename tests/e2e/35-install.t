# make install PREFIX=DIR: the installed mprof finds its monitor, the header
# and man page are in place, and linking against the installed library works.
. "$(dirname "$0")/../lib.sh"
plan 8
make -s -C "$TOP" install PREFIX="$T/inst" B="$B" >/dev/null 2>&1; ok $? "make install"
for f in bin/mprof lib/libmprof.so lib/libmprof.a include/mprof.h share/man/man1/mprof.1 \
	bin/cpprof lib/libcpprof.so share/man/man1/cpprof.1 bin/cfprof lib/libcfprof.so share/man/man1/cfprof.1; do
	[ -f "$T/inst/$f" ] || missing="${missing:-} $f"
done
is "${missing:-}" "" "every file installed"
cc_prog "$T/fg" fg.c
(cd "$T" && "$T/inst/bin/mprof" run ./fg); ok $? "installed mprof run finds its monitor"
out=$("$T/inst/bin/mprof" "$T/mprof.data")
like "$out" 'G <cycle 1>' "installed mprof prints the tables"
cat > "$T/api.c" <<'EOC'
#include <mprof.h>
#include <stdlib.h>
int main(void) { void *p = malloc(5); mprof_stop(); free(p); return 0; }
EOC
cc -o "$T/api" "$T/api.c" -I"$T/inst/include" -L"$T/inst/lib" -lmprof -Wl,-rpath,"$T/inst/lib"; ok $? "a program using <mprof.h> links against the installed library"
like "$(man -l "$T/inst/share/man/man1/mprof.1" 2>/dev/null | col -b)" 'mprof_restart' "man page reads"
cc -O2 -finstrument-functions -o "$T/fgi" "$TOP/tests/progs/fg.c"
(cd "$T" && "$T/inst/bin/cfprof" record ./fgi); ok $? "installed cfprof record finds its library"
like "$("$T/inst/bin/cfprof" -p "$T/fgi" "$T/cfprof.data")" ' 1 +[0-9.e-]+ +H$' "installed cfprof prints the flat profile (H called once)"
done_testing
