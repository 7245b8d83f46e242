/*
 * hostile.c - write hostile data files: well-formed containers (valid
 * checksums, made with the project's one encoder, lib/format/format.c) whose
 * content is what a structured fuzzer found to hurt the tools (issue 12).
 * They seed tests/fuzz/corpus/ and the bad-input tests.
 *
 *   hostile CASE OUT [ARG]
 *
 *   dupmod OUT ELF     ELF listed twice in MODULES with the same bias
 *   overlap OUT ELF    two modules whose ranges overlap
 *   samebias OUT ELF ELF2  two files at one bias, with recorded ranges that
 *                      do not overlap though the files' own ranges do
 *   modpath OUT PATH   one module named PATH (a FIFO, a directory, ...)
 *   nostacks OUT       a cpprof file with no stacks
 *   zeros OUT          a cpprof file whose counters are all zero
 *   reorder OUT        an mprof file with its counters in another order
 *   chain OUT N [D]    mprof: a D-frame (4096) stack, then N stacks sharing
 *                      its outer D - 1 frames, each with a leaf of its own
 *   cpchain OUT N [D]  the same as a cpprof file (one counter: smaller)
 *   fan OUT N          mprof: N stacks, each a leaf of its own under its
 *                      own caller under the shared 4094 (up profiles)
 *   cpfan OUT N        the same as a cpprof file
 *   distinct OUT N [GAP]  cpprof: N stacks of 64 frames, every frame a new
 *                      address GAP (1) bytes from the last (symbolizer
 *                      cost; GAP 2^27 makes 4-byte frames, the most
 *                      distinct addresses a file may have)
 *   mdistinct OUT N [GAP]  the same as an mprof file
 *   pcshare OUT N [D]  cpprof: N + 1 stacks D (1500) deep whose frame 0 is
 *                      a pc (PC_FIRST), each but the first all the frames
 *                      of the one before, whose frame 0 is a return
 *                      address here: built apart, a stack costs its depth
 *   pcref OUT ELF PC RET LEAF [flat]  cpprof, ELF at bias 0:
 *                      A = [PC, RET] and B = [LEAF, PC, RET], frame 0 a
 *                      pc in both; B shares A's two frames (flat: not),
 *                      so A's pc is a return address in B (looked up at
 *                      PC - 1): the views must not tell the two apart
 *   ctrl OUT [cf]      mprof (cf: cfprof): control characters (ESC
 *                      sequences, CR, newlines) in every string the tools
 *                      print: INFO's command line, exe, leak scan status
 *                      and a category's name, and a module's path, which
 *                      names its frames (the file cannot be opened)
 *   ctrlcounter OUT    cpprof: a counter whose name holds an ESC sequence
 *   bigsum OUT [N]     mprof: N (3) stacks of 2^62 + 2^61 bytes each: three
 *                      add up past 2^64, one is a file that reads
 *   cpbigsum OUT [N]   the same as a cpprof file (hits)
 *   bigbins OUT        mprof: three bins whose bytes add up past 2^64
 *   info OUT KEY VALUE cpprof: two stacks of a hit each, and INFO KEY=VALUE
 *   pynames OUT N M D  cpprof, a Python profile: N functions f0.. each in M
 *                      files x0/d/d/.../util.py (D parts in common at their
 *                      end), a stack of one language frame for each: M
 *                      modules of one name whose tails are all alike
 *
 * Frames lie in no module unless a case names one, so they print as 0xaddr:
 * every address is a function of its own, the worst case for the views.
 */
#include "format/format.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DEEP FORMAT_MAX_DEPTH

static unsigned char wbuf[1 << 16];
static uint64_t frames[DEEP];

static void usage(void)
{
	fprintf(stderr, "usage: hostile pynames|dupmod|overlap|samebias|modpath|nostacks|zeros|reorder|chain|cpchain|pcshare|pcref|"
			"fan|cpfan|distinct|mdistinct|ctrl|ctrlcounter|bigsum|cpbigsum|bigbins|info OUT [ARG]\n");
	exit(2);
}

static void put_counters(struct format_writer *w, int kind, int reversed)
{
	format_begin_section(w, FORMAT_SEC_COUNTERS);
	if (kind == FORMAT_KIND_CPPROF) {
		format_put_u32(w, 1);
		format_put_str(w, "cpu");
		format_put_str(w, "hits");
	} else if (kind == FORMAT_KIND_CFPROF) {
		format_put_u32(w, 2);
		format_put_str(w, "calls");
		format_put_str(w, "calls");
		format_put_str(w, "cpu");
		format_put_str(w, "hits");
	} else {
		format_put_u32(w, MPROF_NCOUNTERS);
		for (int i = 0; i < MPROF_NCOUNTERS; i++) {
			int k = reversed ? MPROF_NCOUNTERS - 1 - i : i;
			format_put_str(w, format_mprof_counter_names[k]);
			format_put_str(w, format_mprof_counter_units[k]);
		}
	}
	format_end_section(w);
}

/* One module [start, end) at bias, named path. */
static void put_module(struct format_writer *w, uint64_t start, uint64_t end, uint64_t bias,
		       const char *path)
{
	format_put_u64(w, start);
	format_put_u64(w, end);
	format_put_u64(w, bias);
	format_put_u64(w, 0);
	format_put_str(w, path);
	format_put_blob(w, "", 0);
}

/* An mprof counter vector: one allocation of 16 bytes, never freed (or a
 * cpprof one: one hit); reversed for a file whose COUNTERS are. */
static const uint64_t *counts(int kind, int reversed)
{
	static uint64_t c[MPROF_NCOUNTERS];

	memset(c, 0, sizeof(c));
	if (kind != FORMAT_KIND_MPROF) {
		c[0] = c[1] = 1; /* cpprof: a hit; cfprof: a call, a hit */
		return c;
	}
	c[reversed ? MPROF_NCOUNTERS - 1 - MPROF_C_ALLOCS : MPROF_C_ALLOCS] = 1;
	c[reversed ? MPROF_NCOUNTERS - 1 - MPROF_C_BYTES : MPROF_C_BYTES] = 16;
	return c;
}

static uint32_t ncounts(int kind)
{
	return kind == FORMAT_KIND_CPPROF ? 1 : kind == FORMAT_KIND_CFPROF ? 2 : MPROF_NCOUNTERS;
}

static void put_bins(struct format_writer *w)
{
	format_begin_section(w, FORMAT_SEC_BINS);
	format_put_u32(w, 1);
	format_put_u32(w, 16);
	format_put_u64(w, 1);
	format_put_u64(w, 0);
	format_put_u64(w, 16);
	format_put_u64(w, 0);
	format_end_section(w);
}

/* A file of a few stacks at addr, with the modules put by mods (or none). */
static void small(struct format_writer *w, int kind, int reversed, int nstacks, uint64_t addr,
		  const uint64_t *c)
{
	put_counters(w, kind, reversed);
	format_begin_section(w, FORMAT_SEC_STACKS);
	format_put_u64(w, (uint64_t)nstacks);
	for (int i = 0; i < nstacks; i++) {
		uint64_t f[2] = { addr + 16 * (uint64_t)i, addr + 0x100 };
		format_put_stack(w, 2, 0, 0, 0, f, c ? c : counts(kind, reversed), ncounts(kind));
	}
	format_end_section(w);
	if (kind == FORMAT_KIND_MPROF)
		put_bins(w);
}

/* The deep stack's frames: distinct addresses 16 apart, in no module. */
static void deep_frames(void)
{
	for (int d = 0; d < DEEP; d++)
		frames[d] = 0x10000 + 16 * (uint64_t)d;
}

int main(int argc, char **argv)
{
	struct format_writer w;
	const char *what, *out, *arg;
	int fd, kind = FORMAT_KIND_MPROF;
	long n;

	if (argc < 3)
		usage();
	what = argv[1];
	out = argv[2];
	arg = argc > 3 ? argv[3] : NULL;
	n = arg ? strtol(arg, NULL, 10) : 0;
	if (!strcmp(what, "nostacks") || !strcmp(what, "zeros") || !strcmp(what, "cpchain") ||
	    !strcmp(what, "cpfan") || !strcmp(what, "distinct") || !strcmp(what, "pcshare") ||
	    !strcmp(what, "pcref") || !strcmp(what, "ctrlcounter") || !strcmp(what, "info") ||
	    !strcmp(what, "cpbigsum") || !strcmp(what, "pynames"))
		kind = FORMAT_KIND_CPPROF;
	if (!strcmp(what, "ctrl") && arg && !strcmp(arg, "cf"))
		kind = FORMAT_KIND_CFPROF;
	fd = open(out, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0) {
		perror(out);
		return 1;
	}
	format_writer_init(&w, fd, wbuf, sizeof(wbuf), (uint32_t)kind);
	format_begin_section(&w, FORMAT_SEC_INFO);
	if (!strcmp(what, "ctrl")) {
		static const char *const kv[][2] = {
			{ "cmdline", "prog \033]0;pwned\007 \033[2J row\nsplit\rover \177end" },
			{ "exe", "/tmp/\033[31mred" },
			{ "pid", "7" },
			{ "leak_scan", "skipped: \033[2Jgone\r" },
			{ "category.1", "pool\033[2J\nrow" },
		};
		format_put_u32(&w, 5);
		for (int i = 0; i < 5; i++) {
			format_put_str(&w, kv[i][0]);
			format_put_str(&w, kv[i][1]);
		}
	} else if (!strcmp(what, "pynames") && argc > 5) {
		long m = strtol(argv[4], NULL, 10), d = strtol(argv[5], NULL, 10);
		static char v[1 << 15];

		if (n < 1 || m < 1 || d < 0 || n * m > 65536 || d > 2000)
			usage();
		format_put_u32(&w, 2 + (uint32_t)(n * m));
		format_put_str(&w, "cmdline");
		format_put_str(&w, what);
		format_put_str(&w, "lang");
		format_put_str(&w, "python 3.11.2");
		for (long i = 0; i < n * m; i++) {
			char key[32];
			int at = snprintf(v, sizeof v, "f%ld\tx%ld", i / m, i % m);

			for (long k = 0; k < d; k++)
				at += snprintf(v + at, sizeof v - (size_t)at, "/d");
			snprintf(v + at, sizeof v - (size_t)at, "/util.py:%ld", i + 1);
			snprintf(key, sizeof key, "lang.fn.%ld", i + 1);
			format_put_str(&w, key);
			format_put_str(&w, v);
		}
	} else {
		int extra = !strcmp(what, "info") && argc > 4;
		format_put_u32(&w, 1 + (uint32_t)extra);
		format_put_str(&w, "cmdline");
		format_put_str(&w, what);
		if (extra) {
			format_put_str(&w, arg);
			format_put_str(&w, argv[4]);
		}
	}
	format_end_section(&w);
	deep_frames();

	if (!strcmp(what, "samebias")) {
		uint64_t bias = 0x555555554000ull;
		if (argc < 5)
			usage();
		format_begin_section(&w, FORMAT_SEC_MODULES);
		format_put_u32(&w, 2);
		put_module(&w, bias + 0x1000, bias + 0x1010, bias, arg);
		put_module(&w, bias + 0x1010, bias + 0x1020, bias, argv[4]);
		format_end_section(&w);
		small(&w, kind, 0, 1, bias + 0x1004, NULL);
	} else if (!strcmp(what, "dupmod") || !strcmp(what, "overlap") || !strcmp(what, "modpath")) {
		/* PIE-like placement; the frames fall inside the module. */
		uint64_t bias = 0x555555554000ull;
		if (!arg)
			usage();
		format_begin_section(&w, FORMAT_SEC_MODULES);
		format_put_u32(&w, !strcmp(what, "modpath") ? 1 : 2);
		put_module(&w, bias, bias + 0x100000, bias, arg);
		if (!strcmp(what, "dupmod"))
			put_module(&w, bias, bias + 0x100000, bias, arg);
		else if (!strcmp(what, "overlap"))
			put_module(&w, bias + 0x80000, bias + 0x180000, bias + 0x80000, arg);
		format_end_section(&w);
		small(&w, kind, 0, 2, bias + 0x1010, NULL);
	} else if (!strcmp(what, "nostacks")) {
		small(&w, kind, 0, 0, 0, NULL);
	} else if (!strcmp(what, "zeros")) {
		static const uint64_t zero[1];
		small(&w, kind, 0, 3, 0x1000, zero);
	} else if (!strcmp(what, "reorder")) {
		small(&w, kind, 1, 3, 0x1000, NULL);
	} else if (!strcmp(what, "chain") || !strcmp(what, "cpchain") || !strcmp(what, "fan") ||
		   !strcmp(what, "cpfan")) {
		/* Stack 0 is 4096 frames deep; stack i > 0 keeps the outer
		 * 4095 (fan: 4094) through its reference to the one before,
		 * and adds a leaf of its own (fan: a caller and a leaf, the
		 * same leaf everywhere, so an up profile from it grows a path
		 * per stack). */
		int fan = !strcmp(what, "fan") || !strcmp(what, "cpfan");
		uint32_t own = fan ? 2 : 1;
		uint32_t d = !fan && argc > 4 ? (uint32_t)strtoul(argv[4], NULL, 0) : DEEP;
		if (d < 2 || d > DEEP)
			usage();
		put_counters(&w, kind, 0);
		format_begin_section(&w, FORMAT_SEC_STACKS);
		format_put_u64(&w, (uint64_t)n + 1);
		format_put_stack(&w, d, 0, 0, 0, frames, counts(kind, 0), ncounts(kind));
		for (long i = 1; i <= n; i++) {
			uint64_t f[2] = { 0x800000 + 16 * (uint64_t)i, 0x900000 + 16 * (uint64_t)i };
			if (fan)
				f[0] = 0x7f0000;
			format_put_stack(&w, d, 0, 1, d - own, f, counts(kind, 0), ncounts(kind));
		}
		format_end_section(&w);
		if (kind == FORMAT_KIND_MPROF)
			put_bins(&w);
	} else if (!strcmp(what, "pcshare")) {
		uint32_t d = argc > 4 ? (uint32_t)strtoul(argv[4], NULL, 0) : 1500;
		if (d < 2 || d > DEEP)
			usage();
		put_counters(&w, kind, 0);
		format_begin_section(&w, FORMAT_SEC_STACKS);
		format_put_u64(&w, (uint64_t)n + 1);
		format_put_stack(&w, d, FORMAT_STACK_PC_FIRST, 0, 0, frames, counts(kind, 0),
				 ncounts(kind));
		for (long i = 1; i <= n; i++)
			format_put_stack(&w, d, FORMAT_STACK_PC_FIRST, 1, d, NULL, counts(kind, 0),
					 ncounts(kind));
		format_end_section(&w);
	} else if (!strcmp(what, "pcref")) {
		uint64_t a[2], b[3];
		int flat = argc > 7 && !strcmp(argv[7], "flat");
		if (argc < 7)
			usage();
		a[0] = b[1] = strtoull(argv[4], NULL, 0);
		a[1] = b[2] = strtoull(argv[5], NULL, 0);
		b[0] = strtoull(argv[6], NULL, 0);
		format_begin_section(&w, FORMAT_SEC_MODULES);
		format_put_u32(&w, 1);
		put_module(&w, 0x1000, 0x40000000, 0, arg);
		format_end_section(&w);
		put_counters(&w, kind, 0);
		format_begin_section(&w, FORMAT_SEC_STACKS);
		format_put_u64(&w, 2);
		format_put_stack(&w, 2, FORMAT_STACK_PC_FIRST, 0, 0, a, counts(kind, 0),
				 ncounts(kind));
		format_put_stack(&w, 3, FORMAT_STACK_PC_FIRST, flat ? 0 : 1, flat ? 0 : 2, b,
				 counts(kind, 0), ncounts(kind));
		format_end_section(&w);
	} else if (!strcmp(what, "distinct") || !strcmp(what, "mdistinct")) {
		/* Every frame a new address, gap bytes on from the last. */
		uint64_t a = 0x100000, f[64], gap = argc > 4 ? strtoull(argv[4], NULL, 0) : 1;
		put_counters(&w, kind, 0);
		format_begin_section(&w, FORMAT_SEC_STACKS);
		format_put_u64(&w, (uint64_t)n);
		for (long i = 0; i < n; i++) {
			for (int d = 0; d < 64; d++, a += gap)
				f[d] = a;
			format_put_stack(&w, 64, 0, 0, 0, f, counts(kind, 0), ncounts(kind));
		}
		format_end_section(&w);
		if (kind == FORMAT_KIND_MPROF)
			put_bins(&w);
	} else if (!strcmp(what, "ctrl")) {
		/* main > lib...+0x1010 > lib...+0x1020, a category's stack,
		 * and a frame in no module; the module cannot be opened, so
		 * its frames are named by its base name. */
		uint64_t base = 0x7f0000000000ull, f[3] = { base + 0x1020, base + 0x1010, 0x4000 };
		uint32_t fl = kind == FORMAT_KIND_CFPROF ? FORMAT_STACK_ENTRY : 0;
		format_begin_section(&w, FORMAT_SEC_MODULES);
		format_put_u32(&w, 1);
		put_module(&w, base, base + 0x100000, base,
			   "/nonexistent/dir\n\033[31mred/lib\033]0;pwned\007\r.so");
		format_end_section(&w);
		put_counters(&w, kind, 0);
		format_begin_section(&w, FORMAT_SEC_STACKS);
		format_put_u64(&w, 3);
		format_put_stack(&w, 3, fl, 0, 0, f, counts(kind, 0), ncounts(kind));
		format_put_stack(&w, 2, fl, 0, 0, f + 1, counts(kind, 0), ncounts(kind));
		if (kind == FORMAT_KIND_MPROF)
			fl = 1u << FORMAT_STACK_CATEGORY_SHIFT; /* category 1 */
		format_put_stack(&w, 1, fl, 0, 0, f + 2, counts(kind, 0), ncounts(kind));
		format_end_section(&w);
		if (kind == FORMAT_KIND_MPROF)
			put_bins(&w);
	} else if (!strcmp(what, "bigsum") || !strcmp(what, "cpbigsum")) {
		/* 2^62 + 2^61 three times: 2^64 + 2^61, 2^61 once wrapped,
		 * less than any of the three. */
		static uint64_t c[MPROF_NCOUNTERS];
		uint64_t big = (1ull << 62) + (1ull << 61);
		if (kind == FORMAT_KIND_CPPROF)
			c[0] = big;
		else
			c[MPROF_C_ALLOCS] = 1, c[MPROF_C_BYTES + 3] = big;
		small(&w, kind, 0, arg ? (int)n : 3, 0x1000, c);
	} else if (!strcmp(what, "bigbins")) {
		uint64_t f[1] = { 0x1000 };
		put_counters(&w, kind, 0);
		format_begin_section(&w, FORMAT_SEC_STACKS);
		format_put_u64(&w, 1);
		format_put_stack(&w, 1, 0, 0, 0, f, counts(kind, 0), ncounts(kind));
		format_end_section(&w);
		format_begin_section(&w, FORMAT_SEC_BINS);
		format_put_u32(&w, 3);
		for (uint32_t size = 16; size <= 48; size += 16) {
			format_put_u32(&w, size);
			format_put_u64(&w, 1);
			format_put_u64(&w, 0);
			format_put_u64(&w, (1ull << 62) + (1ull << 61));
			format_put_u64(&w, 0);
		}
		format_end_section(&w);
	} else if (!strcmp(what, "info")) {
		small(&w, kind, 0, 2, 0x1000, NULL);
	} else if (!strcmp(what, "pynames")) {
		long all = n * strtol(argv[4], NULL, 10);

		put_counters(&w, kind, 0);
		format_begin_section(&w, FORMAT_SEC_STACKS);
		format_put_u64(&w, (uint64_t)all);
		for (long i = 0; i < all; i++) {
			uint64_t f[1] = { FORMAT_LANG_FRAME(i + 1) };
			format_put_stack(&w, 1, 0, 0, 0, f, counts(kind, 0), ncounts(kind));
		}
		format_end_section(&w);
	} else if (!strcmp(what, "ctrlcounter")) {
		uint64_t f[1] = { 0x4000 };
		format_begin_section(&w, FORMAT_SEC_COUNTERS);
		format_put_u32(&w, 1);
		format_put_str(&w, "cpu\033[2J");
		format_put_str(&w, "hits");
		format_end_section(&w);
		format_begin_section(&w, FORMAT_SEC_STACKS);
		format_put_u64(&w, 1);
		format_put_stack(&w, 1, 0, 0, 0, f, counts(kind, 0), 1);
		format_end_section(&w);
	} else {
		usage();
	}
	if (format_writer_finish(&w) != 0) {
		perror(out);
		return 1;
	}
	close(fd);
	return 0;
}
