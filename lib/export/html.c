/*
 * html.c - owns the HTML report (export_html): one self-contained page,
 * lib/export/report.html embedded at build time, with the profile as JSON
 * where its marker is.  The page draws a flame graph per counter (zoom,
 * search, hover), the function view and the callees/callers of any root;
 * for mprof data it shows the four tables too, as mprof prints them.
 *
 * The JSON (doc/format.md, "The HTML report"): the stacks as a trie of
 * function ids (fntrie.h, numbered breadth-first), nodes as (parent,
 * function) pairs, and per counter the (node, value) pairs of the stacks
 * ending there: the page spells each path from its parents, as folded.c
 * does.  The trie is written as it is made and the values a counter at a
 * time, so the page costs a few bytes a stack beyond the model, however
 * many nodes it has (a profile of 1M stacks: 12M nodes, a 170 MB page).
 */
#include "export/export.h"

#include <stdlib.h>
#include <string.h>

#include "model/fntrie.h"
#include "model/model.h"
#include "read/reader.h"
#include "base/util.h"

extern const char export_report_html[];

#define MARKER "@@PROFILE_DATA@@"

/* The page is written through a buffer of its own: stdio's formatting of
 * a number was most of the time it took. */
struct out {
	FILE *f;
	size_t n;
	char b[1 << 16];
};

static void out_flush(struct out *o)
{
	if (o->n)
		fwrite(o->b, 1, o->n, o->f);
	o->n = 0;
}

static void out_mem(struct out *o, const char *s, size_t n)
{
	if (o->n + n > sizeof o->b) {
		out_flush(o);
		if (n > sizeof o->b) {
			fwrite(s, 1, n, o->f);
			return;
		}
	}
	memcpy(o->b + o->n, s, n);
	o->n += n;
}

static void out_str(struct out *o, const char *s)
{
	out_mem(o, s, strlen(s));
}

static void out_c(struct out *o, char c)
{
	if (o->n == sizeof o->b)
		out_flush(o);
	o->b[o->n++] = c;
}

static void out_u64(struct out *o, uint64_t v)
{
	static const char two[] = "00010203040506070809101112131415161718192021222324"
				  "25262728293031323334353637383940414243444546474849"
				  "50515253545556575859606162636465666768697071727374"
				  "75767778798081828384858687888990919293949596979899";
	size_t len = 1;
	uint64_t t = v;
	char *q;

	for (; t >= 10000; t /= 10000)
		len += 4;
	len += t >= 1000 ? 3 : t >= 100 ? 2 : t >= 10;
	if (o->n + len > sizeof o->b)
		out_flush(o);
	/* Written in place from the last digit, two a division (a copy
	 * would be a call to memcpy: most of the numbers are node ids). */
	q = o->b + o->n + len;
	o->n += len;
	while (v >= 100) {
		unsigned r = (unsigned)(v % 100);
		v /= 100;
		*--q = two[2 * r + 1];
		*--q = two[2 * r];
	}
	if (v >= 10) {
		*--q = two[2 * v + 1];
		*--q = two[2 * v];
	} else {
		*--q = (char)('0' + v);
	}
}

/* A JSON string that is safe inside a <script> element: '<', '>' and '&'
 * escaped (no "</script>" can end it early), control characters too. */
static void json_str(struct out *o, const char *s)
{
	static const char hex[] = "0123456789abcdef";

	out_c(o, '"');
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\') {
			out_c(o, '\\');
			out_c(o, (char)c);
		} else if (c < 0x20 || c == '<' || c == '>' || c == '&' || c == 0x7f) {
			char u[6] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 15] };
			out_mem(o, u, sizeof u);
		} else {
			out_c(o, (char)c);
		}
	}
	out_c(o, '"');
}

static const char *kind_name(const struct export_data *d)
{
	const char *k = d->p->kind == FORMAT_KIND_MPROF ? "mprof" : "cpprof";

	for (size_t j = 0; j < d->n; j++)
		if (!strcmp(d->c[j].name, "calls"))
			k = "cfprof";
	return k;
}

/* The trie's nodes as they are made: "parent,function" pairs. */
struct nodes {
	struct out *o;
	size_t n;
};

static void put_node(void *ctx, uint32_t parent, uint32_t fn)
{
	struct nodes *w = ctx;

	if (w->n++)
		out_c(w->o, ',');
	if (parent == FNTRIE_ROOT)
		out_str(w->o, "-1");
	else
		out_u64(w->o, parent);
	out_c(w->o, ',');
	out_u64(w->o, fn);
}

/* File stack i's innermost node in the page, or -1: where the model's
 * stacks are not the file's one to one, in order (same is 0), or past
 * them. */
static void put_leaf(struct out *o, const struct model *m, const uint32_t *leaf, int same,
		     uint64_t i)
{
	if (!same || i >= m->nstacks) {
		out_str(o, "-1");
		return;
	}
	out_u64(o, leaf[i]);
}

/*
 * The heap over time (issue 24), for the page's Timeline tab: "timeline"
 * {estimates, track: the tracked stacks' nodes, peak: each one's bytes at
 * the heap's peak (its peak counter), points: [ns, live, objects,
 * allocated, flags, [slot, bytes, ...]]} and "lifetimes" [[node, samples,
 * 5 by time, 5 by bytes, live]], or null where the file has none.  The
 * file names its stacks by number: where the model's stacks are not the
 * file's one to one, no stack is tracked (track, peak and each point's
 * slots empty) and every lifetime's node is -1.  Nothing here is per
 * stack: a file with neither section costs the page two nulls.
 */
static void put_time(struct out *o, const struct export_data *d, const uint32_t *leaf)
{
	const struct profile *p = d->p;
	const struct model *m = d->m;
	const struct prof_timeline *t = p->timeline;
	const int same = m->nstacks == d->nstacks;

	out_str(o, ",\n\"timeline\":");
	if (!t || !t->npoints) {
		out_str(o, "null");
	} else {
		const uint32_t ntrack = same ? t->ntrack : 0;
		uint64_t buf[FORMAT_MAX_COUNTERS];

		out_str(o, "{\"estimates\":");
		out_u64(o, (t->flags & FORMAT_TL_ESTIMATES) != 0);
		out_str(o, ",\"track\":[");
		for (uint32_t k = 0; k < ntrack; k++) {
			if (k)
				out_c(o, ',');
			put_leaf(o, m, leaf, same, t->track[k]);
		}
		out_str(o, "],\"peak\":[");
		for (uint32_t k = 0; k < ntrack; k++) {
			uint64_t i = t->track[k];

			if (k)
				out_c(o, ',');
			out_u64(o, m->has_peak && i < m->nstacks
					   ? model_peak(m, model_counts(m, &m->stacks[i], buf))
					   : 0);
		}
		out_str(o, "],\"points\":[");
		for (uint32_t i = 0; i < t->npoints; i++) {
			const struct prof_tl_point *q = &t->points[i];
			const uint64_t v[5] = { q->ns, q->live, q->objects, q->allocated, q->flags };

			out_str(o, i ? ",\n[" : "[");
			for (int k = 0; k < 5; k++) {
				out_u64(o, v[k]);
				out_c(o, ',');
			}
			out_c(o, '[');
			for (uint32_t k = 0; same && k < q->ntop; k++) {
				if (k)
					out_c(o, ',');
				out_u64(o, q->top[k].slot);
				out_c(o, ',');
				out_u64(o, q->top[k].bytes);
			}
			out_str(o, "]]");
		}
		out_str(o, "]}");
	}
	out_str(o, ",\n\"lifetimes\":");
	if (!p->nlifetimes) {
		out_str(o, "null");
		return;
	}
	out_c(o, '[');
	for (size_t i = 0; i < p->nlifetimes; i++) {
		const struct prof_lifetime *l = &p->lifetimes[i];

		out_str(o, i ? ",\n[" : "[");
		put_leaf(o, m, leaf, same, l->stack);
		out_c(o, ',');
		out_u64(o, l->samples);
		for (int k = 0; k < FORMAT_LT_BUCKETS; k++) {
			out_c(o, ',');
			out_u64(o, l->t[k]);
		}
		for (int k = 0; k < FORMAT_LT_BUCKETS; k++) {
			out_c(o, ',');
			out_u64(o, l->b[k]);
		}
		out_c(o, ',');
		out_u64(o, l->live);
		out_c(o, ']');
	}
	out_c(o, ']');
}

int export_html(const struct export_data *d, const struct export_html_info *info, FILE *f)
{
	const struct model *m = d->m;
	const char *mark = strstr(export_report_html, MARKER);
	size_t nf = strtab_count(m->fns), nn, none = 0;
	uint32_t *leaf = xcalloc(m->nstacks + 1, sizeof(uint32_t));
	uint64_t *v = xcalloc(m->nstacks + 1, sizeof(uint64_t)), total[EXPORT_MAX_COUNTERS];
	uint64_t c[FORMAT_MAX_COUNTERS];
	struct out *o = xcalloc(1, sizeof(*o));
	struct nodes w = { o, 0 };
	uint32_t *order;
	int rc;

	if (!mark) { /* the build embedded a page without its marker */
		free(leaf);
		free(v);
		free(o);
		return -1;
	}
	o->f = f;
	/* A counter is a sum of the stacks' counters, times a scale: its
	 * total is that of the model's totals. */
	for (size_t k = 0; k < d->n; k++)
		total[k] = export_value(d, m->tot, k);
	out_mem(o, export_report_html, (size_t)(mark - export_report_html));
	out_str(o, "{\"kind\":\"");
	out_str(o, kind_name(d));
	out_str(o, "\",\"title\":");
	json_str(o, info->title);
	out_str(o, ",\"facts\":");
	json_str(o, info->facts);
	out_str(o, ",\"dflt\":");
	out_u64(o, info->dflt);
	out_str(o, ",\"counters\":[");
	for (size_t k = 0; k < d->n; k++) {
		out_str(o, k ? ",{\"name\":" : "{\"name\":");
		json_str(o, d->c[k].name);
		out_str(o, ",\"unit\":");
		json_str(o, d->c[k].unit);
		out_str(o, ",\"total\":");
		out_u64(o, total[k]);
		out_c(o, '}');
	}
	out_str(o, "],\n\"names\":[");
	for (size_t fn = 0; fn < nf; fn++) {
		if (fn)
			out_c(o, ',');
		json_str(o, strtab_get(m->fns, (uint32_t)fn));
	}
	/* The empty stack's name: no function was running. */
	out_str(o, nf ? ",\"(no stack)\"" : "\"(no stack)\"");
	out_str(o, "],\n\"nodes\":[");
	nn = fntrie_build(m, leaf, put_node, &w);
	/* The empty stacks' node, last: named "(no stack)". */
	for (size_t i = 0; i < m->nstacks; i++)
		if (leaf[i] == FNTRIE_ROOT) {
			leaf[i] = (uint32_t)nn;
			none = 1;
		}
	if (none)
		put_node(&w, FNTRIE_ROOT, (uint32_t)nf);

	/* Per counter, each node's stacks summed: the stacks by node. */
	order = xcalloc(m->nstacks + 1, sizeof(uint32_t));
	fntrie_order(leaf, m->nstacks, order);
	out_str(o, "],\n\"self\":[");
	for (size_t k = 0; k < d->n; k++) {
		int first = 1;

		for (size_t i = 0; i < m->nstacks; i++)
			v[i] = export_value(d, export_counts(d, i, c), k);
		out_str(o, k ? ",\n[" : "[");
		for (size_t i = 0, j; i < m->nstacks; i = j) {
			uint32_t x = leaf[order[i]];
			uint64_t sum = 0;

			for (j = i; j < m->nstacks && leaf[order[j]] == x; j++)
				sum += v[order[j]];
			if (!sum)
				continue;
			if (!first)
				out_c(o, ',');
			out_u64(o, x);
			out_c(o, ',');
			out_u64(o, sum);
			first = 0;
		}
		out_c(o, ']');
	}
	out_str(o, "],\n\"tables\":");
	if (info->tables)
		json_str(o, info->tables);
	else
		out_str(o, "null");
	put_time(o, d, leaf);
	out_c(o, '}');
	out_str(o, mark + strlen(MARKER));
	out_flush(o);
	rc = ferror(f) ? -1 : 0;
	free(order);
	free(leaf);
	free(v);
	free(o);
	return rc;
}
