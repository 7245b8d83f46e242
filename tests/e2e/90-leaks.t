# Leaks that are leaks (issue 15, item 5): at exit the monitor releases
# libc's own buffers (__libc_freeres) and libstdc++'s (__gnu_cxx::__freeres)
# as valgrind does, so mprof's bytes kept equal memcheck's "in use at
# exit" (definitely + indirectly + possibly lost + still reachable)
# exactly; MPROF_FREERES=0 keeps them, and a thread alive at exit, or the
# monitor linked into the executable, makes the monitor leave them alone.
. "$(dirname "$0")/../lib.sh"
plan 18
cd "$T" || exit 1
cc_prog leaks leaks.c -pthread || exit 1
g++ -g -O0 -o leakscc "$TOP/tests/progs/leaks.cc" || exit 1
kept() { "$MPROF" "$@" | sed -n '1s/.* \([0-9]*\) bytes kept, .*/\1/p'; }
inuse() { valgrind "$@" 2>&1 > /dev/null | sed -n 's/.*in use at exit: \([0-9,]*\) bytes.*/\1/p' | tr -d ,; }

"$MPROF" run -o c.data ./leaks > out
is "$(cat out)/$(kept ./leaks c.data)" "hello/792" \
	"C: 100 + 4 x 48 + 500 kept, stdout's buffer released; the output is the program's"
is "$(kept ./leaks c.data)" "$(inuse ./leaks)" "C: mprof's bytes kept = memcheck's in use at exit"
leaktable() { "$MPROF" "$@" | awk '/^--------- / { on = /MEMORY LEAKS/ } on'; }
unlike "$(leaktable ./leaks c.data)" '_IO_file_doallocate' "C: stdio's buffer is in no leak chain"

"$MPROF" run -o x.data ./leakscc > out
is "$(cat out)" "hi a fairly long name that is not inline" "C++: the output is the program's"
is "$(kept ./leakscc x.data)" "$(inuse ./leakscc)" \
	"C++: mprof's bytes kept = memcheck's in use at exit (libstdc++'s pool released)"

MPROF_FREERES=0 "$MPROF" run -o k.data ./leaks > /dev/null
is "$(kept ./leaks k.data)" "$((792 + 4096))" "MPROF_FREERES=0: stdout's buffer stays kept"

"$MPROF" run -o t.data ./leaks thread > /dev/null
is "$(leaktable ./leaks t.data | awk '$NF == "_IO_file_doallocate" { print $1 } /allocate_dtv/ { print "dtv" }' | tr '\n' ' ')" \
	"4096 dtv " "a thread alive at exit: libc's buffers are left alone (stdout's, and the thread's dtv)"
# ... and the file and the table say so: xz -T2's 12,404 bytes of
# setlocale's were kept where memcheck had none, and nothing said why.
finfo() { "$MPROF" dump "$1" | awk '$1 == "info" && $2 == "freeres" { $1 = $2 = ""; sub(/^  /, ""); print }'; }
is "$(finfo c.data)/$(finfo t.data)/$(finfo k.data)" "done/skipped: another thread was alive/skipped: MPROF_FREERES=0" \
	"INFO freeres: done, or why not"
like "$(leaktable ./leaks t.data)" "\(libc's own buffers were not released at exit \(another thread was alive\): what they hold is kept here, where memcheck releases them\)" \
	"... and the leak table says why libc's buffers are kept"
unlike "$(leaktable ./leaks c.data)" "libc's own buffers" "released: no word of it"

# A library's destructor frees what its constructor allocated: the
# loader runs it after the preloaded monitor's destructor, and its 100
# frees were not in the profile (100,000 bytes kept; memcheck: none in
# use).  The monitor's work at exit is an exit handler now, after every
# destructor.
cc -g -O2 -shared -fPIC -o "$T/libdtor.so" "$TOP/tests/progs/leak_dtorlib.c" || exit 1
printf '#include <stdio.h>\nint dtorlib_count(void);\nint main(void) { printf("%%d\\n", dtorlib_count()); return 0; }\n' > dtormain.c
cc -g -O0 -o dtor dtormain.c -L"$T" -ldtor -Wl,-rpath,"$T" || exit 1
out=$("$MPROF" run -o d.data ./dtor)
"$MPROF" dump d.data | awk '$1 == "stack" { for (k = 4; k <= 7; k++) a += $k; for (k = 12; k <= 15; k++) f += $k }
	END { print a, f }' > d.counts
is "$out/$(kept ./dtor d.data)" "100/0" "a library's destructor frees its constructor's objects: nothing kept"
is "$(awk '{ print $1 - $2 }' d.counts)" 0 "... every allocation freed ($(cat d.counts): allocations, frees)"

# A library's constructor registers 100 exit functions: glibc's blocks
# for them (calloc, 1,040 bytes each) are freed after the loader's
# _dl_fini, registered after them, has run the destructors, and so after
# the monitor's save.  Three were kept, 3,120 bytes, where memcheck has
# none (C++ libraries' static objects: ffmpeg kept 12).  The monitor
# records them freed at its save (exitlist.c), but not an object an exit
# function allocated where one of main's blocks, freed before, was.
cc -g -O2 -shared -fPIC -o "$T/libexit.so" "$TOP/tests/progs/leak_exitlib.c" || exit 1
cc -g -O0 -o exitm "$TOP/tests/progs/leak_exitmain.c" -L"$T" -lexit -Wl,-rpath,"$T" || exit 1
out=$("$MPROF" run -o e.data ./exitm)
is "$out/$(kept ./exitm e.data)/$(inuse ./exitm)" "0/1540/1540" \
	"exit functions a library registered: their blocks freed, as memcheck has them; main's 500 and an exit function's 1,040 kept"
is "$("$MPROF" dump e.data | awk '$1 == "bin" && $2 == 1025 { print $3 "/" $4 "/" $6 }')" 7/6/9296 \
	"... over 1 KiB: stdout's buffer (4,096) and the 5 blocks (1,040) freed, the late object (1,040) not"
# An exit function's argument that only its block points to (on_exit's):
# the blocks recorded freed are still the leak scan's roots.  It was
# definitely lost, where memcheck has it freed (by the function, after
# the save): reachable now.
EXITLIB_ONEXIT=1 "$MPROF" run --leaks -o eo.data ./exitm > /dev/null
is "$("$MPROF" export --format folded --counter lost_space eo.data)/$("$MPROF" export --format folded --counter reachable_space eo.data | awk '$NF == 100 { n++ } END { print n + 0 }')" "/1" \
	"on_exit's argument, reached only through its block: not lost, reachable"

cc -g -O0 -o leaks-a "$TOP/tests/progs/leaks.c" "$LIBMPROF/libmprof.a" -pthread || exit 1
./leaks-a > /dev/null
is "$(kept ./leaks-a mprof.data)" "$((792 + 4096))" "linked static: libc's buffers are left alone"
is "$(finfo mprof.data)" "skipped: the monitor is linked into the executable" "... INFO freeres says why"

cc -g -O0 -o leaks-so "$TOP/tests/progs/leaks.c" -L"$LIBMPROF" -lmprof -Wl,-rpath,"$LIBMPROF" -pthread || exit 1
MPROF_OUT=$T/s.data ./leaks-so > /dev/null
is "$(kept ./leaks-so s.data)" 792 "linked shared: released, as preloaded"
done_testing
