# The profiler toolkit: one readable GNU Makefile.
#
#   make                      build everything into build/
#   make demo                 install missing packages, build, profile the example
#   make check                install missing packages, build, run every test
#   make install PREFIX=DIR   install (default PREFIX=/usr/local)
#   make SANITIZE=address,undefined check   tools and tests under sanitizers
#   make bench                install missing packages, build, run bench/run
#                             (BENCH_ARGS=--quick for a smoke run)
#
# Layout: runtime/ runs inside the profiled program: runtime/common/ (the
# unwinder, module list, arena, stack bounds, locks) is shared by the
# collectors, runtime/mprof/ is the monitor (libmprof.so/.a),
# runtime/sampler/ the resource sampler, with its collectors
# runtime/cpprof/ (libcpprof.so) and runtime/cfprof/ (the
# -finstrument-functions hooks, libcfprof.so); lib/ is shared by the
# tools, a folder per stage of the pipeline; lib/format/format.c, the file
# encoder, and lib/format/newfile.c, which creates the files, are compiled
# into both.
#
# lib/'s folders and the folders each one's files include ("read/reader.h",
# through -Ilib); no cycles, so a stage never reaches back to a later one:
#   base/     util, escape, pairmap                  nothing
#   format/   format, newfile, keepfmt.h             nothing (the runtime's
#                                                    only view of lib/)
#   read/     reader, reader_stacks, reader_check,   base format
#             reader_timeline
#   symbols/  symbols*, cxxname, elfsyms             base read
#   model/    model, lispview, callgraph, fntrie,    base format read symbols
#             callpath, cfgraph
#   views/    tables, tables_cg, tables_lisp,        base format read symbols model
#             tables_diff, tables_timeline
#   merge/    merge, lispmerge                       base format read model
#   run/      launch, record, keeper, salvage_*      base format (and runtime/'s
#                                                    headers, by -iquote)
#   export/   export, diff, folded, pprof, html      all of the above
# cmd/ (the three commands) includes any of them.

PREFIX ?= /usr/local
CC ?= cc
# Sanitizer builds get their own tree: objects never mix.
B := build$(if $(SANITIZE),-san)

CFLAGS ?= -O2 -g
WARN := -Wall -Wextra -Wno-unused-parameter -Wshadow -Wstrict-prototypes
BASE_CFLAGS := -std=gnu11 $(WARN) -Ilib -Iinclude -D_GNU_SOURCE

# The runtime lives in someone else's process: hidden symbols except the API,
# initial-exec TLS (no allocation on first touch), no sanitizers ever.
# Its DWARF names its sources under /usr/src/mprof, so the type names of the
# monitor (linked into a program with libmprof.a) count as system types and
# stay out of the program's allocation bin table.
#
# Link-time optimisation lets the allocator's entry points, the monitor and
# the unwinder's recall inline into each other though they stay one module
# per file (loop: 30 fewer instructions a malloc+free pair).  Each link of
# the objects (libmprof.so, and libmprof.a's one object, below) gets the
# compile flags again (LTO generates code, and DWARF, there), in one
# partition: the library is small, and gcc otherwise splits it (and warns
# that it compiles the parts one after the other).
# The shared runtime headers are found with -iquote, for "unwind.h" only:
# libgcc's <unwind.h> (the reference unwinder's) keeps its name.  The one
# folder of lib/ the runtime sees is lib/format/ (the encoder, the keep's
# layout, newfile): its headers by their bare names, "format.h".
RT_CFLAGS := $(BASE_CFLAGS) $(CFLAGS) -fPIC -fvisibility=hidden \
	-ftls-model=initial-exec -fno-strict-aliasing -pthread \
	-fdebug-prefix-map=$(CURDIR)=/usr/src/mprof -flto -flto-partition=one -ffat-lto-objects \
	-iquote runtime/common -iquote lib/format -iquote runtime/lang -iquote $(B)/gen

TOOL_CFLAGS := $(BASE_CFLAGS) $(CFLAGS)
# Names are demangled (C++, Rust legacy and v0) by libiberty, the GNU
# tools' own demangler: a static archive (Debian's libiberty-dev), so no
# libstdc++.so to load (loading and relocating it was two thirds of a
# tool's start-up, 1.2 ms of every `mprof run`).
TOOL_LDLIBS := -ldw -lelf -lm -liberty -lz
ifneq ($(SANITIZE),)
TOOL_CFLAGS += -fsanitize=$(SANITIZE) -fno-omit-frame-pointer
TOOL_LDFLAGS += -fsanitize=$(SANITIZE)
endif

# Headers every runtime object depends on (each collector adds its own).
RT_HDR := $(wildcard lib/format/*.h runtime/common/*.h runtime/lang/*.h include/*.h)
COMMON_SRC := $(wildcard runtime/common/*.c)
# Language frames (runtime/lang: Python's now), read inside the program;
# pylayout_gen.c is a build-time program, not part of it.
LANG_SRC := $(filter-out runtime/lang/pylayout_gen.c,$(wildcard runtime/lang/*.c))
RT_SRC := $(wildcard runtime/mprof/*.c) $(COMMON_SRC) $(LANG_SRC) lib/format/format.c lib/format/newfile.c
RT_OBJ := $(patsubst %.c,$(B)/rt/%.o,$(RT_SRC))
# The sampler (runtime/sampler: resources, threads, signals, the watcher)
# is shared by two collectors: cpprof (stacks) and cfprof (the
# -finstrument-functions hooks).  Each library is its collector, the
# sampler, the unwinder, module list and mmap helpers of runtime/common
# and the encoder and file creator; not the monitor's locks.
SAMPLER_SRC := $(wildcard runtime/sampler/*.c)
SAMPLER_COMMON := $(SAMPLER_SRC) $(filter-out runtime/common/lock.c,$(COMMON_SRC)) $(LANG_SRC) \
	lib/format/format.c lib/format/newfile.c
CP_SRC := $(wildcard runtime/cpprof/*.c)
CP_OBJ := $(patsubst %.c,$(B)/rt/%.o,$(CP_SRC) $(SAMPLER_COMMON))
CF_SRC := $(wildcard runtime/cfprof/*.c)
# The hooks' fast paths are assembly (runtime/cfprof/hooks_x86_64.S says why).
CF_ASM := runtime/cfprof/hooks_x86_64.S
CF_OBJ := $(patsubst %.c,$(B)/rt/%.o,$(CF_SRC) $(SAMPLER_COMMON)) $(B)/rt/runtime/cfprof/hooks_x86_64.o
LIB_SRC := $(wildcard lib/*/*.c)
# The HTML report's page, embedded by the assembler (.incbin).
LIB_ASM := lib/export/report_html.S
LIB_OBJ := $(patsubst %.c,$(B)/obj/%.o,$(LIB_SRC)) $(B)/obj/lib/export/report_html.o
UNIT_SRC := $(wildcard tests/unit/test_*.c)
UNIT_BIN := $(patsubst tests/unit/%.c,$(B)/tests/%,$(UNIT_SRC))

RUNTIME := $(B)/lib/libmprof.so $(B)/lib/libmprof.a $(B)/lib/libcpprof.so $(B)/lib/libcfprof.so
TOOLS := $(B)/bin/mprof $(B)/bin/cpprof $(B)/bin/cfprof
FUZZ := $(B)/fuzz/fuzz_tools

.PHONY: all demo check test install clean deps fuzz bench
# Keep every object: no 'rm' after the test summary, which CI reads last.
.SECONDARY:

all: $(RUNTIME) $(TOOLS) $(UNIT_BIN) $(B)/tests/libmprof-memo1.so $(B)/tests/hostile

deps:
	@sh scripts/install-deps.sh

$(B)/rt/%.o: %.c $(RT_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(RT_CFLAGS) -c -o $@ $<

# CPython's layout, from the installed python3's headers (python3-dev):
# runtime/lang/pylayout_gen.c says what it holds.  Without the headers,
# or with a CPython whose layout it does not name, the header says
# PYL_NONE and Python programs keep native stacks.
PY_INC := $(shell /usr/bin/python3 -c 'import sysconfig; print(sysconfig.get_paths()["include"])' 2>/dev/null)
$(B)/gen/pylayout.h: runtime/lang/pylayout_gen.c
	@mkdir -p $(dir $@)
	@if $(CC) -I$(PY_INC) -o $(B)/gen/pylayout_gen $< 2> $(B)/gen/pylayout_gen.log && \
		$(B)/gen/pylayout_gen > $@.tmp; then mv $@.tmp $@; \
	else echo '#define PYL_NONE 1 /* no python3-dev headers: $(B)/gen/pylayout_gen.log */' > $@; \
		echo "note: no CPython layout ($(B)/gen/pylayout_gen.log): Python programs keep native stacks"; fi
$(B)/rt/runtime/lang/pyframes.o: $(B)/gen/pylayout.h

$(B)/obj/%.o: %.c $(wildcard lib/*/*.h include/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(TOOL_CFLAGS) -c -o $@ $<

# The launcher's side of the keep reads a dead program's tables as its
# runtime laid them out: with the runtime's own headers (lib/format/keepfmt.h),
# which name lib/format's by their bare names, as the runtime does.
SALVAGE_IQUOTE := -iquote runtime/common -iquote runtime/mprof -iquote runtime/cpprof \
	-iquote runtime/cfprof -iquote runtime/sampler -iquote runtime/lang -iquote lib/format
$(B)/obj/lib/run/keeper.o: TOOL_CFLAGS += -iquote runtime/common -iquote lib/format -iquote runtime/lang
$(B)/obj/lib/run/keeper.o: runtime/common/modules.h runtime/lang/langname.h
$(B)/obj/lib/run/salvage_mprof.o: TOOL_CFLAGS += -iquote runtime/mprof -iquote runtime/common -iquote lib/format \
	-iquote runtime/lang
$(B)/obj/lib/run/salvage_mprof.o: $(wildcard runtime/mprof/*.h) runtime/lang/langname.h
$(B)/obj/lib/run/salvage_cpprof.o: TOOL_CFLAGS += -iquote runtime/cpprof -iquote runtime/sampler -iquote runtime/common \
	-iquote lib/format -iquote runtime/lang
$(B)/obj/lib/run/salvage_cpprof.o: $(wildcard runtime/cpprof/*.h runtime/sampler/*.h)
$(B)/obj/lib/run/salvage_cfprof.o: TOOL_CFLAGS += -iquote runtime/cfprof -iquote runtime/sampler -iquote runtime/common \
	-iquote lib/format
$(B)/obj/lib/run/salvage_cfprof.o: $(wildcard runtime/cfprof/*.h runtime/sampler/*.h)

$(B)/obj/lib/export/report_html.o: lib/export/report_html.S lib/export/report.html
	@mkdir -p $(dir $@)
	$(CC) -c -o $@ $<

$(patsubst %.c,$(B)/rt/%.o,$(wildcard runtime/mprof/*.c)): $(wildcard runtime/mprof/*.h)

$(B)/lib/libmprof.so: $(RT_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(RT_CFLAGS) -shared -Wl,-z,nodelete -Wl,-soname,libmprof.so -o $@ $^ -ldl

$(patsubst %.c,$(B)/rt/%.o,$(SAMPLER_SRC)): $(wildcard runtime/sampler/*.h)
$(patsubst %.c,$(B)/rt/%.o,$(CP_SRC)): $(wildcard runtime/cpprof/*.h runtime/sampler/*.h)
$(patsubst %.c,$(B)/rt/%.o,$(CF_SRC)): $(wildcard runtime/cfprof/*.h runtime/sampler/*.h)
$(patsubst %.c,$(B)/rt/%.o,$(SAMPLER_SRC) $(CP_SRC) $(CF_SRC)): RT_CFLAGS += -iquote runtime/sampler
$(B)/rt/runtime/cfprof/hooks_x86_64.o: $(CF_ASM) runtime/cfprof/tree.h
	@mkdir -p $(dir $@)
	$(CC) -g -fdebug-prefix-map=$(CURDIR)=/usr/src/mprof -c -o $@ $<

$(B)/lib/libcpprof.so: $(CP_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(RT_CFLAGS) -shared -Wl,-z,nodelete -Wl,-soname,libcpprof.so -o $@ $^ -ldl

$(B)/lib/libcfprof.so: $(CF_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(RT_CFLAGS) -shared -Wl,-z,nodelete -Wl,-soname,libcfprof.so -o $@ $^ -ldl

# For tests: a runtime whose remembered walks all share one memo set, so
# chains meet in a set whatever their stack addresses (tests/e2e/20).
# MEMO_BITS is read by unwind_memo.h, whose look-up both of these inline.
MEMO1_SRC := runtime/common/unwind.c runtime/common/unwind_memo.c
$(B)/rt/memo1/%.o: %.c $(RT_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(RT_CFLAGS) -DMEMO_BITS=0 -c -o $@ $<

$(B)/tests/libmprof-memo1.so: $(filter-out $(patsubst %.c,$(B)/rt/%.o,$(MEMO1_SRC)),$(RT_OBJ)) \
		$(patsubst %.c,$(B)/rt/memo1/%.o,$(MEMO1_SRC))
	@mkdir -p $(dir $@)
	$(CC) $(RT_CFLAGS) -shared -Wl,-z,nodelete -Wl,-soname,libmprof.so -o $@ $^ -ldl

# libmprof.a is one object, linked beforehand with LTO (ld -r, no LTO
# code left in it): a program links it with no LTO of its own (no
# lto-wrapper work or warning in the user's link, any compiler) and the
# monitor's parts stay inlined into each other as in libmprof.so.
$(B)/lib/libmprof.a: $(RT_OBJ)
	@mkdir -p $(dir $@) $(B)/rt
	$(CC) $(RT_CFLAGS) -r -nostdlib -flinker-output=nolto-rel -o $(B)/rt/libmprof-all.o $^
	rm -f $@ && ar rcs $@ $(B)/rt/libmprof-all.o

$(B)/lib/libtools.a: $(LIB_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(B)/bin/mprof: $(B)/obj/cmd/mprof.o $(B)/lib/libtools.a
	@mkdir -p $(dir $@)
	$(CC) $(TOOL_LDFLAGS) -o $@ $^ $(TOOL_LDLIBS)

# The commands that record know the sampler's resources (resources.c).
$(B)/obj/runtime/sampler/resources.o: runtime/sampler/resources.h
$(B)/obj/cmd/cpprof.o $(B)/obj/cmd/cfprof.o $(B)/obj/lib/run/record.o: TOOL_CFLAGS += -Iruntime/sampler
$(B)/obj/cmd/cpprof.o $(B)/obj/cmd/cfprof.o $(B)/obj/lib/run/record.o: runtime/sampler/resources.h

$(B)/bin/cpprof: $(B)/obj/cmd/cpprof.o $(B)/obj/runtime/sampler/resources.o $(B)/lib/libtools.a
	@mkdir -p $(dir $@)
	$(CC) $(TOOL_LDFLAGS) -o $@ $^ $(TOOL_LDLIBS) -ledit

$(B)/bin/cfprof: $(B)/obj/cmd/cfprof.o $(B)/obj/runtime/sampler/resources.o $(B)/lib/libtools.a
	@mkdir -p $(dir $@)
	$(CC) $(TOOL_LDFLAGS) -o $@ $^ $(TOOL_LDLIBS)

$(B)/tests/%: $(B)/obj/tests/unit/%.o $(B)/lib/libtools.a
	@mkdir -p $(dir $@)
	$(CC) $(TOOL_LDFLAGS) -o $@ $^ $(TOOL_LDLIBS)

# Writes hostile data files (valid checksums, harmful content) for the tests.
$(B)/tests/hostile: tests/fuzz/hostile.c lib/format/format.c $(wildcard lib/format/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(TOOL_CFLAGS) $(TOOL_LDFLAGS) -o $@ tests/fuzz/hostile.c lib/format/format.c

# Every test: unit tests (TAP from C) and end-to-end scripts (TAP from sh),
# summarised by prove; the fuzz target too (clang: scripts/install-deps.sh).
# The last line is prove's "Result: PASS/FAIL".
# The real pprof, to check the pprof export with (tests/e2e/81): Debian's
# sources of it, built offline in a few seconds.
PPROF := $(B)/tools/pprof
$(PPROF):
	@mkdir -p $(dir $@)
	GO111MODULE=off GOPATH=/usr/share/gocode GOCACHE=$(CURDIR)/$(B)/tools/gocache \
		go build -o $@ github.com/google/pprof

check: deps all $(FUZZ) $(PPROF)
	MPROF_BUILD=$(CURDIR)/$(B) prove -j2 --exec sh tests/run-unit.t tests/e2e/*.t

test: check

demo: deps all
	@sh examples/demo.sh $(B)

# Speed of the monitor and the display against heaptrack, massif and
# jemalloc's profiler, and issue 23's cost table by callgrind
# (bench/RESULTS.md).  Not part of check: speed is never a timed test.
BENCH_ARGS ?=
bench: deps all
	python3 bench/run --no-build $(BENCH_ARGS)

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib \
		$(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 755 $(B)/bin/mprof $(DESTDIR)$(PREFIX)/bin/mprof
	install -m 755 $(B)/bin/cpprof $(DESTDIR)$(PREFIX)/bin/cpprof
	install -m 755 $(B)/bin/cfprof $(DESTDIR)$(PREFIX)/bin/cfprof
	install -m 755 $(B)/lib/libmprof.so $(DESTDIR)$(PREFIX)/lib/libmprof.so
	install -m 755 $(B)/lib/libcpprof.so $(DESTDIR)$(PREFIX)/lib/libcpprof.so
	install -m 755 $(B)/lib/libcfprof.so $(DESTDIR)$(PREFIX)/lib/libcfprof.so
	install -m 644 $(B)/lib/libmprof.a $(DESTDIR)$(PREFIX)/lib/libmprof.a
	install -m 644 include/mprof.h $(DESTDIR)$(PREFIX)/include/mprof.h
	install -m 644 doc/mprof.1 $(DESTDIR)$(PREFIX)/share/man/man1/mprof.1
	install -m 644 doc/cpprof.1 $(DESTDIR)$(PREFIX)/share/man/man1/cpprof.1
	install -m 644 doc/cfprof.1 $(DESTDIR)$(PREFIX)/share/man/man1/cfprof.1

# The fuzz target (tests/fuzz/fuzz_tools.c): the reader, the symbolizer and
# every view on each input, under clang's libFuzzer, ASan and UBSan (the
# launcher's salvagers come along: with the runtime's headers they read).  Built
# by `make check` for tests/e2e/58-fuzz.t, which replays tests/fuzz/corpus/
# and fuzzes for a bounded time; `make fuzz` fuzzes for FUZZ_SECONDS,
# seeded with that corpus and a real data file made by a test program.
FUZZ_SECONDS ?= 60
$(FUZZ): tests/fuzz/fuzz_tools.c $(LIB_SRC) $(LIB_ASM) lib/export/report.html $(wildcard lib/*/*.h)
	@mkdir -p $(dir $@)
	clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
		$(BASE_CFLAGS) $(SALVAGE_IQUOTE) -o $@ tests/fuzz/fuzz_tools.c $(filter-out lib/run/record.c,$(LIB_SRC)) $(LIB_ASM) \
		-ldw -lelf -lm -liberty -lz

fuzz: all $(FUZZ)
	@mkdir -p $(B)/fuzz/corpus
	cp tests/fuzz/corpus/* $(B)/fuzz/corpus/
	cc -g -o $(B)/fuzz/fg tests/progs/fg.c
	cd $(B)/fuzz && LD_PRELOAD=$(CURDIR)/$(B)/lib/libmprof.so MPROF_OUT=corpus/fg.data ./fg
	$(FUZZ) -max_total_time=$(FUZZ_SECONDS) -max_len=65536 $(B)/fuzz/corpus

clean:
	rm -rf build build-san
