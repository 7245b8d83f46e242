/*
 * reader_stacks.c - the stacks as the reader keeps them (reader.h): coded
 * as the file codes them, decoded when a view asks (reader_own,
 * reader_counts, reader_frames), and the mapped file's pages given back
 * behind each pass over them (reader_forget).  reader.c reads the file.
 */
#include "read/reader.h"
#include "read/reader_int.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

void reader_forget_before(const struct profile *p, const unsigned char *q)
{
	struct profile *w = (struct profile *)p; /* forgotten: a hint's state */
	size_t upto;

	if (!p->mapped || q < p->bytes || q > p->bytes + p->nbytes)
		return;
	upto = (size_t)(q - p->bytes) & ~(size_t)(FORGET_STEP - 1);
	if (upto <= p->forgotten)
		return;
	/* Pages of a private mapping of a file that were never written:
	 * dropped, they read back from the page cache if touched again. */
	madvise((void *)(p->bytes + p->forgotten), upto - p->forgotten, MADV_DONTNEED);
	w->forgotten = upto;
}

size_t reader_pack(unsigned char *out, const uint64_t *v, size_t n, int deltas)
{
	uint64_t prev = 0;
	size_t len = 0;

	for (size_t i = 0; i < n; i++) {
		uint64_t x = v[i];
		if (deltas) {
			int64_t d = (int64_t)(v[i] - prev);
			x = (uint64_t)d << 1 ^ (uint64_t)(d >> 63);
			prev = v[i];
		}
		do {
			out[len++] = (unsigned char)((x & 0x7f) | (x > 0x7f ? 0x80 : 0));
			x >>= 7;
		} while (x);
	}
	return len;
}

/* One value the reader checked (or coded) itself: no bound to test. */
static inline uint64_t unpack1(const unsigned char **pp)
{
	const unsigned char *b = *pp;
	uint64_t v = b[0] & 0x7f;
	int sh = 7;

	while (*b++ & 0x80) {
		v |= (uint64_t)(*b & 0x7f) << sh;
		sh += 7;
	}
	*pp = b;
	return v;
}

const unsigned char *reader_unpack(const unsigned char *b, uint64_t *out, size_t n)
{
	for (size_t i = 0; i < n; i++)
		out[i] = unpack1(&b);
	return b;
}

uint32_t reader_own(const struct profile *p, size_t i, uint32_t from, uint64_t *out)
{
	const struct prof_stack *s = &p->stacks[i];
	const unsigned char *b = s->own, *e = b + s->own_len;
	uint32_t nown = s->depth - s->shared, n = nown - from;
	uint64_t v = s->outer;

	if (from == 0) { /* all of them: from the innermost, as coded */
		v = 0;
		for (uint32_t d = 0; d < nown; d++) {
			uint64_t z = unpack1(&b);
			v += (z >> 1) ^ (0 - (z & 1));
			out[d] = v;
		}
		return nown;
	}
	/* The outer ones: back from the outermost, a delta at a time (a
	 * value's last byte is the one without the high bit). */
	for (uint32_t d = n; d-- > 0;) {
		const unsigned char *q = e - 1;
		uint64_t z;

		out[d] = v;
		while (q > b && (q[-1] & 0x80))
			q--;
		e = q;
		z = unpack1(&q);
		v -= (z >> 1) ^ (0 - (z & 1));
	}
	return n;
}

const uint64_t *reader_counts(const struct profile *p, size_t i, uint64_t *out)
{
	reader_unpack(p->stacks[i].cv, out, p->ncounters);
	return out;
}

void reader_drop_stacks(struct profile *p)
{
	free(p->stacks);
	free(p->fslab);
	p->stacks = NULL;
	p->fslab = NULL;
	p->nstacks = 0;
	if (p->mapped)
		munmap((void *)p->bytes, p->nbytes);
	else
		free((void *)p->bytes);
	p->bytes = NULL;
	p->nbytes = 0;
	p->mapped = 0;
}

void reader_forget(const struct profile *p, size_t i)
{
	if (i < p->nstacks)
		reader_forget_before(p, p->stacks[i].own);
}

uint32_t reader_frames(const struct profile *p, size_t i, uint64_t *out)
{
	const struct prof_stack *s = &p->stacks[i];
	uint32_t n = reader_own(p, i, 0, out);

	while (s->shared) {
		size_t r = s->ref;
		n += reader_own(p, r, p->stacks[r].depth - s->shared, out + n);
		s = &p->stacks[r];
	}
	return n;
}
