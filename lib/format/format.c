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
	"peak_bytes", "peak_objects", "temp_objects", "temp_bytes",
	"lost_bytes", "lost_objects", "indirect_bytes", "indirect_objects",
	"possible_bytes", "possible_objects", "reachable_bytes", "reachable_objects",
};

const char *const format_mprof_counter_units[MPROF_NCOUNTERS_SCAN] = {
	"count", "count", "count", "count", "bytes", "bytes", "bytes", "bytes",
	"count", "count", "count", "count", "bytes", "bytes", "bytes", "bytes",
	"bytes", "count", "count", "bytes",
	"bytes", "count", "bytes", "count", "bytes", "count", "bytes", "count",
};

/*
 * CRC-32 (IEEE 802.3, reflected, polynomial 0xEDB88320).  Two ways, one
 * result:
 *
 * - slicing by 8: eight bytes per step through eight 256-entry tables
 *   (~3 instructions a byte; a 270 MB file checks in a fraction of a
 *   second), and the bytes the other way leaves over;
 * - folding with carry-less multiplication (PCLMULQDQ, every x86-64 CPU
 *   since 2010, checked with CPUID), after Intel's "Fast CRC Computation
 *   for Generic Polynomials Using PCLMULQDQ Instruction" (Gopal et al.,
 *   2009): 64 bytes a step in four 128-bit lanes, about a third of an
 *   instruction a byte.  The save checksums every byte of its file, some
 *   30 bytes a stack: the tables cost 86 instructions a stack of the
 *   save's 944 (issue 23), folding about 10.
 *
 * The tables are built on first use, and the CPU asked then; two threads
 * racing to build them write the same values, and the flag is published
 * with a release store after the tables are complete.
 */
static uint32_t crc_tab[8][256];
static int crc_ready;

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#include <immintrin.h>
#define CRC_FOLD 1
static int crc_fold_ok;

/*
 * The paper's constants for the reflected polynomial: x^n mod P(x),
 * bit-reflected, times x (the carry-less product of two reflected values
 * comes out one bit short); r = 0x80000000, then n times r = r >> 1 ^
 * (r & 1 ? 0xEDB88320 : 0), gives r << 1.  A 128-bit lane moves 512 bits
 * on with n = 512 + 32 for its low half (the earlier bytes) and 512 - 32
 * for its high half, 128 bits on with 128 +- 32; the last 64 bits fold to
 * 32 with n = 64.  tests/unit/test_reader.c checks the result against the
 * bitwise definition on every length and alignment to 300 bytes.
 */
static const uint64_t crc_k512[2] = { 0x154442bd4, 0x1c6e41596 }; /* x^(512+32), x^(512-32) */
static const uint64_t crc_k128[2] = { 0x1751997d0, 0x0ccaa009e }; /* x^(128+32), x^(128-32) */
static const uint64_t crc_k64 = 0x163cd6124;                     /* x^64 */
/* Barrett reduction of 64 bits to 32: P(x) and floor(x^64 / P(x)), reflected. */
static const uint64_t crc_barrett[2] = { 0x1db710641, 0x1f7011641 };

/* A lane folded by the constants k (low half by k[0], high by k[1]) onto next. */
__attribute__((target("pclmul,sse2"))) static inline __m128i fold(__m128i x, __m128i k,
								   __m128i next)
{
	__m128i lo = _mm_clmulepi64_si128(x, k, 0x00), hi = _mm_clmulepi64_si128(x, k, 0x11);

	return _mm_xor_si128(_mm_xor_si128(lo, hi), next);
}

/*
 * The state crc (not inverted: as format_crc32 keeps it inside) after
 * p[0..len), len >= 64 and a multiple of 16.
 */
__attribute__((target("pclmul,sse2"))) static uint32_t crc_fold(uint32_t crc,
								const unsigned char *p,
								size_t len)
{
	const __m128i k512 = _mm_loadu_si128((const __m128i *)crc_k512);
	const __m128i k128 = _mm_loadu_si128((const __m128i *)crc_k128);
	const __m128i low32 = _mm_set_epi32(0, -1, 0, -1);
	__m128i a, b, c, d, t;

	/* The state joins the message: a CRC from state s over m is the CRC
	 * from state 0 over m with s xored into its first four bytes. */
	a = _mm_xor_si128(_mm_loadu_si128((const __m128i *)p), _mm_cvtsi32_si128((int)crc));
	b = _mm_loadu_si128((const __m128i *)(p + 16));
	c = _mm_loadu_si128((const __m128i *)(p + 32));
	d = _mm_loadu_si128((const __m128i *)(p + 48));
	for (p += 64, len -= 64; len >= 64; p += 64, len -= 64) {
		a = fold(a, k512, _mm_loadu_si128((const __m128i *)p));
		b = fold(b, k512, _mm_loadu_si128((const __m128i *)(p + 16)));
		c = fold(c, k512, _mm_loadu_si128((const __m128i *)(p + 32)));
		d = fold(d, k512, _mm_loadu_si128((const __m128i *)(p + 48)));
	}
	/* Four lanes into one, then the 16-byte blocks left. */
	a = fold(a, k128, b);
	a = fold(a, k128, c);
	a = fold(a, k128, d);
	for (; len; p += 16, len -= 16)
		a = fold(a, k128, _mm_loadu_si128((const __m128i *)p));
	/* 128 bits to 64: the low half moved 64 bits on, onto the high. */
	t = _mm_clmulepi64_si128(a, k128, 0x10);
	a = _mm_xor_si128(_mm_srli_si128(a, 8), t);
	/* 64 to 32 + 32: the low 32 bits moved 32 on (x^64: the product is
	 * one bit short), onto the rest. */
	t = _mm_srli_si128(a, 4);
	a = _mm_clmulepi64_si128(_mm_and_si128(a, low32), _mm_cvtsi64_si128((long long)crc_k64),
				 0x00);
	a = _mm_xor_si128(a, t);
	/* Barrett: q = floor(a's low 32 * mu), the remainder a - q * P, in
	 * the upper half of the low 64 bits. */
	t = _mm_loadu_si128((const __m128i *)crc_barrett);
	b = _mm_clmulepi64_si128(_mm_and_si128(a, low32), t, 0x10);
	b = _mm_clmulepi64_si128(_mm_and_si128(b, low32), t, 0x00);
	a = _mm_xor_si128(a, b);
	return (uint32_t)_mm_cvtsi128_si32(_mm_srli_si128(a, 4));
}
#endif

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
#ifdef CRC_FOLD
	{
		unsigned int a, b, c, d;

		crc_fold_ok = __get_cpuid(1, &a, &b, &c, &d) && (c & bit_PCLMUL) && (d & bit_SSE2);
	}
#endif
	__atomic_store_n(&crc_ready, 1, __ATOMIC_RELEASE);
}

uint32_t format_crc32(uint32_t crc, const void *buf, size_t len)
{
	const unsigned char *p = buf;

	if (!__atomic_load_n(&crc_ready, __ATOMIC_ACQUIRE))
		crc_init();
	crc = ~crc;
#ifdef CRC_FOLD
	if (len >= 64 && crc_fold_ok) {
		crc = crc_fold(crc, p, len & ~(size_t)15);
		p += len & ~(size_t)15;
		len &= 15;
	}
#endif
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

/*
 * LEB128 at p (at most 10 bytes); returns the byte after.  Most values of
 * a profile are below 128 (counters, the deltas between frames of one
 * function): one store and a branch not taken.
 */
static inline unsigned char *uvar(unsigned char *p, uint64_t v)
{
	if (__builtin_expect(v < 0x80, 1)) {
		*p = (unsigned char)v;
		return p + 1;
	}
	/* Two bytes a step: a stack's first frame is a whole address. */
	while (v >= 0x4000) {
		p[0] = (unsigned char)(v | 0x80);
		p[1] = (unsigned char)(v >> 7 | 0x80);
		p += 2;
		v >>= 14;
	}
	if (v >= 0x80) {
		*p++ = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	*p++ = (unsigned char)v;
	return p;
}

static inline uint64_t zigzag(int64_t d)
{
	return (uint64_t)d << 1 ^ (uint64_t)(d >> 63);
}

#define UVAR_MAX 10

#ifdef __SSE2__
#include <emmintrin.h>
/*
 * Counters that are all below 128 (most of a stack's are zero or small: a
 * stack met once holds one allocation of its size, and one free) as
 * one-byte LEB128s, 16 or 8 at once: each value its 64-bit lane's low 32
 * bits, the high ones zero, so packing 32 to 16 bits twice leaves them in
 * order, then to bytes.  Writes 16 (8) bytes at p, or nothing and returns
 * 0 if a value is larger.  About 30 instructions for 16 where a value at
 * a time took 140.
 */
#define SMALL_MASK _mm_set1_epi64x(~(long long)0x7f)
#define LOADV(v, k) _mm_loadu_si128((const __m128i *)(v) + (k))

static inline int all_zero(__m128i x)
{
	return _mm_movemask_epi8(_mm_cmpeq_epi32(x, _mm_setzero_si128())) == 0xffff;
}

static inline int put_small16(unsigned char *p, const uint64_t *v)
{
	__m128i a = LOADV(v, 0), b = LOADV(v, 1), c = LOADV(v, 2), d = LOADV(v, 3);
	__m128i e = LOADV(v, 4), f = LOADV(v, 5), g = LOADV(v, 6), h = LOADV(v, 7);

	if (!all_zero(_mm_and_si128(_mm_or_si128(_mm_or_si128(_mm_or_si128(a, b), _mm_or_si128(c, d)),
						 _mm_or_si128(_mm_or_si128(e, f), _mm_or_si128(g, h))),
				    SMALL_MASK)))
		return 0;
	a = _mm_packs_epi32(_mm_packs_epi32(a, b), _mm_packs_epi32(c, d));
	e = _mm_packs_epi32(_mm_packs_epi32(e, f), _mm_packs_epi32(g, h));
	_mm_storeu_si128((__m128i *)p, _mm_packus_epi16(a, e));
	return 1;
}

static inline int put_small8(unsigned char *p, const uint64_t *v)
{
	__m128i a = LOADV(v, 0), b = LOADV(v, 1), c = LOADV(v, 2), d = LOADV(v, 3);

	if (!all_zero(_mm_and_si128(_mm_or_si128(_mm_or_si128(a, b), _mm_or_si128(c, d)), SMALL_MASK)))
		return 0;
	a = _mm_packs_epi32(_mm_packs_epi32(a, b), _mm_packs_epi32(c, d));
	_mm_storel_epi64((__m128i *)p, _mm_packus_epi16(a, a));
	return 1;
}
#endif

/* A stack longer than the whole buffer can hold at worst: staged in a
 * small buffer, one emit per 500-odd bytes. */
static void put_stack_staged(struct format_writer *w, uint32_t depth, uint32_t flags,
			     uint64_t ref, uint32_t shared, const uint64_t *own,
			     const uint64_t *counts, uint32_t ncounts)
{
	unsigned char b[512], *p = b, *end = b + sizeof b - UVAR_MAX;
	uint64_t prev = 0;
	uint32_t i;

	p = uvar(p, depth);
	p = uvar(p, flags);
	p = uvar(p, ref);
	if (ref)
		p = uvar(p, shared);
	for (i = 0; i < depth - shared; i++) {
		p = uvar(p, zigzag((int64_t)(own[i] - prev)));
		prev = own[i];
		if (p > end) {
			emit(w, b, (size_t)(p - b));
			p = b;
		}
	}
	for (i = 0; i < ncounts; i++) {
		p = uvar(p, counts[i]);
		if (p > end) {
			emit(w, b, (size_t)(p - b));
			p = b;
		}
	}
	emit(w, b, (size_t)(p - b));
}

/*
 * Encoded straight into the writer's buffer (flushed first if the stack
 * might not fit): the save writes one entry per distinct stack, and going
 * through a staging buffer and emit's copy cost a third of its encoding.
 */
static inline __attribute__((always_inline)) void
put_stack(struct format_writer *w, uint32_t depth, uint32_t flags, uint64_t ref, uint32_t shared,
	  const uint64_t *own, const uint64_t *counts, uint32_t ncounts)
{
	unsigned char *p, *start;
	uint64_t prev = 0;
	size_t most;
	uint32_t i, n;

	if (!ref)
		shared = 0;
	if (w->error)
		return;
	n = depth - shared;
	most = (4 + (size_t)n + ncounts) * UVAR_MAX;
	if (__builtin_expect(most > w->cap - w->len, 0)) {
		flush(w);
		if (most > w->cap) {
			put_stack_staged(w, depth, flags, ref, shared, own, counts, ncounts);
			return;
		}
	}
	start = p = w->buf + w->len;
	if ((depth | flags | ref | shared) < 0x80) { /* most stacks: a byte each */
		/* shared's byte is past the entry when ref is 0: room to spare */
		uint32_t h = depth | flags << 8 | (uint32_t)ref << 16 | shared << 24;

		p[0] = (unsigned char)h; /* little-endian, one store (GCC merges them) */
		p[1] = (unsigned char)(h >> 8);
		p[2] = (unsigned char)(h >> 16);
		p[3] = (unsigned char)(h >> 24);
		p += ref ? 4 : 3;
	} else {
		p = uvar(p, depth);
		p = uvar(p, flags);
		p = uvar(p, ref);
		if (ref)
			p = uvar(p, shared);
	}
	for (i = 0; i < n; i++) {
		p = uvar(p, zigzag((int64_t)(own[i] - prev)));
		prev = own[i];
	}
	i = 0;
#ifdef __SSE2__
	if (ncounts >= 16 && put_small16(p, counts)) {
		p += 16;
		i = 16;
	}
	for (; i + 8 <= ncounts; i += 8) {
		if (put_small8(p, counts + i)) {
			p += 8;
			continue;
		}
		for (n = i; n < i + 8; n++)
			p = uvar(p, counts[n]);
	}
#endif
	for (; i + 2 <= ncounts; i += 2) { /* the peak's two after the 16 */
		if ((counts[i] | counts[i + 1]) < 0x80) {
			p[0] = (unsigned char)counts[i];
			p[1] = (unsigned char)counts[i + 1];
			p += 2;
		} else {
			p = uvar(p, counts[i]);
			p = uvar(p, counts[i + 1]);
		}
	}
	if (i < ncounts)
		p = uvar(p, counts[i]);
	w->len += (size_t)(p - start);
	if (w->in_section)
		w->sec_len += (size_t)(p - start); /* checksummed at flush or section end */
}

void format_put_tl_point(struct format_writer *w, uint64_t ns, int64_t live, int64_t objects,
			 uint64_t allocated, uint32_t flags, uint32_t ntop,
			 const struct format_tl_top *top)
{
	format_put_u64(w, ns);
	format_put_u64(w, live > 0 ? (uint64_t)live : 0);
	format_put_u64(w, objects > 0 ? (uint64_t)objects : 0);
	format_put_u64(w, allocated);
	format_put_u32(w, flags);
	format_put_u32(w, ntop);
	for (uint32_t k = 0; k < ntop; k++) {
		format_put_u32(w, top[k].slot);
		format_put_u64(w, top[k].bytes > 0 ? (uint64_t)top[k].bytes : 0);
	}
}

void format_put_stack(struct format_writer *w, uint32_t depth, uint32_t flags, uint64_t ref,
		      uint32_t shared, const uint64_t *own, const uint64_t *counts,
		      uint32_t ncounts)
{
	put_stack(w, depth, flags, ref, shared, own, counts, ncounts);
}

void format_put_stacks(struct format_writer *w, const struct format_stack *s, size_t n,
		       uint32_t ncounts)
{
	if (ncounts == MPROF_NCOUNTERS_ALL) /* mprof's: the counters' loops unrolled */
		for (; n; n--, s++)
			put_stack(w, s->depth, s->flags, s->ref, s->shared, s->own, s->counts,
				  MPROF_NCOUNTERS_ALL);
	else
		for (; n; n--, s++)
			put_stack(w, s->depth, s->flags, s->ref, s->shared, s->own, s->counts,
				  ncounts);
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
