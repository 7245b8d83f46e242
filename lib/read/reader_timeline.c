/*
 * reader_timeline.c - owns reading the sections of the heap over time
 * (format.h, doc/format.md), checked as they are read: TIMELINE (every
 * count bounded, FORMAT_TL_*, every tracked stack one of the file's,
 * points in time order) and LIFETIMES (as many buckets as this reader
 * knows, each stack one of the file's, the buckets adding up).  No value
 * reaches 2^63.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "read/reader.h"
#include "read/reader_int.h"

struct tcur {
	const char *what; /* the section's name */
	const unsigned char *p;
	size_t left;
	char *err;
	size_t errlen;
	int bad;
};

static void bad(struct tcur *c, const char *fmt, ...)
{
	va_list ap;

	if (c->bad)
		return;
	c->bad = 1;
	va_start(ap, fmt);
	vsnprintf(c->err, c->errlen, fmt, ap);
	va_end(ap);
}

static uint64_t get(struct tcur *c, size_t n)
{
	uint64_t v = 0;

	if (c->bad)
		return 0;
	if (c->left < n) {
		bad(c, "truncated %s section: %zu bytes left where %zu were due", c->what, c->left, n);
		return 0;
	}
	for (size_t i = 0; i < n; i++)
		v |= (uint64_t)c->p[i] << (8 * i);
	c->p += n;
	c->left -= n;
	return v;
}

/* A byte count or a count of objects: below 2^63, as the counters. */
static uint64_t value(struct tcur *c, const char *what)
{
	uint64_t v = get(c, 8);

	if (v >> 63)
		bad(c, "corrupt %s section: %s of 2^63 or more", c->what, what);
	return v;
}

int reader_timeline(struct profile *p, const unsigned char *at, size_t len, char *err,
		    size_t errlen)
{
	struct tcur c = { "timeline", at, len, err, errlen, 0 };
	struct prof_timeline *t = calloc(1, sizeof *t);
	uint64_t last = 0;

	if (!t) {
		snprintf(err, errlen, "out of memory reading the timeline");
		return -1;
	}
	p->timeline = t; /* reader_release frees it, whatever happens */
	t->flags = (uint32_t)get(&c, 4);
	if (t->flags & ~FORMAT_TL_ESTIMATES)
		bad(&c, "corrupt timeline section: unknown flags %#x", t->flags);
	t->ntrack = (uint32_t)get(&c, 4);
	if (t->ntrack > FORMAT_TL_TRACK)
		bad(&c, "corrupt timeline section: %u stacks tracked (at most %d)", t->ntrack,
		    FORMAT_TL_TRACK);
	for (uint32_t k = 0; k < t->ntrack && !c.bad; k++) {
		t->track[k] = get(&c, 8);
		if (t->track[k] >= p->nstacks)
			bad(&c, "corrupt timeline section: tracks stack %llu of %zu",
			    (unsigned long long)t->track[k], p->nstacks);
	}
	t->npoints = (uint32_t)get(&c, 4);
	if (t->npoints > FORMAT_TL_POINTS || (uint64_t)t->npoints * 40 > c.left)
		bad(&c, "corrupt timeline section: %u points in %zu bytes", t->npoints, c.left);
	if (!c.bad && !(t->points = calloc(t->npoints ? t->npoints : 1, sizeof *t->points))) {
		snprintf(err, errlen, "out of memory reading the timeline");
		return -1;
	}
	for (uint32_t i = 0; i < t->npoints && !c.bad; i++) {
		struct prof_tl_point *q = &t->points[i];

		q->ns = get(&c, 8);
		q->live = value(&c, "live bytes");
		q->objects = value(&c, "live objects");
		q->allocated = value(&c, "bytes allocated");
		q->flags = (uint32_t)get(&c, 4);
		q->ntop = (uint32_t)get(&c, 4);
		if (c.bad)
			break;
		if (q->ns < last)
			bad(&c, "corrupt timeline section: point %u goes back in time", i + 1);
		if (q->flags & ~(FORMAT_TL_PEAK | FORMAT_TL_END | FORMAT_TL_RUN))
			bad(&c, "corrupt timeline section: point %u has unknown flags %#x", i + 1,
			    q->flags);
		if (q->ntop > FORMAT_TL_TOP)
			bad(&c, "corrupt timeline section: point %u gives %u stacks (at most %d)",
			    i + 1, q->ntop, FORMAT_TL_TOP);
		for (uint32_t k = 0; k < q->ntop && !c.bad; k++) {
			q->top[k].slot = (uint32_t)get(&c, 4);
			q->top[k].bytes = value(&c, "a stack's live bytes");
			if (!c.bad && q->top[k].slot >= t->ntrack)
				bad(&c, "corrupt timeline section: point %u names tracked stack %u of %u",
				    i + 1, q->top[k].slot, t->ntrack);
		}
		last = q->ns;
	}
	if (!c.bad && c.left)
		bad(&c, "corrupt timeline section: %zu bytes left over", c.left);
	return c.bad ? -1 : 0;
}

int reader_lifetimes(struct profile *p, const unsigned char *at, size_t len, char *err,
		     size_t errlen)
{
	struct tcur c = { "lifetimes", at, len, err, errlen, 0 };
	uint32_t nb = (uint32_t)get(&c, 4), n = (uint32_t)get(&c, 4);
	const size_t each = 8 * (3 + 2 * FORMAT_LT_BUCKETS);

	if (!c.bad && nb != FORMAT_LT_BUCKETS)
		bad(&c, "corrupt lifetimes section: %u buckets (this reader knows %d)", nb,
		    FORMAT_LT_BUCKETS);
	if (!c.bad && (n > p->nstacks || n > FORMAT_LT_MAX_STACKS || (uint64_t)n * each != c.left))
		bad(&c, "corrupt lifetimes section: %u stacks in %zu bytes", n, c.left);
	if (c.bad)
		return -1;
	if (!(p->lifetimes = calloc(n ? n : 1, sizeof *p->lifetimes))) {
		snprintf(err, errlen, "out of memory reading the lifetimes");
		return -1;
	}
	for (uint32_t i = 0; i < n && !c.bad; i++) {
		struct prof_lifetime *l = &p->lifetimes[i];
		uint64_t st = 0, sb = 0;

		l->stack = get(&c, 8);
		l->samples = value(&c, "a count of samples");
		for (int k = 0; k < FORMAT_LT_BUCKETS; k++)
			st += l->t[k] = value(&c, "a count of samples");
		for (int k = 0; k < FORMAT_LT_BUCKETS; k++)
			sb += l->b[k] = value(&c, "a count of samples");
		l->live = value(&c, "a count of samples");
		if (c.bad)
			break;
		if (l->stack >= p->nstacks)
			bad(&c, "corrupt lifetimes section: stack %llu of %zu",
			    (unsigned long long)l->stack, p->nstacks);
		else if (st != sb || st + l->live != l->samples)
			bad(&c, "corrupt lifetimes section: stack %llu's buckets do not add up",
			    (unsigned long long)l->stack);
		p->nlifetimes = i + 1;
	}
	return c.bad ? -1 : 0;
}
