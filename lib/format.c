/*
 * format.c - the profile data file encoder, and the CRC both sides use.
 *
 * Compiled into the runtime (it runs inside the profiled program's exit path
 * and autosaves) and into the tools.  Hence: no allocation, no stdio, only
 * write(2) and pwrite(2) on a caller-provided buffer.  The layout is in
 * format.h and doc/format.md.
 */
#include "format.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

const char *const format_mprof_counter_names[MPROF_NCOUNTERS_SCAN] = {
	"allocs.s", "allocs.m", "allocs.l", "allocs.x",
	"bytes.s",  "bytes.m",  "bytes.l",  "bytes.x",
	"frees.s",  "frees.m",  "frees.l",  "frees.x",
	"freed.s",  "freed.m",  "freed.l",  "freed.x",
	"peak_bytes", "peak_objects",
	"lost_bytes", "lost_objects", "indirect_bytes", "indirect_objects",
	"possible_bytes", "possible_objects", "reachable_bytes", "reachable_objects",
};

const char *const format_mprof_counter_units[MPROF_NCOUNTERS_SCAN] = {
	"count", "count", "count", "count", "bytes", "bytes", "bytes", "bytes",
	"count", "count", "count", "count", "bytes", "bytes", "bytes", "bytes",
	"bytes", "count",
	"bytes", "count", "bytes", "count", "bytes", "count", "bytes", "count",
};

/*
 * CRC-32 (IEEE 802.3, reflected, polynomial 0xEDB88320), slicing by 8: eight
 * bytes per step through eight 256-entry tables (~1 byte per cycle; a 270 MB
 * file checks in a fraction of a second).  The tables are built on first use;
 * two threads racing to build them write the same values, and the flag is
 * published with a release store after the tables are complete.
 */
static uint32_t crc_tab[8][256];
static int crc_ready;

static void crc_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1)));
		crc_tab[0][i] = c;
	}
	for (uint32_t i = 0; i < 256; i++)
		for (int t = 1; t < 8; t++)
			crc_tab[t][i] = (crc_tab[t - 1][i] >> 8) ^ crc_tab[0][crc_tab[t - 1][i] & 0xff];
	__atomic_store_n(&crc_ready, 1, __ATOMIC_RELEASE);
}

uint32_t format_crc32(uint32_t crc, const void *buf, size_t len)
{
	const unsigned char *p = buf;

	if (!__atomic_load_n(&crc_ready, __ATOMIC_ACQUIRE))
		crc_init();
	crc = ~crc;
	while (len >= 8) {
		uint32_t lo = crc ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
				     (uint32_t)p[3] << 24);
		crc = crc_tab[7][lo & 0xff] ^ crc_tab[6][(lo >> 8) & 0xff] ^
		      crc_tab[5][(lo >> 16) & 0xff] ^ crc_tab[4][lo >> 24] ^ crc_tab[3][p[4]] ^
		      crc_tab[2][p[5]] ^ crc_tab[1][p[6]] ^ crc_tab[0][p[7]];
		p += 8;
		len -= 8;
	}
	while (len--)
		crc = (crc >> 8) ^ crc_tab[0][(crc ^ *p++) & 0xff];
	return ~crc;
}

static void le32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static void le64(unsigned char *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static void fail(struct format_writer *w, int err)
{
	if (!w->error)
		w->error = err ? err : EIO;
}

static void flush(struct format_writer *w)
{
	size_t done = 0;

	/* The section's bytes in the buffer go into its checksum in one run
	 * (per 8-byte value it cost more than the rest of the save). */
	if (w->in_section && w->len > w->crc_from)
		w->crc = format_crc32(w->crc, w->buf + w->crc_from, w->len - w->crc_from);
	w->crc_from = 0;

	while (!w->error && done < w->len) {
		ssize_t n = write(w->fd, w->buf + done, w->len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			fail(w, n < 0 ? errno : EIO);
			break;
		}
		done += (size_t)n;
	}
	w->off += w->len;
	w->len = 0;
}

static int pwrite_all(struct format_writer *w, const unsigned char *p, size_t n, uint64_t off)
{
	while (n) {
		ssize_t k = pwrite(w->fd, p, n, (off_t)off);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			fail(w, k < 0 ? errno : EIO);
			return -1;
		}
		p += k;
		n -= (size_t)k;
		off += (uint64_t)k;
	}
	return 0;
}

/* Raw output, outside or inside a section. */
static void emit(struct format_writer *w, const void *p, size_t n)
{
	const unsigned char *s = p;

	if (w->error)
		return;
	if (w->in_section)
		w->sec_len += n; /* checksummed at flush or section end */
	while (n) {
		size_t room = w->cap - w->len, k = n < room ? n : room;
		memcpy(w->buf + w->len, s, k);
		w->len += k;
		s += k;
		n -= k;
		if (w->len == w->cap)
			flush(w);
	}
}

void format_writer_init(struct format_writer *w, int fd, void *buf, size_t cap, uint32_t kind)
{
	unsigned char h[FORMAT_HEADER_LEN] = { 0 };

	memset(w, 0, sizeof(*w));
	w->fd = fd;
	w->buf = buf;
	w->cap = cap;
	w->kind = kind;
	if (!buf || cap < 64) {
		fail(w, EINVAL);
		return;
	}
	/* Placeholder: nsections and length are patched by finish(). */
	memcpy(h, FORMAT_MAGIC, FORMAT_MAGIC_LEN);
	le32(h + 8, FORMAT_VERSION);
	le32(h + 12, kind);
	emit(w, h, sizeof(h));
}

void format_begin_section(struct format_writer *w, uint32_t type)
{
	unsigned char h[FORMAT_SECTION_HEADER_LEN] = { 0 };

	if (w->error)
		return;
	if (w->in_section) {
		fail(w, EINVAL);
		return;
	}
	w->sec_start = w->off + w->len;
	w->sec_type = type;
	le32(h, type);
	emit(w, h, sizeof(h));
	w->in_section = 1;
	w->sec_len = 0;
	/* The checksum covers the type too, so a flipped type is noticed. */
	w->crc = format_crc32(0, h, 4);
	w->crc_from = w->len;
}

void format_put_u32(struct format_writer *w, uint32_t v)
{
	unsigned char b[4];

	le32(b, v);
	emit(w, b, 4);
}

void format_put_u64(struct format_writer *w, uint64_t v)
{
	unsigned char b[8];

	le64(b, v);
	emit(w, b, 8);
}

void format_put_u64s(struct format_writer *w, const uint64_t *v, size_t n)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	emit(w, v, n * sizeof *v);
#else
	for (size_t i = 0; i < n; i++)
		format_put_u64(w, v[i]);
#endif
}

/* LEB128 into b; returns the bytes used (at most 10). */
static int uvar(unsigned char *b, uint64_t v)
{
	int n = 0;

	do {
		b[n] = (unsigned char)(v & 0x7f);
		v >>= 7;
		if (v)
			b[n] |= 0x80;
		n++;
	} while (v);
	return n;
}

void format_put_stack(struct format_writer *w, uint32_t depth, uint32_t flags, uint64_t ref,
		      uint32_t shared, const uint64_t *own, const uint64_t *counts,
		      uint32_t ncounts)
{
	/* Staged in a small buffer: one emit per 400-odd bytes, not per value. */
	unsigned char b[512];
	size_t len = 0;
	uint64_t prev = 0;
	uint32_t i;

	if (!ref)
		shared = 0;
	len += (size_t)uvar(b + len, depth);
	len += (size_t)uvar(b + len, flags);
	len += (size_t)uvar(b + len, ref);
	if (ref)
		len += (size_t)uvar(b + len, shared);
	for (i = 0; i < depth - shared; i++) {
		int64_t d = (int64_t)(own[i] - prev);
		len += (size_t)uvar(b + len, (uint64_t)d << 1 ^ (uint64_t)(d >> 63));
		prev = own[i];
		if (len > sizeof b - 10) {
			emit(w, b, len);
			len = 0;
		}
	}
	for (i = 0; i < ncounts; i++) {
		len += (size_t)uvar(b + len, counts[i]);
		if (len > sizeof b - 10) {
			emit(w, b, len);
			len = 0;
		}
	}
	emit(w, b, len);
}

uint32_t format_common_outer(const uint64_t *a, uint32_t na, const uint64_t *b, uint32_t nb)
{
	uint32_t n = 0;

	while (n < na && n < nb && a[na - 1 - n] == b[nb - 1 - n])
		n++;
	return n;
}

void format_put_bytes(struct format_writer *w, const void *p, size_t n)
{
	emit(w, p, n);
}

void format_put_blob(struct format_writer *w, const void *p, uint32_t n)
{
	format_put_u32(w, n);
	emit(w, p, n);
}

void format_put_str(struct format_writer *w, const char *s)
{
	size_t n = s ? strlen(s) : 0;

	if (n > FORMAT_MAX_STRING)
		n = FORMAT_MAX_STRING;
	format_put_blob(w, s, (uint32_t)n);
}

void format_end_section(struct format_writer *w)
{
	unsigned char h[FORMAT_SECTION_HEADER_LEN] = { 0 };

	if (w->error)
		return;
	if (!w->in_section) {
		fail(w, EINVAL);
		return;
	}
	if (w->len > w->crc_from)
		w->crc = format_crc32(w->crc, w->buf + w->crc_from, w->len - w->crc_from);
	w->crc_from = w->len;
	w->in_section = 0;
	le32(h, w->sec_type);
	le64(h + 8, w->sec_len);
	le32(h + 16, w->crc);
	if (w->sec_start >= w->off) {
		/* The header is still in the buffer: patch it there. */
		memcpy(w->buf + (w->sec_start - w->off), h, sizeof(h));
	} else {
		/* Part of it may still sit in the buffer: flush first, so the
		 * placeholder is not written over the patch. */
		flush(w);
		pwrite_all(w, h, sizeof(h), w->sec_start);
	}
	w->nsections++;
}

int format_writer_finish(struct format_writer *w)
{
	unsigned char h[16];

	if (w->in_section)
		fail(w, EINVAL);
	flush(w);
	if (w->error)
		return -w->error;
	le32(h, w->nsections);
	le32(h + 4, 0);
	le64(h + 8, w->off);
	/* nsections at offset 16, reserved at 20, length at 24. */
	if (pwrite_all(w, h, 4, 16) || pwrite_all(w, h + 8, 8, 24))
		return -w->error;
	return 0;
}
