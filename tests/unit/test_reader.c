/*
 * test_reader.c - the codec round trip, and the reader against hostile
 * input: every truncation, every flipped byte, wrong magic/version/kind.
 */
#include "format.h"
#include "reader.h"
#include "tap.h"

#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

/* Encode a small mprof file into memory; returns its length.  nthreads >= 0
 * adds a THREADS section of that many entries (2 is right). */
static size_t encode_with(unsigned char **out, int nthreads)
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
	format_put_u64(&w, 2);
	for (int s = 0; s < 2; s++) {
		format_put_u32(&w, 3);
		format_put_u32(&w, s ? FORMAT_STACK_TRUNCATED : 0);
		for (int d = 0; d < 3; d++)
			format_put_u64(&w, 0x1100 + 16 * d + s);
		for (int i = 0; i < MPROF_NCOUNTERS; i++)
			format_put_u64(&w, (uint64_t)(i + 100 * s));
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
	len = lseek(fd, 0, SEEK_END);
	*out = malloc((size_t)len);
	if (pread(fd, *out, (size_t)len, 0) != len)
		return 0;
	close(fd);
	return (size_t)len;
}

static size_t encode(unsigned char **out)
{
	return encode_with(out, -1);
}

int main(void)
{
	unsigned char *buf = NULL, *copy;
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
	is_int(p.nstacks, 2, "two stacks");
	is_int(p.stacks[1].frames[2], 0x1100 + 32 + 1, "frame value");
	is_int(p.stacks[1].counts[5], 105, "counter value");
	is_int(p.stacks[1].flags, FORMAT_STACK_TRUNCATED, "stack flags");
	is_int(p.nbins, 1, "one bin");
	is_int(p.bins[0].freed, 816, "bin bytes freed");
	reader_release(&p);

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
	len = encode_with(&buf, 2);
	ok(reader_parse(buf, len, &p, err, sizeof(err)) == 0 && p.has_threads &&
		   p.stacks[0].tid == 1000 && p.stacks[1].tid == 1001,
	   "threads section: a tid per stack");
	reader_release(&p);
	free(buf);
	len = encode_with(&buf, 3);
	ok(reader_parse(buf, len, &p, err, sizeof(err)) < 0 && strstr(err, "3 threads for 2 stacks"),
	   "threads section with the wrong count: %s", err);
	free(buf);
	return tap_done();
}
