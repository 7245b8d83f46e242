/*
 * reader.c - decode a profile data file into a struct profile, checking
 * everything (doc/format.md).  The counterpart of the encoder in format.c.
 *
 * The whole file is in memory first, mapped (or copied): files are small
 * (they grow with distinct stacks, not run length), and checking a buffer
 * is simpler and safer than checking a stream.  Frames are decoded from
 * the file's bytes when asked for; the pages each pass is done with go
 * back to the kernel, so a large file costs its stacks' index and their
 * counters, not its size.  A cursor never reads past its end; every
 * count is checked against the bytes left before anything is allocated for
 * it, so a corrupt count cannot make us allocate gigabytes.
 */
#include "read/reader.h"
#include "read/reader_int.h"
#include "base/escape.h"
#include "format/format.h"
#include "base/util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>


struct cur {
	const unsigned char *p;
	size_t left;
	int bad;
	const char *what; /* the section being read, for messages */
	char *err;
	size_t errlen;
};

static void seterr(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void seterr(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

static int need(struct cur *c, size_t n)
{
	if (c->bad)
		return 0;
	if (n > c->left) {
		seterr(c->err, c->errlen, "corrupt %s section: needs %zu more bytes, %zu left",
		       c->what, n, c->left);
		c->bad = 1;
		return 0;
	}
	return 1;
}

static uint32_t get32(struct cur *c)
{
	uint32_t v = 0;

	if (!need(c, 4))
		return 0;
	for (int i = 0; i < 4; i++)
		v |= (uint32_t)c->p[i] << (8 * i);
	c->p += 4;
	c->left -= 4;
	return v;
}

static uint64_t get64(struct cur *c)
{
	uint64_t v = 0;

	if (!need(c, 8))
		return 0;
	for (int i = 0; i < 8; i++)
		v |= (uint64_t)c->p[i] << (8 * i);
	c->p += 8;
	c->left -= 8;
	return v;
}

/* A LEB128 value (at most 10 bytes, no bits beyond 64). */
static uint64_t getuvar(struct cur *c)
{
	uint64_t v = 0;

	/* Far from the end (most are): no byte to check on the way. */
	if (c->left >= 10 && !c->bad) {
		const unsigned char *b = c->p;
		for (int i = 0; i < 10; i++) {
			if (i == 9 && b[i] > 1)
				break;
			v |= (uint64_t)(b[i] & 0x7f) << (7 * i);
			if (!(b[i] & 0x80)) {
				c->p += i + 1;
				c->left -= (size_t)i + 1;
				return v;
			}
		}
		seterr(c->err, c->errlen, "corrupt %s section: bad variable-length number", c->what);
		c->bad = 1;
		return 0;
	}
	for (int i = 0; i < 10; i++) {
		if (!need(c, 1))
			return 0;
		uint8_t b = *c->p++;
		c->left--;
		if (i == 9 && b > 1)
			break;
		v |= (uint64_t)(b & 0x7f) << (7 * i);
		if (!(b & 0x80))
			return v;
	}
	seterr(c->err, c->errlen, "corrupt %s section: bad variable-length number", c->what);
	c->bad = 1;
	return 0;
}

/* n LEB128 values checked as getuvar checks them, and passed: the
 * counters, copied as they are coded. */
static void skip_uvars(struct cur *c, size_t n)
{
	const unsigned char *b = c->p;

	if (c->bad || c->left / 10 < n) { /* near the end: one at a time */
		for (size_t k = 0; k < n && !c->bad; k++)
			getuvar(c);
		return;
	}
	for (size_t k = 0; k < n; k++) {
		size_t i = 0;

		while ((b[i] & 0x80) && i < 9)
			i++;
		if (i == 9 && b[9] > 1) {
			c->left -= (size_t)(b - c->p);
			c->p = b;
			getuvar(c); /* says why */
			return;
		}
		b += i + 1;
	}
	c->left -= (size_t)(b - c->p);
	c->p = b;
}

/* A u32-length byte string, copied and NUL-terminated. */
static char *getblob(struct cur *c, uint32_t *lenp)
{
	uint32_t n = get32(c);
	char *s;

	if (c->bad)
		return NULL;
	if (n > FORMAT_MAX_STRING) {
		seterr(c->err, c->errlen, "corrupt %s section: string of %u bytes", c->what, n);
		c->bad = 1;
		return NULL;
	}
	if (!need(c, n))
		return NULL;
	s = malloc((size_t)n + 1);
	if (!s) {
		seterr(c->err, c->errlen, "out of memory");
		c->bad = 1;
		return NULL;
	}
	memcpy(s, c->p, n);
	s[n] = 0;
	c->p += n;
	c->left -= n;
	if (lenp)
		*lenp = n;
	return s;
}

/* A count of items each at least min_size bytes: reject counts the
 * remaining bytes cannot hold, before allocating for them. */
static int count_fits(struct cur *c, uint64_t n, size_t min_size)
{
	if (c->bad)
		return 0;
	if (min_size && n > c->left / min_size) {
		seterr(c->err, c->errlen, "corrupt %s section: %llu entries cannot fit in %zu bytes",
		       c->what, (unsigned long long)n, c->left);
		c->bad = 1;
		return 0;
	}
	return 1;
}

static void *cur_calloc(struct cur *c, size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);

	if (!p) {
		seterr(c->err, c->errlen, "out of memory");
		c->bad = 1;
	}
	return p;
}

static void read_info(struct cur *c, struct profile *p)
{
	uint32_t n = get32(c);

	if (!count_fits(c, n, 8))
		return;
	p->info = cur_calloc(c, n, sizeof(*p->info));
	for (uint32_t i = 0; i < n && !c->bad; i++) {
		p->ninfo = i + 1;
		p->info[i].key = getblob(c, NULL);
		p->info[i].value = getblob(c, NULL);
	}
}

static const struct prof_module *sort_mods;

static int by_start(const void *a, const void *b)
{
	const struct prof_module *x = &sort_mods[*(const uint32_t *)a], *y = &sort_mods[*(const uint32_t *)b];

	return x->start < y->start ? -1 : x->start > y->start;
}

/*
 * No two modules may share an address: a process maps each object once, so
 * a file that lists one twice (or two over each other) is corrupt, and the
 * symbolizer must never be asked which of two modules holds an address.
 */
static void check_overlaps(struct cur *c, struct profile *p)
{
	uint32_t *order = cur_calloc(c, p->nmodules, sizeof(uint32_t)), last = 0;
	int have = 0;

	if (c->bad)
		return;
	for (uint32_t i = 0; i < p->nmodules; i++)
		order[i] = i;
	sort_mods = p->modules;
	qsort(order, p->nmodules, sizeof(uint32_t), by_start);
	for (size_t k = 0; k < p->nmodules; k++) {
		const struct prof_module *m = &p->modules[order[k]];
		if (m->start == m->end)
			continue; /* holds no address */
		if (have && m->start < p->modules[last].end) {
			seterr(c->err, c->errlen, "corrupt modules section: modules %u and %u overlap",
			       last < order[k] ? last : order[k], last < order[k] ? order[k] : last);
			c->bad = 1;
			break;
		}
		if (!have || m->end > p->modules[last].end)
			last = order[k];
		have = 1;
	}
	free(order);
}

static void read_modules(struct cur *c, struct profile *p)
{
	uint32_t n = get32(c);

	if (!count_fits(c, n, 40))
		return;
	p->modules = cur_calloc(c, n, sizeof(*p->modules));
	for (uint32_t i = 0; i < n && !c->bad; i++) {
		struct prof_module *m = &p->modules[i];
		p->nmodules = i + 1;
		m->start = get64(c);
		m->end = get64(c);
		m->bias = get64(c);
		m->offset = get64(c);
		m->path = getblob(c, NULL);
		m->build_id = (unsigned char *)getblob(c, &m->build_id_len);
		if (!c->bad && m->end < m->start) {
			seterr(c->err, c->errlen, "corrupt modules section: module %u ends before it starts", i);
			c->bad = 1;
		}
	}
	if (!c->bad)
		check_overlaps(c, p);
}

static void read_counters(struct cur *c, struct profile *p)
{
	uint32_t n = get32(c);

	if (c->bad)
		return;
	if (n > FORMAT_MAX_COUNTERS || !count_fits(c, n, 8)) {
		if (!c->bad)
			seterr(c->err, c->errlen, "corrupt counters section: %u counters", n);
		c->bad = 1;
		return;
	}
	p->counter_names = cur_calloc(c, n, sizeof(char *));
	p->counter_units = cur_calloc(c, n, sizeof(char *));
	for (uint32_t i = 0; i < n && !c->bad; i++) {
		p->ncounters = i + 1;
		p->counter_names[i] = getblob(c, NULL);
		p->counter_units[i] = getblob(c, NULL);
		/* Names the tools print as they are, in headers and messages,
		 * and a user types: no control characters. */
		if (!c->bad &&
		    (escape_needed(p->counter_names[i]) || escape_needed(p->counter_units[i]))) {
			seterr(c->err, c->errlen,
			       "corrupt counters section: counter %u holds a control character", i);
			c->bad = 1;
		}
	}
}

/* Frames and counters the stacks may hold, references followed: views
 * walk them, and `mprof dump` prints them.  256 per byte of the section
 * (more than the monitor's deepest shared stacks reach) and 2^30 in all
 * bound that work; memory follows the file whatever this is. */
static int within_cap(struct cur *c, const struct cur *start, uint64_t total)
{
	uint64_t cap = (uint64_t)start->left * 256 + (1u << 16);

	if (cap > FORMAT_MAX_VALUES)
		cap = FORMAT_MAX_VALUES;
	if (total <= cap)
		return 1;
	seterr(c->err, c->errlen,
	       "corrupt stacks section: its stacks would hold more than %llu frames and counters",
	       (unsigned long long)cap);
	c->bad = 1;
	return 0;
}

/* A slab that grows as coded values are appended; offsets into it stay
 * valid (pointers are made once it is whole). */
struct slab {
	unsigned char *b;
	size_t n, cap;
};

static unsigned char *slab_room(struct cur *c, struct slab *sl, size_t n)
{
	if (sl->n + n > sl->cap) {
		size_t cap = sl->cap ? sl->cap : 4096;
		unsigned char *b;
		while (cap < sl->n + n)
			cap *= 2;
		b = realloc(sl->b, cap);
		if (!b) {
			seterr(c->err, c->errlen, "out of memory");
			c->bad = 1;
			return NULL;
		}
		sl->b = b;
		sl->cap = cap;
	}
	return sl->b + sl->n;
}

/* The slab whole: its offsets, kept in own and cv, become pointers. */
static void slab_done(struct slab *sl, unsigned char **to)
{
	if (sl->b && sl->n < sl->cap) {
		unsigned char *b = realloc(sl->b, sl->n ? sl->n : 1);
		if (b)
			sl->b = b;
	}
	*to = sl->b;
}

#define AT(off) ((const unsigned char *)(uintptr_t)(off))
#define OFF(ptr) ((size_t)(uintptr_t)(ptr))

/* Version 1: u32 depth, u32 flags, u64 frames[depth], u64 counters[]:
 * coded as version 2 codes them, in slabs of the profile's own. */
static void read_stacks_flat(struct cur *c, struct profile *p, uint64_t n)
{
	struct slab fs = { 0 }, cs = { 0 };
	uint64_t v[FORMAT_MAX_COUNTERS > FORMAT_MAX_DEPTH ? FORMAT_MAX_COUNTERS : FORMAT_MAX_DEPTH];
	unsigned char *to;

	if (!count_fits(c, n, 8 + 8 * p->ncounters))
		return;
	p->stacks = cur_calloc(c, (size_t)n, sizeof(*p->stacks));
	for (uint64_t i = 0; i < n && !c->bad; i++) {
		struct prof_stack *s = &p->stacks[i];
		s->depth = get32(c);
		s->flags = get32(c);
		if (c->bad)
			break;
		if (s->depth > FORMAT_MAX_DEPTH) {
			seterr(c->err, c->errlen, "corrupt stacks section: stack %llu has depth %u",
			       (unsigned long long)i, s->depth);
			c->bad = 1;
			break;
		}
		if (!need(c, 8 * ((size_t)s->depth + p->ncounters)))
			break;
		p->nstacks = i + 1;
		p->nvalues += s->depth + p->ncounters;
		for (uint32_t d = 0; d < s->depth; d++)
			v[d] = get64(c);
		s->outer = s->depth ? v[s->depth - 1] : 0;
		if (!(to = slab_room(c, &fs, 10 * (size_t)s->depth)))
			break;
		s->own = AT(fs.n);
		s->own_len = (uint32_t)reader_pack(to, v, s->depth, 1);
		fs.n += s->own_len;
		for (size_t k = 0; k < p->ncounters; k++)
			v[k] = get64(c);
		if (!(to = slab_room(c, &cs, 10 * p->ncounters)))
			break;
		s->cv = AT(cs.n);
		cs.n += reader_pack(to, v, p->ncounters, 0);
	}
	slab_done(&fs, &p->fslab);
	slab_done(&cs, &p->cslab);
	for (size_t i = 0; i < p->nstacks; i++) {
		p->stacks[i].own = p->fslab + OFF(p->stacks[i].own);
		p->stacks[i].cv = p->cslab + OFF(p->stacks[i].cv);
	}
}

/* A stack's header in version 2: depth, flags, ref, shared, checked
 * against the stacks before it (their depths are known). */
static int packed_head(struct cur *c, struct profile *p, uint64_t i, uint64_t *ref,
		       uint32_t *shared)
{
	struct prof_stack *s = &p->stacks[i];
	uint64_t depth = getuvar(c), flags = getuvar(c), r = getuvar(c), sh = r ? getuvar(c) : 0;

	if (c->bad)
		return -1;
	if (depth > FORMAT_MAX_DEPTH || flags > UINT32_MAX || r > i ||
	    (r && (sh > depth || sh > p->stacks[i - r].depth))) {
		seterr(c->err, c->errlen,
		       "corrupt stacks section: stack %llu (depth %llu, shares %llu frames with "
		       "stack -%llu)",
		       (unsigned long long)i, (unsigned long long)depth, (unsigned long long)sh,
		       (unsigned long long)r);
		c->bad = 1;
		return -1;
	}
	s->depth = (uint32_t)depth;
	s->flags = (uint32_t)flags;
	*ref = r;
	*shared = (uint32_t)sh;
	return 0;
}

/*
 * Point stack i's shared frames at the stack whose own frames hold the
 * first of them.  Following references one by one could take 4096 steps
 * per stack (a chain of stacks each sharing one frame fewer); the
 * resolved references form a tree in which `shared` falls toward the
 * root, and a jump pointer per stack (Myers' skew-binary scheme: jump to
 * the parent's jump's jump when the two spans are equal, else to the
 * parent) finds the stack in O(log n) steps.  hops[] and jump[] live only
 * while the section is read.
 */
static void resolve_ref(struct profile *p, uint32_t i, uint32_t q, uint32_t sh, uint32_t *hops,
			uint32_t *jump)
{
	struct prof_stack *s = &p->stacks[i];

	while (sh && p->stacks[q].shared >= sh) {
		uint32_t j = jump[q];
		q = p->stacks[j].shared >= sh ? j : p->stacks[q].ref;
	}
	s->shared = sh;
	s->ref = sh ? q : 0;
	if (!sh) {
		hops[i] = 0;
		jump[i] = i;
		return;
	}
	hops[i] = hops[q] + 1;
	if (hops[q] - hops[jump[q]] == hops[jump[q]] - hops[jump[jump[q]]])
		jump[i] = jump[jump[q]];
	else
		jump[i] = q;
}

/*
 * Version 2 (format.h): varints, outer frames shared with an earlier stack.
 * One pass checks every entry and resolves its reference; the own frames
 * stay where they are in the file (checked, and their outermost value
 * kept), the counters are copied, coded, into the counter slab.  Shared
 * frames are never copied: see struct prof_stack.
 */
static void read_stacks_packed(struct cur *c, struct profile *p, uint64_t n)
{
	struct cur start;
	struct slab cs = { 0 };
	uint64_t ref, i;
	uint32_t shared, *hops, *jump;

	/* Each entry is at least 3 + ncounters bytes; refs are 32 bits. */
	if (!count_fits(c, n, 3 + p->ncounters))
		return;
	if (n >= UINT32_MAX) {
		seterr(c->err, c->errlen, "corrupt stacks section: %llu stacks", (unsigned long long)n);
		c->bad = 1;
		return;
	}
	p->stacks = cur_calloc(c, (size_t)n, sizeof(*p->stacks));
	hops = cur_calloc(c, (size_t)n, sizeof(uint32_t));
	jump = cur_calloc(c, (size_t)n, sizeof(uint32_t));
	start = *c;
	for (i = 0; i < n && !c->bad; i++) {
		struct prof_stack *s = &p->stacks[i];
		const unsigned char *from;
		unsigned char *to;
		uint64_t prev = 0;

		if (packed_head(c, p, i, &ref, &shared) < 0)
			break;
		resolve_ref(p, (uint32_t)i, (uint32_t)(i - ref), shared, hops, jump);
		s->own = c->p;
		for (uint32_t d = shared; d < s->depth && !c->bad; d++) {
			uint64_t z = getuvar(c);
			prev += (z >> 1) ^ (0 - (z & 1)); /* zigzag: the delta's two's complement */
		}
		s->outer = prev;
		s->own_len = (uint32_t)(c->p - s->own);
		from = c->p;
		skip_uvars(c, p->ncounters);
		if (c->bad || !(to = slab_room(c, &cs, (size_t)(c->p - from))))
			break;
		memcpy(to, from, (size_t)(c->p - from));
		s->cv = AT(cs.n);
		cs.n += (size_t)(c->p - from);
		p->nstacks = i + 1;
		p->nvalues += p->stacks[i].depth + p->ncounters;
		if (!within_cap(c, &start, p->nvalues))
			break;
		if (!(i & 4095))
			reader_forget_before(p, c->p);
	}
	free(hops);
	free(jump);
	slab_done(&cs, &p->cslab);
	for (i = 0; i < p->nstacks; i++)
		p->stacks[i].cv = p->cslab + OFF(p->stacks[i].cv);
	if (c->bad)
		p->nstacks = 0; /* nothing half made for reader_release to trust */
}

static void read_stacks(struct cur *c, struct profile *p, int have_counters)
{
	uint64_t n = get64(c);

	if (!have_counters) {
		seterr(c->err, c->errlen, "stacks section comes before the counters section");
		c->bad = 1;
		return;
	}
	if (p->version == 1)
		read_stacks_flat(c, p, n);
	else
		read_stacks_packed(c, p, n);
}

/* THREADS (optional, after STACKS): the thread id of each stack. */
static void read_threads(struct cur *c, struct profile *p, int have_stacks)
{
	uint64_t n = get64(c);

	if (c->bad)
		return;
	if (!have_stacks || n != p->nstacks) {
		seterr(c->err, c->errlen, "corrupt threads section: %llu threads for %zu stacks",
		       (unsigned long long)n, p->nstacks);
		c->bad = 1;
		return;
	}
	if (!count_fits(c, n, 4))
		return;
	for (uint64_t i = 0; i < n && !c->bad; i++)
		p->stacks[i].tid = get32(c);
}

static void read_bins(struct cur *c, struct profile *p)
{
	uint32_t n = get32(c);

	if (!count_fits(c, n, 36))
		return;
	p->bins = cur_calloc(c, n, sizeof(*p->bins));
	for (uint32_t i = 0; i < n && !c->bad; i++) {
		struct prof_bin *b = &p->bins[i];
		b->size = get32(c);
		b->allocs = get64(c);
		b->frees = get64(c);
		b->bytes = get64(c);
		b->freed = get64(c);
		p->nbins = i + 1;
		if (!c->bad && b->size >= FORMAT_NBINS) {
			seterr(c->err, c->errlen, "corrupt bins section: bin size %u", b->size);
			c->bad = 1;
		}
	}
}

static const char *section_name(uint32_t type)
{
	switch (type) {
	case FORMAT_SEC_INFO: return "info";
	case FORMAT_SEC_MODULES: return "modules";
	case FORMAT_SEC_COUNTERS: return "counters";
	case FORMAT_SEC_STACKS: return "stacks";
	case FORMAT_SEC_BINS: return "bins";
	case FORMAT_SEC_THREADS: return "threads";
	case FORMAT_SEC_TIMELINE: return "timeline";
	case FORMAT_SEC_LIFETIMES: return "lifetimes";
	}
	return "unknown";
}

/* A section's CRC: of its type, then of its payload, a few MB at a time,
 * each given back once summed. */
static uint32_t section_crc(const struct profile *p, const unsigned char *at, size_t len)
{
	uint32_t crc = format_crc32(0, at - FORMAT_SECTION_HEADER_LEN, 4);

	while (len) {
		size_t k = len < FORGET_STEP ? len : FORGET_STEP;
		crc = format_crc32(crc, at, k);
		at += k;
		len -= k;
		reader_forget_before(p, at);
	}
	return crc;
}

/* Parse p->bytes, the file's bytes, which p owns. */
static int parse(struct profile *p, char *err, size_t errlen)
{
	const unsigned char *buf = p->bytes;
	size_t len = p->nbytes;
	struct cur h = { buf, len, 0, "header", err, errlen };
	uint32_t nsections, reserved;
	uint64_t total;
	unsigned seen = 0;

	if (len == 0) {
		seterr(err, errlen, "empty file");
		goto bad;
	}
	if (len < FORMAT_MAGIC_LEN || memcmp(buf, FORMAT_MAGIC, FORMAT_MAGIC_LEN) != 0) {
		seterr(err, errlen, "not a profile data file (bad magic)");
		goto bad;
	}
	if (len < FORMAT_HEADER_LEN) {
		seterr(err, errlen, "truncated: %zu bytes, the header alone is %d", len, FORMAT_HEADER_LEN);
		goto bad;
	}
	h.p += FORMAT_MAGIC_LEN;
	h.left -= FORMAT_MAGIC_LEN;
	p->version = get32(&h);
	p->kind = get32(&h);
	nsections = get32(&h);
	reserved = get32(&h);
	total = get64(&h);
	if (p->version < FORMAT_VERSION_MIN || p->version > FORMAT_VERSION) {
		seterr(err, errlen, "format version %u, this tool reads versions %d to %d",
		       p->version, FORMAT_VERSION_MIN, FORMAT_VERSION);
		goto bad;
	}
	if (p->kind != FORMAT_KIND_MPROF && p->kind != FORMAT_KIND_CPPROF &&
	    p->kind != FORMAT_KIND_CFPROF) {
		seterr(err, errlen, "unknown kind of profile (%u)", p->kind);
		goto bad;
	}
	if (reserved != 0) {
		seterr(err, errlen, "corrupt header: reserved field is %u", reserved);
		goto bad;
	}
	if (total == 0 && nsections == 0) {
		seterr(err, errlen, "incomplete: the writer did not finish this file");
		goto bad;
	}
	if (total != len) {
		seterr(err, errlen, "%s: header says %llu bytes, file has %zu",
		       total > len ? "truncated" : "corrupt", (unsigned long long)total, len);
		goto bad;
	}
	for (uint32_t i = 0; i < nsections; i++) {
		struct cur s = { 0 };
		uint32_t type, crc, r1, r2;
		uint64_t slen;

		h.what = "header";
		if (h.left < FORMAT_SECTION_HEADER_LEN) {
			seterr(err, errlen, "truncated: section %u of %u is missing", i + 1, nsections);
			goto bad;
		}
		type = get32(&h);
		r1 = get32(&h);
		slen = get64(&h);
		crc = get32(&h);
		r2 = get32(&h);
		if (r1 || r2) {
			seterr(err, errlen, "corrupt: section %u header has nonzero reserved fields", i + 1);
			goto bad;
		}
		if (slen > h.left) {
			seterr(err, errlen, "truncated: %s section needs %llu bytes, %zu left",
			       section_name(type), (unsigned long long)slen, h.left);
			goto bad;
		}
		if (section_crc(p, h.p, (size_t)slen) != crc) {
			seterr(err, errlen, "corrupt: %s section fails its checksum", section_name(type));
			goto bad;
		}
		/* Read again now: given back again as it is (forget_before). */
		p->forgotten = (size_t)(h.p - buf) & ~(size_t)(FORGET_STEP - 1);
		s.p = h.p;
		s.left = (size_t)slen;
		s.what = section_name(type);
		s.err = err;
		s.errlen = errlen;
		if (type >= 1 && type <= 31) {
			if (seen & (1u << type)) {
				seterr(err, errlen, "corrupt: two %s sections", section_name(type));
				goto bad;
			}
			seen |= 1u << type;
		}
		switch (type) {
		case FORMAT_SEC_INFO: read_info(&s, p); break;
		case FORMAT_SEC_MODULES: read_modules(&s, p); break;
		case FORMAT_SEC_COUNTERS: read_counters(&s, p); break;
		case FORMAT_SEC_STACKS:
			read_stacks(&s, p, (seen >> FORMAT_SEC_COUNTERS) & 1);
			break;
		case FORMAT_SEC_BINS: read_bins(&s, p); break;
		case FORMAT_SEC_THREADS:
			read_threads(&s, p, (seen >> FORMAT_SEC_STACKS) & 1);
			p->has_threads = !s.bad;
			break;
		case FORMAT_SEC_TIMELINE:
			if (!((seen >> FORMAT_SEC_STACKS) & 1)) {
				seterr(err, errlen, "timeline section comes before the stacks section");
				goto bad;
			}
			if (reader_timeline(p, s.p, s.left, err, errlen) < 0)
				goto bad;
			s.left = 0;
			break;
		case FORMAT_SEC_LIFETIMES:
			if (!((seen >> FORMAT_SEC_STACKS) & 1)) {
				seterr(err, errlen, "lifetimes section comes before the stacks section");
				goto bad;
			}
			if (reader_lifetimes(p, s.p, s.left, err, errlen) < 0)
				goto bad;
			s.left = 0;
			break;
		default: s.left = 0; break; /* a newer writer's section */
		}
		if (s.bad)
			goto bad;
		if (s.left) {
			seterr(err, errlen, "corrupt %s section: %zu bytes left over", s.what, s.left);
			goto bad;
		}
		h.p += slen;
		h.left -= (size_t)slen;
	}
	if (h.left) {
		seterr(err, errlen, "corrupt: %zu bytes after the last section", h.left);
		goto bad;
	}
	if (!(seen & (1u << FORMAT_SEC_STACKS))) {
		seterr(err, errlen, "corrupt: no stacks section");
		goto bad;
	}
	if (reader_check(p, err, errlen) < 0)
		goto bad;
	p->size = len;
	/* The next pass over the frames (the model's) gives them back anew. */
	p->forgotten = p->nstacks ? (size_t)(p->stacks[0].own - p->bytes) & ~(size_t)(FORGET_STEP - 1)
				  : 0;
	return 0;
bad:
	reader_release(p);
	return -1;
}

int reader_parse(const unsigned char *buf, size_t len, struct profile *p, char *err, size_t errlen)
{
	unsigned char *copy = malloc(len ? len : 1);

	memset(p, 0, sizeof(*p));
	if (!copy) {
		seterr(err, errlen, "out of memory reading %zu bytes", len);
		return -1;
	}
	if (len)
		memcpy(copy, buf, len);
	p->bytes = copy;
	p->nbytes = len;
	return parse(p, err, errlen);
}

int reader_load(const char *path, struct profile *p, char *err, size_t errlen)
{
	struct stat st;
	const char *why;
	void *map;
	int fd, rc;

	memset(p, 0, sizeof(*p));
	fd = util_open_file(path, &why);
	if (fd < 0) {
		seterr(err, errlen, "%s", why);
		return -1;
	}
	if (fstat(fd, &st) < 0) {
		seterr(err, errlen, "%s", strerror(errno));
		close(fd);
		return -1;
	}
	if (st.st_size == 0) {
		close(fd);
		seterr(err, errlen, "empty file");
		return -1;
	}
	/* Mapped, not read: the frames are decoded where they are, and the
	 * pages a pass is done with go back to the kernel (reader_forget).
	 * A file cut short by another process while it is mapped ends this
	 * one with SIGBUS, as it would git or perf. */
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED) {
		seterr(err, errlen, "cannot map %lld bytes: %s", (long long)st.st_size, strerror(errno));
		return -1;
	}
	p->bytes = map;
	p->nbytes = (size_t)st.st_size;
	p->mapped = 1;
	rc = parse(p, err, errlen);
	if (rc == 0)
		p->path = strdup(path);
	return rc;
}

void reader_release(struct profile *p)
{
	if (p->timeline)
		free(p->timeline->points);
	free(p->timeline);
	free(p->lifetimes);
	for (size_t i = 0; i < p->ninfo; i++) {
		free(p->info[i].key);
		free(p->info[i].value);
	}
	free(p->info);
	for (size_t i = 0; i < p->nmodules; i++) {
		free(p->modules[i].path);
		free(p->modules[i].build_id);
	}
	free(p->modules);
	for (size_t i = 0; i < p->ncounters; i++) {
		free(p->counter_names[i]);
		free(p->counter_units[i]);
	}
	free(p->counter_names);
	free(p->counter_units);
	free(p->cslab);
	free(p->fslab);
	free(p->stacks);
	free(p->bins);
	free(p->path);
	if (p->mapped)
		munmap((void *)p->bytes, p->nbytes);
	else
		free((void *)p->bytes);
	memset(p, 0, sizeof(*p));
}

const char *reader_info(const struct profile *p, const char *key)
{
	for (size_t i = 0; i < p->ninfo; i++)
		if (p->info[i].key && strcmp(p->info[i].key, key) == 0)
			return p->info[i].value;
	return NULL;
}

const char *reader_ended(const struct profile *p)
{
	const char *e = reader_info(p, "ended");

	return e && *e && strcmp(e, "exit") ? e : NULL;
}

uint64_t reader_sampled(const struct profile *p)
{
	const char *s = reader_info(p, "sample_bytes");

	return s ? strtoull(s, NULL, 10) : 0;
}

int reader_counter(const struct profile *p, const char *name)
{
	for (size_t i = 0; i < p->ncounters; i++)
		if (p->counter_names[i] && strcmp(p->counter_names[i], name) == 0)
			return (int)i;
	return -1;
}
