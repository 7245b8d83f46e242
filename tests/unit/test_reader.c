/*
 * test_reader.c - the codec round trip, and the reader against hostile
 * input: every truncation, every flipped byte, wrong magic/version/kind.
 */
#include "format/format.h"
#include "read/reader.h"
#include "tap.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/*
 * Encode a small mprof file into memory; returns its length.  Version 2
 * (the encoder's) has three stacks, the third sharing two outer frames with
 * the first; version 1 (flat stacks, written by hand here) the first two.
 * nthreads >= 0 adds a THREADS section of that many entries (one per stack
 * is right).
 */
static size_t encode_v(unsigned char **out, int nthreads, int version)
{
	struct format_writer w;
	static unsigned char buf[64]; /* tiny: forces many flushes */
	int fd = memfd_create("t", 0);
	off_t len;

	format_writer_init(&w, fd, buf, sizeof(buf), FORMAT_KIND_MPROF);
	format_begin_section(&w, FORMAT_SEC_INFO);
	format_put_u32(&w, 2);
	format_put_str(&w, "cmdline");
	format_put_str(&w, "./prog a b");
	format_put_str(&w, "pid");
	format_put_str(&w, "42");
	format_end_section(&w);
	format_begin_section(&w, FORMAT_SEC_MODULES);
	format_put_u32(&w, 1);
	format_put_u64(&w, 0x1000);
	format_put_u64(&w, 0x5000);
	format_put_u64(&w, 0x1000);
	format_put_u64(&w, 0);
	format_put_str(&w, "/bin/prog");
	format_put_blob(&w, "\x01\x02\x03", 3);
	format_end_section(&w);
	format_begin_section(&w, FORMAT_SEC_COUNTERS);
	format_put_u32(&w, MPROF_NCOUNTERS);
	for (int i = 0; i < MPROF_NCOUNTERS; i++) {
		format_put_str(&w, format_mprof_counter_names[i]);
		format_put_str(&w, format_mprof_counter_units[i]);
	}
	format_end_section(&w);
	format_begin_section(&w, FORMAT_SEC_STACKS);
	format_put_u64(&w, version == 1 ? 2 : 3);
	for (int s = 0; s < 2; s++) {
		uint64_t f[3], c[MPROF_NCOUNTERS];
		for (int d = 0; d < 3; d++)
			f[d] = 0x1100 + 16 * d + (unsigned)s;
		for (int i = 0; i < MPROF_NCOUNTERS; i++)
			c[i] = (uint64_t)(i + 100 * s);
		if (version == 1) {
			format_put_u32(&w, 3);
			format_put_u32(&w, s ? FORMAT_STACK_TRUNCATED : 0);
			format_put_u64s(&w, f, 3);
			format_put_u64s(&w, c, MPROF_NCOUNTERS);
		} else {
			format_put_stack(&w, 3, s ? FORMAT_STACK_TRUNCATED : 0, 0, 0, f, c,
					 MPROF_NCOUNTERS);
		}
	}
	if (version != 1) {
		/* 0x1300 0x1200, then stack 0's outer two: 0x1110 0x1120.  A
		 * frame below the one before: a negative delta. */
		uint64_t own[2] = { 0x1300, 0x1200 }, c[MPROF_NCOUNTERS] = { 7, 1ull << 40 };
		format_put_stack(&w, 4, 0, 2, 2, own, c, MPROF_NCOUNTERS);
	}
	format_end_section(&w);
	if (nthreads >= 0) {
		format_begin_section(&w, FORMAT_SEC_THREADS);
		format_put_u64(&w, (uint64_t)nthreads);
		for (int t = 0; t < nthreads; t++)
			format_put_u32(&w, 1000 + (uint32_t)t);
		format_end_section(&w);
	}
	format_begin_section(&w, FORMAT_SEC_BINS);
	format_put_u32(&w, 1);
	format_put_u32(&w, 204);
	format_put_u64(&w, 10);
	format_put_u64(&w, 4);
	format_put_u64(&w, 2040);
	format_put_u64(&w, 816);
	format_end_section(&w);
	if (format_writer_finish(&w) != 0)
		return 0;
	if (version == 1) {
		unsigned char v1[4] = { 1, 0, 0, 0 }; /* the header has no checksum */
		if (pwrite(fd, v1, 4, 8) != 4)
			return 0;
	}
	len = lseek(fd, 0, SEEK_END);
	*out = malloc((size_t)len);
	if (pread(fd, *out, (size_t)len, 0) != len)
		return 0;
	close(fd);
	return (size_t)len;
}

static size_t encode_with(unsigned char **out, int nthreads)
{
	return encode_v(out, nthreads, FORMAT_VERSION);
}

static size_t encode(unsigned char **out)
{
	return encode_with(out, -1);
}

/*
 * A cpprof file (one counter) whose stacks are given by put(w): for the
 * checks on packed stacks that a valid checksum cannot catch.
 */
static size_t encode_stacks(unsigned char **out, void (*put)(struct format_writer *))
{
	struct format_writer w;
	static unsigned char buf[4096];
	int fd = memfd_create("t", 0);
	off_t len;

	format_writer_init(&w, fd, buf, sizeof(buf), FORMAT_KIND_CPPROF);
	format_begin_section(&w, FORMAT_SEC_COUNTERS);
	format_put_u32(&w, 1);
	format_put_str(&w, "cpu");
	format_put_str(&w, "hits");
	format_end_section(&w);
	format_begin_section(&w, FORMAT_SEC_STACKS);
	put(&w);
	format_end_section(&w);
	if (format_writer_finish(&w) != 0)
		return 0;
	len = lseek(fd, 0, SEEK_END);
	*out = malloc((size_t)len);
	if (pread(fd, *out, (size_t)len, 0) != len)
		return 0;
	close(fd);
	return (size_t)len;
}

static uint64_t frames4k[FORMAT_MAX_DEPTH];

/* A reference past the first stack. */
static void put_badref(struct format_writer *w)
{
	uint64_t c = 1;
	format_put_u64(w, 2);
	format_put_stack(w, 3, 0, 0, 0, frames4k, &c, 1);
	format_put_stack(w, 3, 0, 3, 1, frames4k, &c, 1);
}

/* Sharing more frames than the stack referred to has. */
static void put_badshare(struct format_writer *w)
{
	uint64_t c = 1;
	format_put_u64(w, 2);
	format_put_stack(w, 3, 0, 0, 0, frames4k, &c, 1);
	format_put_stack(w, 5, 0, 1, 4, frames4k, &c, 1);
}

/* A counter of eleven bytes (or of ten, its last holding more than the
 * 64th bit), far from the section's end and near it. */
static int badvar_len, badvar_last;
static void put_badvar(struct format_writer *w)
{
	uint64_t c = 1;
	unsigned char b[16] = { 1, 0, 0, 2 }; /* depth 1, flags 0, ref 0, frame 1 */

	format_put_u64(w, 3);
	format_put_stack(w, 1, 0, 0, 0, frames4k, &c, 1);
	memset(b + 4, 0xff, (size_t)badvar_len - 1);
	b[4 + badvar_len - 1] = (unsigned char)(badvar_len == 10 ? 0x02 : 0x01);
	format_put_bytes(w, b, 4 + (size_t)badvar_len);
	if (!badvar_last)
		for (int i = 0; i < 4; i++)
			format_put_stack(w, 1, 0, 0, 0, frames4k, &c, 1);
}

/* A bomb: 40000 stacks of 4096 frames, each all shared with the one before,
 * 4-5 bytes each: 160M values from 190 KB. */
static void put_bomb(struct format_writer *w)
{
	uint64_t c = 1;
	format_put_u64(w, 40001);
	format_put_stack(w, FORMAT_MAX_DEPTH, 0, 0, 0, frames4k, &c, 1);
	for (int i = 0; i < 40000; i++)
		format_put_stack(w, FORMAT_MAX_DEPTH, 0, 1, FORMAT_MAX_DEPTH, frames4k, &c, 1);
}

/*
 * References the reader must resolve through other stacks: stack k (1..K)
 * is A_k over stack k-1 (so K frames deep: A_K ... A_0, sharing one frame
 * more each time), then stacks of depth 1 + s that share s frames with
 * stack K, for s = 1..K: frame X_s, then A_(s-1) .. A_0.  Stack K's first
 * s frames from the outside are in stack s-1's own frames: found in
 * O(log K) steps, not K - s.
 */
#define CHAIN 600
static uint64_t chain_frame(int k)
{
	return 0x400000 + 0x40 * (uint64_t)k;
}

static void put_chain(struct format_writer *w)
{
	uint64_t c = 1, f;

	format_put_u64(w, 2 * CHAIN);
	f = chain_frame(0);
	format_put_stack(w, 1, 0, 0, 0, &f, &c, 1);
	for (int k = 1; k < CHAIN; k++) {
		f = chain_frame(k);
		format_put_stack(w, (uint32_t)k + 1, 0, 1, (uint32_t)k, &f, &c, 1);
	}
	for (int s = 1; s <= CHAIN; s++) {
		f = 0x900000 + (uint64_t)s;
		/* stack CHAIN - 1 is s entries before this one */
		format_put_stack(w, (uint32_t)s + 1, 0, (uint64_t)s, (uint32_t)s, &f, &c, 1);
	}
}

static int chain_ok(const struct profile *p)
{
	static uint64_t f[FORMAT_MAX_DEPTH];

	for (size_t i = 0; i < p->nstacks; i++) {
		uint32_t n = reader_frames(p, i, f), want = i < CHAIN ? (uint32_t)i + 1 : (uint32_t)(i - CHAIN) + 2;
		if (n != want || n != p->stacks[i].depth)
			return 0;
		for (uint32_t d = 0; d < n; d++) {
			uint64_t x = i < CHAIN ? chain_frame((int)i - (int)d)
				     : d == 0 ? 0x900000 + (i - CHAIN + 1) : chain_frame((int)(n - 1 - d));
			if (f[d] != x)
				return 0;
		}
		/* resolved: the referred stack's own frames hold the first
		 * shared frame */
		if (p->stacks[i].shared && p->stacks[p->stacks[i].ref].shared >= p->stacks[i].shared)
			return 0;
	}
	return 1;
}

/* CRC-32 a bit at a time, as the standard defines it: the reference for
 * format_crc32's tables and its carry-less folding. */
static uint32_t crc_bitwise(uint32_t crc, const unsigned char *p, size_t n)
{
	crc = ~crc;
	while (n--) {
		crc ^= *p++;
		for (int k = 0; k < 8; k++)
			crc = crc >> 1 ^ (0xEDB88320u & (0u - (crc & 1)));
	}
	return ~crc;
}

static uint64_t rnd_x = 88172645463325252ull;
static uint64_t rnd(void) /* xorshift64: the same numbers every run */
{
	rnd_x ^= rnd_x << 13;
	rnd_x ^= rnd_x >> 7;
	rnd_x ^= rnd_x << 17;
	return rnd_x;
}

/* Every length to 300 at 16 alignments, in one call and in two, and 70 KB
 * from a state not 0: the folding path (64 bytes and more), its 16-byte
 * blocks, and the tables' tail all agree with the definition. */
static void test_crc(void)
{
	static unsigned char b[70000];
	int bad = 0, cases = 0;

	for (size_t i = 0; i < sizeof b; i++)
		b[i] = (unsigned char)rnd();
	for (size_t len = 0; len <= 300; len++) {
		for (size_t off = 0; off < 16; off++) {
			size_t cut = (len * 7 + off) % (len + 1);
			uint32_t want = crc_bitwise(0, b + off, len);
			cases++;
			if (format_crc32(0, b + off, len) != want ||
			    format_crc32(format_crc32(0, b + off, cut), b + off + cut, len - cut) != want)
				bad++;
		}
	}
	is_int(bad, 0, "CRC-32 as defined, bit by bit: %d lengths and alignments, whole and cut",
	       cases);
	is_int(format_crc32(0x12345678, b + 3, sizeof b - 3), crc_bitwise(0x12345678, b + 3, sizeof b - 3),
	       "CRC-32 of 70 KB from a running state");
}

/*
 * Stacks of every kind (deep and shallow, shared or not, frames near and
 * far apart, counters small, large, and in groups of eight with one
 * large), through a buffer that holds each (encoded in place), one that
 * holds none (staged), and all at once (format_put_stacks): the same
 * bytes, and a file that reads back.
 */
static size_t encode_mixed(unsigned char **out, size_t cap, uint32_t ncounts, int batch)
{
	static unsigned char bigbuf[1 << 16], smallbuf[64];
	static uint64_t frames[FORMAT_MAX_DEPTH], counts[MPROF_NCOUNTERS_SCAN];
	static struct format_stack all[400];
	struct format_writer w;
	int fd = memfd_create("t", 0);
	uint32_t depth, prev = 0, shared;
	off_t len;

	rnd_x = 2463534242ull;
	format_writer_init(&w, fd, cap > sizeof smallbuf ? bigbuf : smallbuf,
			   cap > sizeof smallbuf ? sizeof bigbuf : sizeof smallbuf, FORMAT_KIND_MPROF);
	format_begin_section(&w, FORMAT_SEC_COUNTERS);
	format_put_u32(&w, ncounts);
	for (uint32_t i = 0; i < ncounts; i++) {
		format_put_str(&w, format_mprof_counter_names[i]);
		format_put_str(&w, format_mprof_counter_units[i]);
	}
	format_end_section(&w);
	format_begin_section(&w, FORMAT_SEC_STACKS);
	format_put_u64(&w, 400);
	for (int s = 0; s < 400; s++) {
		uint64_t r = rnd();
		depth = s == 7 ? FORMAT_MAX_DEPTH : s % 50 == 3 ? 900 + (uint32_t)(r % 200) : (uint32_t)(r % 40);
		for (uint32_t d = 0; d < depth; d++)
			frames[d] = rnd() % 5 ? 0x400000 + rnd() % 0x1000 : rnd() >> (rnd() % 64);
		for (uint32_t i = 0; i < ncounts; i++) {
			r = rnd();
			counts[i] = r % 3 == 0 ? 0 : r % 3 == 1 ? r >> 57 : r >> (24 + r % 40);
			if (s % 5 == 0)
				counts[i] &= 0x7f; /* every group small */
		}
		shared = s && r % 2 ? (uint32_t)(r >> 8) % ((depth < prev ? depth : prev) + 1) : 0;
		if (batch) { /* format_put_stacks: copies kept until the end */
			all[s] = (struct format_stack){ memcpy(malloc(depth * 8 + 1), frames, depth * 8),
							memcpy(malloc(ncounts * 8), counts, ncounts * 8),
							shared ? 1 : 0, depth, (uint32_t)(r >> 40) & 7, shared };
		} else {
			format_put_stack(&w, depth, (uint32_t)(r >> 40) & 7, shared ? 1 : 0, shared,
					 frames, counts, ncounts);
		}
		prev = depth;
	}
	if (batch) {
		format_put_stacks(&w, all, 400, ncounts);
		for (int s = 0; s < 400; s++) {
			free((void *)all[s].own);
			free((void *)all[s].counts);
		}
	}
	format_end_section(&w);
	if (format_writer_finish(&w) != 0)
		return 0;
	len = lseek(fd, 0, SEEK_END);
	*out = malloc((size_t)len);
	if (pread(fd, *out, (size_t)len, 0) != len)
		return 0;
	close(fd);
	return (size_t)len;
}

static void test_put_stack(uint32_t ncounts)
{
	unsigned char *a = NULL, *b = NULL, *c = NULL;
	size_t na = encode_mixed(&a, 1 << 16, ncounts, 0), nb = encode_mixed(&b, 64, ncounts, 0);
	size_t nc = encode_mixed(&c, 1 << 16, ncounts, 1);
	struct profile p;
	char err[256] = "";

	ok(na > 50000 && na == nb && memcmp(a, b, na) == 0,
	   "%u counters: stacks encoded in place and staged are the same %zu bytes", ncounts, na);
	ok(nc == na && memcmp(a, c, na) == 0, "and format_put_stacks writes them so too");
	free(c);
	ok(reader_parse(a, na, &p, err, sizeof(err)) == 0 && p.nstacks == 400 &&
		   p.stacks[7].depth == FORMAT_MAX_DEPTH,
	   "and read back: %s", err[0] ? err : "400 stacks");
	if (!err[0])
		reader_release(&p);
	free(a);
	free(b);
}

/*
 * A file of one stack and a TIMELINE of three points, the second giving
 * the stack's live bytes; bad picks one thing wrong in the section (0:
 * none): 1 a tracked stack the file lacks, 2 a point back in time, 3 a
 * point giving more stacks than a point may, 4 a byte left over, 5 a
 * point cut short, 6 a point naming an untracked slot.  Then LIFETIMES,
 * of the stack: 7 with 4 buckets, 8 of a stack the file lacks, 9 whose
 * buckets do not add up.
 */
static size_t encode_tl(unsigned char **out, int bad)
{
	struct format_writer w;
	static unsigned char buf[4096];
	int fd = memfd_create("t", 0);
	uint64_t f[2] = { 0x1100, 0x1200 }, c[MPROF_NCOUNTERS] = { 1, 0, 0, 0, 24 };
	struct format_tl_top top[FORMAT_TL_TOP + 1] = { { 0, 0, 24 } };
	off_t len;

	format_writer_init(&w, fd, buf, sizeof(buf), FORMAT_KIND_MPROF);
	format_begin_section(&w, FORMAT_SEC_COUNTERS);
	format_put_u32(&w, MPROF_NCOUNTERS);
	for (int i = 0; i < MPROF_NCOUNTERS; i++) {
		format_put_str(&w, format_mprof_counter_names[i]);
		format_put_str(&w, format_mprof_counter_units[i]);
	}
	format_end_section(&w);
	format_begin_section(&w, FORMAT_SEC_STACKS);
	format_put_u64(&w, 1);
	format_put_stack(&w, 2, 0, 0, 0, f, c, MPROF_NCOUNTERS);
	format_end_section(&w);
	format_begin_section(&w, FORMAT_SEC_TIMELINE);
	format_put_u32(&w, 0);
	format_put_u32(&w, 1);
	format_put_u64(&w, bad == 1 ? 5 : 0);
	format_put_u32(&w, 3);
	format_put_tl_point(&w, 1000, 0, 0, 0, 0, 0, NULL);
	if (bad == 6)
		top[0].slot = 1;
	format_put_tl_point(&w, bad == 2 ? 999 : 2000, 24, 1, 24, FORMAT_TL_PEAK,
			    bad == 3 ? FORMAT_TL_TOP + 1 : 1, top);
	if (bad == 5) {
		format_put_u64(&w, 3000);
	} else {
		format_put_tl_point(&w, 3000, 0, 0, 24, FORMAT_TL_END, 0, NULL);
		if (bad == 4)
			format_put_u32(&w, 7);
	}
	format_end_section(&w);
	format_begin_section(&w, FORMAT_SEC_LIFETIMES);
	format_put_u32(&w, bad == 7 ? 4 : FORMAT_LT_BUCKETS);
	format_put_u32(&w, 1);
	format_put_u64(&w, bad == 8 ? 3 : 0);
	format_put_u64(&w, 5); /* samples: 3 freed, 2 live */
	for (int k = 0; k < FORMAT_LT_BUCKETS; k++)
		format_put_u64(&w, k == 1 ? 3 : 0);
	for (int k = 0; k < FORMAT_LT_BUCKETS; k++)
		format_put_u64(&w, k == 0 ? (bad == 9 ? 2 : 3) : 0);
	format_put_u64(&w, 2);
	format_end_section(&w);
	if (format_writer_finish(&w) != 0)
		return 0;
	len = lseek(fd, 0, SEEK_END);
	*out = malloc((size_t)len);
	if (pread(fd, *out, (size_t)len, 0) != len)
		return 0;
	close(fd);
	return (size_t)len;
}

static void test_timeline(void)
{
	static const char *const why[] = {
		NULL,
		"corrupt timeline section: tracks stack 5 of 1",
		"corrupt timeline section: point 2 goes back in time",
		"corrupt timeline section: point 2 gives 9 stacks (at most 8)",
		"corrupt timeline section: 4 bytes left over",
		"corrupt timeline section: 3 points in 100 bytes",
		"corrupt timeline section: point 2 names tracked stack 1 of 1",
		"corrupt lifetimes section: 4 buckets (this reader knows 5)",
		"corrupt lifetimes section: stack 3 of 1",
		"corrupt lifetimes section: stack 0's buckets do not add up",
	};
	unsigned char *buf = NULL;
	struct profile p;
	char err[256];
	size_t len = encode_tl(&buf, 0);

	is_int(reader_parse(buf, len, &p, err, sizeof(err)), 0, "a timeline reads");
	ok(p.timeline && p.timeline->npoints == 3 && p.timeline->ntrack == 1 &&
		   p.timeline->track[0] == 0,
	   "three points, one stack tracked");
	ok(p.timeline && p.timeline->points[1].ns == 2000 && p.timeline->points[1].live == 24 &&
		   p.timeline->points[1].flags == FORMAT_TL_PEAK && p.timeline->points[1].ntop == 1 &&
		   p.timeline->points[1].top[0].bytes == 24 &&
		   p.timeline->points[2].flags == FORMAT_TL_END,
	   "the peak's point and its stack's bytes; the end's");
	ok(p.nlifetimes == 1 && p.lifetimes[0].samples == 5 && p.lifetimes[0].t[1] == 3 &&
		   p.lifetimes[0].b[0] == 3 && p.lifetimes[0].live == 2,
	   "lifetimes: 5 samples, 3 freed in the second bucket of time, 2 live");
	reader_release(&p);
	free(buf);
	for (int bad = 1; bad <= 9; bad++) {
		len = encode_tl(&buf, bad);
		err[0] = 0;
		is_int(reader_parse(buf, len, &p, err, sizeof(err)), -1, "bad timeline %d refused", bad);
		is_str(err, why[bad], "bad timeline %d: its reason", bad);
		free(buf);
	}
}

int main(void)
{
	unsigned char *buf = NULL, *copy;
	uint64_t f[FORMAT_MAX_DEPTH], c[FORMAT_MAX_COUNTERS];
	size_t len = encode(&buf);
	struct profile p;
	char err[256];
	int rejected = 0, crashed_not = 1;

	is_int(format_crc32(0, "123456789", 9), 0xcbf43926, "CRC-32 check value");
	ok(len > FORMAT_HEADER_LEN, "encoder wrote %zu bytes", len);
	is_int(reader_parse(buf, len, &p, err, sizeof(err)), 0, "round trip parses");
	is_int(p.kind, FORMAT_KIND_MPROF, "kind");
	is_str(reader_info(&p, "cmdline"), "./prog a b", "info cmdline");
	is_int(p.nmodules, 1, "one module");
	is_str(p.modules[0].path, "/bin/prog", "module path");
	is_int(p.modules[0].build_id_len, 3, "build-id length");
	is_int(p.ncounters, MPROF_NCOUNTERS, "counters");
	is_int(reader_counter(&p, "freed.x"), MPROF_C_FREED + SIZE_X, "counter lookup");
	is_int(p.nstacks, 3, "three stacks");
	reader_own(&p, 1, 0, f);
	is_int(f[2], 0x1100 + 32 + 1, "frame value");
	is_int(reader_counts(&p, 1, c)[5], 105, "counter value");
	ok(reader_own(&p, 1, 2, f) == p.stacks[1].depth - 2 && f[0] == 0x1100 + 32 + 1,
	   "own frames from the outer end");
	is_int(p.stacks[1].flags, FORMAT_STACK_TRUNCATED, "stack flags");
	ok(reader_frames(&p, 2, f) == 4 && f[0] == 0x1300 && f[1] == 0x1200 && f[2] == 0x1110 &&
		   f[3] == 0x1120,
	   "a stack's outer frames shared with an earlier one");
	ok(p.stacks[2].shared == 2 && p.stacks[2].ref == 0 && p.nvalues == 3 + 3 + 4 + 3 * MPROF_NCOUNTERS,
	   "kept by reference, not copied");
	reader_counts(&p, 2, c);
	ok(c[0] == 7 && c[1] == 1ull << 40 && c[2] == 0, "its counters");
	is_int(p.nbins, 1, "one bin");
	is_int(p.bins[0].freed, 816, "bin bytes freed");
	reader_release(&p);

	/* From a file, mapped: the same stacks, before and after a view
	 * gives the pages back. */
	{
		char path[] = "/tmp/test_reader.XXXXXX";
		int fd = mkstemp(path);
		uint64_t g[FORMAT_MAX_DEPTH];

		err[0] = 0;
		ok(fd >= 0 && write(fd, buf, len) == (ssize_t)len && close(fd) == 0 &&
			   reader_load(path, &p, err, sizeof(err)) == 0 && p.mapped,
		   "a file is mapped: %s", err[0] ? err : "read");
		unlink(path);
		reader_forget(&p, 2);
		ok(reader_frames(&p, 2, g) == 4 && g[0] == 0x1300 && g[3] == 0x1120 &&
			   reader_counts(&p, 2, c)[0] == 7,
		   "its stacks read after reader_forget");
		reader_release(&p);
	}
	{
		/* The coding round trips, deltas negative and values past 2^63. */
		uint64_t v[4] = { 5, 1ull << 63, 3, UINT64_MAX }, w[4];
		unsigned char b[40];
		size_t n = reader_pack(b, v, 4, 0);
		ok(reader_unpack(b, w, 4) == b + n && !memcmp(v, w, sizeof v), "reader_pack plain");
		n = reader_pack(b, v, 4, 1);
		ok(n > 4 && n <= 40, "reader_pack deltas: %zu bytes", n);
	}

	/* Every truncation is rejected with a message. */
	for (size_t n = 0; n < len; n++) {
		err[0] = 0;
		if (reader_parse(buf, n, &p, err, sizeof(err)) == 0)
			break;
		if (!err[0])
			break;
		rejected++;
	}
	is_int(rejected, len, "all %zu truncations rejected with a reason", len);

	/* Every single flipped byte is rejected (checksums, magic, lengths),
	 * and nothing crashes or leaks (run under ASan with SANITIZE=). */
	copy = malloc(len);
	rejected = 0;
	for (size_t i = 0; i < len; i++) {
		memcpy(copy, buf, len);
		copy[i] ^= 0x5a;
		if (reader_parse(copy, len, &p, err, sizeof(err)) == 0) {
			crashed_not = 0;
			reader_release(&p);
		} else {
			rejected++;
		}
	}
	ok(crashed_not, "every flipped byte is rejected (%d of %zu)", rejected, len);

	memcpy(copy, buf, len);
	copy[8] = 9;
	ok(reader_parse(copy, len, &p, err, sizeof(err)) < 0 && strstr(err, "version 9"),
	   "wrong version named: %s", err);
	ok(reader_parse((const unsigned char *)"hello world, not a profile at all", 33, &p, err,
			sizeof(err)) < 0 && strstr(err, "magic"),
	   "garbage: %s", err);
	ok(reader_parse(buf, 0, &p, err, sizeof(err)) < 0 && strstr(err, "empty"), "empty: %s", err);
	ok(reader_load("/nonexistent/mprof.data", &p, err, sizeof(err)) < 0 && strstr(err, "No such"),
	   "missing file: %s", err);
	free(copy);
	free(buf);

	/* THREADS: a thread id per stack; a count that is not the stacks'
	 * is corrupt. */
	len = encode_with(&buf, 3);
	ok(reader_parse(buf, len, &p, err, sizeof(err)) == 0 && p.has_threads &&
		   p.stacks[0].tid == 1000 && p.stacks[2].tid == 1002,
	   "threads section: a tid per stack");
	reader_release(&p);
	free(buf);
	len = encode_with(&buf, 4);
	ok(reader_parse(buf, len, &p, err, sizeof(err)) < 0 && strstr(err, "4 threads for 3 stacks"),
	   "threads section with the wrong count: %s", err);
	free(buf);

	/* Version 1 (flat stacks) still reads. */
	len = encode_v(&buf, 2, 1);
	ok(reader_parse(buf, len, &p, err, sizeof(err)) == 0 && p.version == 1 &&
		   p.nstacks == 2 && reader_own(&p, 1, 0, f) == 3 && f[2] == 0x1100 + 32 + 1 &&
		   reader_counts(&p, 1, c)[5] == 105 && p.stacks[1].tid == 1001,
	   "version 1 file: %s", err[0] ? err : "read");
	reader_release(&p);
	free(buf);

	/* Packed stacks the checksum cannot vouch for. */
	len = encode_stacks(&buf, put_badref);
	ok(reader_parse(buf, len, &p, err, sizeof(err)) < 0 && strstr(err, "stack 1"),
	   "a reference past the first stack: %s", err);
	free(buf);
	len = encode_stacks(&buf, put_badshare);
	ok(reader_parse(buf, len, &p, err, sizeof(err)) < 0 && strstr(err, "shares 4 frames"),
	   "sharing more frames than there are: %s", err);
	free(buf);
	len = encode_stacks(&buf, put_chain);
	ok(reader_parse(buf, len, &p, err, sizeof(err)) == 0 && chain_ok(&p),
	   "references resolved through chains of %d stacks: %s", CHAIN, err[0] ? err : "frames right");
	reader_release(&p);
	free(buf);
	for (int last = 0; last < 2; last++)
		for (badvar_len = 10; badvar_len <= 11; badvar_len++) {
			badvar_last = last;
			len = encode_stacks(&buf, put_badvar);
			err[0] = 0;
			ok(reader_parse(buf, len, &p, err, sizeof(err)) < 0 &&
				   strstr(err, "bad variable-length number"),
			   "a counter of %d bytes%s: %s", badvar_len, last ? ", at the end" : "", err);
			free(buf);
		}
	len = encode_stacks(&buf, put_bomb);
	ok(reader_parse(buf, len, &p, err, sizeof(err)) < 0 && strstr(err, "would hold more"),
	   "%zu bytes that would decode to 160M values: %s", len, err);
	free(buf);

	test_crc();
	test_put_stack(MPROF_NCOUNTERS_ALL);
	test_put_stack(MPROF_NCOUNTERS_SCAN);
	test_put_stack(5);
	test_timeline();
	return tap_done();
}
