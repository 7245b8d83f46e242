/*
 * pprof.c - owns the pprof export (export_pprof): profile.proto
 * (github.com/google/pprof, proto/profile.proto), gzip-compressed, as
 * `pprof`, Pyroscope and Parca read it.
 *
 * Written by hand, not with protobuf-c: the format needs only varints and
 * length-delimited fields of six message types, a hundred lines, where
 * protobuf-c would add a code generator to the build and a library to the
 * tools (doc/format.md, "pprof").  Nested messages are built inside out
 * into a scratch buffer, then copied into their parent with their length.
 *
 * What is in it: one sample type per counter (export.h, pprof's names and
 * units); one sample per model stack, its locations innermost first; one
 * location per call site of the model (a function and its line), one
 * function per name.  Not yet: mappings with build-ids and addresses, and
 * inline frames as repeated lines of one location (issue 14).
 */
#include "export/export.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "model.h"
#include "util.h"

struct pb {
	unsigned char *b;
	size_t n, cap;
};

static void pb_byte(struct pb *p, unsigned char c)
{
	util_grow(&p->b, &p->cap, p->n + 1, 1);
	p->b[p->n++] = c;
}

static void pb_varint(struct pb *p, uint64_t v)
{
	while (v >= 0x80) {
		pb_byte(p, (unsigned char)(v | 0x80));
		v >>= 7;
	}
	pb_byte(p, (unsigned char)v);
}

static void pb_int(struct pb *p, int field, uint64_t v)
{
	pb_varint(p, (uint64_t)field << 3);
	pb_varint(p, v);
}

static void pb_bytes(struct pb *p, int field, const void *s, size_t n)
{
	pb_varint(p, (uint64_t)field << 3 | 2);
	pb_varint(p, n);
	util_grow(&p->b, &p->cap, p->n + n, 1);
	memcpy(p->b + p->n, s, n);
	p->n += n;
}

/* Strings: index 0 is "" (the format requires it). */
struct strs {
	struct strtab *t;
};

static int64_t str(struct strs *s, const char *x)
{
	return (int64_t)strtab_intern(s->t, x);
}

static void value_type(struct pb *out, int field, struct strs *s, const char *type, const char *unit)
{
	struct pb m = { 0 };

	pb_int(&m, 1, (uint64_t)str(s, type));
	pb_int(&m, 2, (uint64_t)str(s, unit));
	pb_bytes(out, field, m.b, m.n);
	free(m.b);
}

int export_pprof(const struct export_data *d, size_t dflt, FILE *out)
{
	const struct model *m = d->m;
	struct strs s = { strtab_new() };
	struct pb p = { 0 }, x = { 0 }, y = { 0 };
	uint32_t *path = xcalloc((size_t)m->maxn + 1, sizeof(uint32_t));
	uint8_t *used = xcalloc(m->nsites + 1, 1), *fused = xcalloc(strtab_count(m->fns) + 1, 1);
	gzFile gz;
	int rc = 0;

	str(&s, "");
	for (size_t k = 0; k < d->n; k++)
		value_type(&p, 1, &s, d->c[k].name, d->c[k].unit);
	/* Samples: location ids (site + 1) innermost first, packed; values. */
	for (size_t i = 0; i < m->nstacks; i++) {
		uint32_t n = model_path(m, &m->stacks[i], path);
		int any = 0;

		for (size_t k = 0; k < d->n; k++)
			any |= export_value(d, i, k) != 0;
		if (!any)
			continue;
		x.n = y.n = 0;
		for (uint32_t j = n; j-- > 0;) {
			pb_varint(&y, (uint64_t)path[j] + 1);
			used[path[j]] = 1;
		}
		pb_bytes(&x, 1, y.b, y.n);
		y.n = 0;
		for (size_t k = 0; k < d->n; k++)
			pb_varint(&y, export_value(d, i, k));
		pb_bytes(&x, 2, y.b, y.n);
		pb_bytes(&p, 2, x.b, x.n);
	}
	/* Locations: one per call site used, one line each. */
	for (size_t id = 0; id < m->nsites; id++) {
		const struct model_site *site = &m->sites[id];
		uint64_t line = 0;

		if (!used[id])
			continue;
		fused[site->fn] = 1;
		if (site->loc != MODEL_NO_LOC) {
			const char *c = strrchr(strtab_get(m->locs, site->loc), ':');
			line = c ? strtoull(c + 1, NULL, 10) : 0;
		}
		x.n = y.n = 0;
		pb_int(&y, 1, (uint64_t)site->fn + 1);
		if (line)
			pb_int(&y, 2, line);
		pb_int(&x, 1, id + 1);
		pb_bytes(&x, 4, y.b, y.n);
		pb_bytes(&p, 4, x.b, x.n);
	}
	/* Functions: one per name. */
	for (size_t f = 0; f < strtab_count(m->fns); f++) {
		const char *name = strtab_get(m->fns, (uint32_t)f);

		if (!fused[f])
			continue;
		x.n = 0;
		pb_int(&x, 1, f + 1);
		pb_int(&x, 2, (uint64_t)str(&s, name));
		pb_int(&x, 3, (uint64_t)str(&s, name));
		pb_bytes(&p, 5, x.b, x.n);
	}
	pb_int(&p, 14, (uint64_t)str(&s, d->c[dflt].name)); /* default_sample_type */
	for (size_t k = 0; k < strtab_count(s.t); k++) {
		const char *t = strtab_get(s.t, (uint32_t)k);
		pb_bytes(&p, 6, t, strlen(t));
	}
	fflush(out);
	gz = gzdopen(dup(fileno(out)), "wb");
	if (!gz || gzwrite(gz, p.b, (unsigned)p.n) != (int)p.n)
		rc = -1;
	if (gz && gzclose(gz) != Z_OK)
		rc = -1;
	free(p.b);
	free(x.b);
	free(y.b);
	free(path);
	free(used);
	free(fused);
	strtab_free(s.t);
	return rc;
}
