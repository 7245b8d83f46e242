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
 * units); one mapping per module of the file, with its build-id and file
 * offset; one sample per stack, its locations innermost first; one
 * location per distinct address (a return address as its call
 * instruction's), its inline frames as repeated lines, callee first, the
 * last the function they were inlined into; one function per name,
 * system name and file (fn_of).  The message's fields go out in four runs (types and mappings,
 * samples, locations, functions and strings): protobuf allows any order.
 * A Lisp profile's samples are its Lisp view (lispview.h), as the model
 * has it: a location per Lisp function, named as Lisp names it; ECL's
 * own C frames left out (lisp_sample).
 */
#include "export/export.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "format/format.h"
#include "merge/merge.h"
#include "model/langview.h"
#include "model/model.h"
#include "read/reader.h"
#include "symbols/symbols.h"
#include "base/util.h"

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

/* (address, is a return address) -> location id: open addressing. */
struct locmap {
	uint64_t *key; /* addr << 1 | ret, + 1; 0: empty */
	uint32_t *id;
	size_t n, nslots;
};

static uint32_t loc_of(struct locmap *l, uint64_t addr, int ret, int *fresh)
{
	uint64_t k = (addr << 1 | (uint64_t)ret) + 1;
	size_t i;

	if (2 * (l->n + 1) > l->nslots) {
		size_t ns = l->nslots ? 2 * l->nslots : 4096;
		uint64_t *key = xcalloc(ns, sizeof(uint64_t));
		uint32_t *id = xcalloc(ns, sizeof(uint32_t));
		for (size_t j = 0; j < l->nslots; j++) {
			if (!l->key[j])
				continue;
			for (i = (size_t)(l->key[j] * 0x9e3779b97f4a7c15ull >> 20) & (ns - 1); key[i];
			     i = (i + 1) & (ns - 1))
				;
			key[i] = l->key[j];
			id[i] = l->id[j];
		}
		free(l->key);
		free(l->id);
		l->key = key;
		l->id = id;
		l->nslots = ns;
	}
	for (i = (size_t)(k * 0x9e3779b97f4a7c15ull >> 20) & (l->nslots - 1); l->key[i];
	     i = (i + 1) & (l->nslots - 1))
		if (l->key[i] == k) {
			*fresh = 0;
			return l->id[i];
		}
	l->key[i] = k;
	l->id[i] = (uint32_t)++l->n;
	*fresh = 1;
	return l->id[i];
}

/*
 * The mappings: a module's executable segments, as /proc/PID/maps has
 * them (start, limit, file offset), which is what pprof's own symbolizer
 * (-symbolize=..., -disasm) reads a load base from; a whole module, from
 * its first segment at offset 0, when its file was not read.  pprof
 * before 2023 (Go 1.19's `go tool pprof`) took a whole-image mapping at
 * offset 0 for a kernel's and read every address of a program whose code
 * starts at 0x2000 as 0x2000 further on (another function's name).
 */
struct maps {
	struct mapping {
		uint64_t start, end, offset;
		size_t module;
	} *m;
	size_t n, cap;
};

static void maps_make(struct maps *ms, const struct export_data *d)
{
	const struct profile *p = d->p;

	for (size_t i = 0; i < p->nmodules; i++) {
		const struct prof_module *md = &p->modules[i];
		struct sym_seg seg[8];
		size_t n = d->sy && md->end > md->start ? symbols_text_segments(d->sy, md->start, seg, 8)
							 : 0;

		for (size_t k = 0; k < (n ? n : 1); k++) {
			util_grow(&ms->m, &ms->cap, ms->n + 1, sizeof(*ms->m));
			ms->m[ms->n++] = n ? (struct mapping){ seg[k].start, seg[k].end, seg[k].offset, i }
					   : (struct mapping){ md->start, md->end, md->offset, i };
		}
	}
}

/* The mapping (1-based) holding addr, or 0. */
static uint64_t mapping_of(const struct maps *ms, uint64_t addr)
{
	for (size_t i = 0; i < ms->n; i++)
		if (addr >= ms->m[i].start && addr < ms->m[i].end)
			return i + 1;
	return 0;
}

static void put_mappings(struct pb *out, const struct profile *p, const struct maps *ms,
			 struct strs *s)
{
	struct pb x = { 0 };
	char hex[2 * 64 + 1];

	for (size_t i = 0; i < ms->n; i++) {
		const struct prof_module *md = &p->modules[ms->m[i].module];
		uint32_t n = md->build_id_len < 64 ? md->build_id_len : 64;

		for (uint32_t j = 0; j < n; j++)
			snprintf(hex + 2 * j, 3, "%02x", md->build_id[j]);
		hex[2 * n] = 0;
		x.n = 0;
		pb_int(&x, 1, i + 1);
		pb_int(&x, 2, ms->m[i].start);
		pb_int(&x, 3, ms->m[i].end);
		pb_int(&x, 4, ms->m[i].offset);
		pb_int(&x, 5, (uint64_t)str(s, md->path ? md->path : ""));
		pb_int(&x, 6, (uint64_t)str(s, hex));
		/* Symbolized here: names, files, lines, inline frames. */
		for (int f = 7; f <= 10; f++)
			pb_int(&x, f, 1);
		pb_bytes(out, 3, x.b, x.n);
	}
	free(x.b);
}

/* Functions by (name, system name, file): the function table pprof and
 * speedscope need filled.  The name is the one views print (a C++ name
 * simplified unless --full-names), the system name the symbol's, mangled,
 * as pprof fills them: two instantiations of a template are two functions
 * of one name, which pprof's views merge, and `pprof
 * -symbolize=demangle=full` demangles the system name again. */
struct fnmap {
	struct strtab *keys; /* "name\nsystem name\nfile" */
};

static uint64_t fn_of(struct fnmap *f, struct pb *out, struct strs *s, const struct sym_frame *sf)
{
	char *key = xasprintf("%s\n%s\n%s", sf->func, sf->sysname, sf->file ? sf->file : "");
	size_t before = strtab_count(f->keys);
	uint64_t id;

	id = (uint64_t)strtab_intern(f->keys, key) + 1;
	free(key);
	if (strtab_count(f->keys) > before) {
		struct pb x = { 0 };
		pb_int(&x, 1, id);
		pb_int(&x, 2, (uint64_t)str(s, sf->func));
		pb_int(&x, 3, (uint64_t)str(s, sf->sysname));
		if (sf->file)
			pb_int(&x, 4, (uint64_t)str(s, sf->file));
		pb_bytes(out, 5, x.b, x.n);
		free(x.b);
	}
	return id;
}

/* What the samples' frames add to the profile: the locations and
 * functions (loc, fns: their fields, in order), their tables, the
 * strings; and a Lisp profile's locations (lisp_sample). */
struct tabs {
	struct strs s;
	struct fnmap fm;
	struct locmap lm; /* (address, is a return address) -> location id */
	struct pb loc, fns;
	uint32_t *lisp;   /* a Lisp function's string id -> location id, 0: none yet */
	size_t lispcap;
	uint32_t nlisp;
	uint32_t *path;   /* model_path's room */
	uint64_t *frames; /* reader_frames' room */
	struct maps maps;
};

/*
 * Sample i of a Lisp profile e, innermost first, into y: one location
 * per Lisp function, by its name.  The frames are the model's path of
 * the stack (ECL's own C frames left out, top-level forms within
 * top-level forms as one, a stack with no Lisp function the frame
 * LISP_NONE), so pprof and every other view agree; each side of a diff
 * is named by its own model, as the ids of Lisp functions
 * (lisp.fn.<id>) are no one's but their file's.
 */
static void lisp_sample(struct tabs *t, const struct export_data *e, size_t i, struct pb *y)
{
	uint32_t n = model_path(e->m, &e->m->stacks[i], t->path);

	while (n--) {
		const char *name = strtab_get(e->m->fns, e->m->sites[t->path[n]].fn);
		/* No symbol, so no system name (lang_location's reason). */
		struct sym_frame sf = { .func = name, .full = name, .sysname = "" };
		uint32_t k = (uint32_t)str(&t->s, name);

		if (k >= t->lispcap) {
			size_t old = t->lispcap;
			util_grow(&t->lisp, &t->lispcap, (size_t)k + 1, sizeof(uint32_t));
			memset(t->lisp + old, 0, (t->lispcap - old) * sizeof(uint32_t));
		}
		if (!t->lisp[k]) {
			struct pb z = { 0 }, l = { 0 };

			t->lisp[k] = ++t->nlisp;
			pb_int(&z, 1, t->lisp[k]);
			pb_int(&l, 1, fn_of(&t->fm, &t->fns, &t->s, &sf));
			pb_bytes(&z, 4, l.b, l.n);
			pb_bytes(&t->loc, 4, z.b, z.n);
			free(l.b);
			free(z.b);
		}
		pb_varint(y, t->lisp[k]);
	}
}

/* Location id for language frame a of e (langview.h): no address, one
 * line, its function by name and file. */
static void lang_location(struct tabs *t, const struct export_data *e, uint64_t a, uint32_t id)
{
	const char *fn, *loc, *colon;
	size_t fnlen;
	char *name, *file = NULL;
	struct pb z = { 0 }, l = { 0 };
	struct sym_frame sf;
	long line = 0;

	if (langview_frame(e->m->lang, FORMAT_LANG_FRAME_ID(a), &fn, &fnlen, &loc) < 0) {
		name = xasprintf("(frame %u)", FORMAT_LANG_FRAME_ID(a));
	} else {
		name = xasprintf("%.*s", (int)fnlen, fn);
		if (loc && (colon = strrchr(loc, ':')) != NULL) {
			file = xasprintf("%.*s", (int)(colon - loc), loc);
			line = strtol(colon + 1, NULL, 10);
		}
	}
	memset(&sf, 0, sizeof sf);
	/* No system name: a language's function has no symbol, and pprof
	 * takes a name equal to its system name for one still to demangle,
	 * which it strips of <...>: Python's <module>, <listcomp> and
	 * <genexpr> all became one <unknown>. */
	sf.func = sf.full = name;
	sf.sysname = "";
	sf.file = file;
	pb_int(&z, 1, id);
	pb_int(&l, 1, fn_of(&t->fm, &t->fns, &t->s, &sf));
	if (line > 0)
		pb_int(&l, 2, (uint64_t)line);
	pb_bytes(&z, 4, l.b, l.n);
	pb_bytes(&t->loc, 4, z.b, z.n);
	free(l.b);
	free(z.b);
	free(name);
	free(file);
}

/* The module of p that holds addr, or -1. */
static long module_at(const struct profile *p, uint64_t addr)
{
	for (size_t i = 0; i < p->nmodules; i++)
		if (addr >= p->modules[i].start && addr < p->modules[i].end)
			return (long)i;
	return -1;
}

/*
 * Sample i of e (a base's when delta: its addresses moved into d's),
 * innermost first, into y: the file's own frames, each a location (its
 * address: a return address's call instruction, or the pc) with its
 * inline frames as lines, callee first.  A base's frame in a module d
 * lacks (matched[] 0: the program before a rebuild) is named from the
 * base's own files, a location of its own, as is a language frame (its
 * id is the base's): resolved with d's, they were bare addresses, and the
 * diff of two builds said every function of the old one went away.
 */
static void addr_sample(struct tabs *t, const struct export_data *d, const struct export_data *e,
			const int64_t *delta, const unsigned char *matched, size_t i, struct pb *y)
{
	const struct prof_stack *ps = &e->p->stacks[i];
	uint32_t n = reader_frames(e->p, i, t->frames);

	for (uint32_t j = 0; j < n; j++) {
		int ret = !((j == 0 && (ps->flags & FORMAT_STACK_PC_FIRST)) ||
			    (ps->flags & FORMAT_STACK_ENTRY));
		uint64_t f = t->frames[j];
		int lang = FORMAT_IS_LANG_FRAME(f) && e->m->lang;
		long mod = delta && !lang ? module_at(e->p, f) : -1;
		int own = delta && (lang || mod < 0 || !matched[mod]);
		uint64_t a = delta && !own ? merge_move(e->p, delta, f) : f;
		/* Keys apart from d's: user addresses are below 2^47, a
		 * language frame's bits 32-47 are 0. */
		uint64_t key = !own ? a : lang ? a ^ (1ull << 40) : a | (1ull << 61);
		struct symbols *sy = own ? e->sy : d->sy;
		struct sym_frame sf[32];
		struct pb z = { 0 };
		int fresh, cnt;
		uint32_t id = loc_of(&t->lm, key, ret, &fresh);

		pb_varint(y, id);
		if (!fresh)
			continue;
		if (lang) {
			lang_location(t, e, f, id);
			continue;
		}
		cnt = sy ? symbols_resolve(sy, a, ret, sf, 32) : 0;
		pb_int(&z, 1, id);
		pb_int(&z, 2, own ? 0 : mapping_of(&t->maps, a));
		pb_int(&z, 3, ret ? a - 1 : a);
		for (int c = 0; c < cnt; c++) {
			struct pb l = { 0 };
			/* As the views name it: a.c:load where C has two. */
			const char *shown = model_shown_name(own ? e->m : d->m, sf[c].func, sf[c].decl);

			if (shown)
				sf[c].func = shown;
			pb_int(&l, 1, fn_of(&t->fm, &t->fns, &t->s, &sf[c]));
			if (sf[c].line > 0)
				pb_int(&l, 2, (uint64_t)sf[c].line);
			pb_bytes(&z, 4, l.b, l.n);
			free(l.b);
		}
		pb_bytes(&t->loc, 4, z.b, z.n);
		free(z.b);
	}
}

int export_pprof(const struct export_data *d, size_t dflt, const struct export_data *base,
		 FILE *out)
{
	const struct profile *p = d->p;
	struct tabs t = { .s = { strtab_new() }, .fm = { strtab_new() } };
	struct pb hdr = { 0 }, smp = { 0 }, x = { 0 }, y = { 0 };
	uint32_t maxn = base && base->m->maxn > d->m->maxn ? base->m->maxn : d->m->maxn;
	gzFile gz;
	int rc = 0;

	t.frames = xcalloc(FORMAT_MAX_DEPTH + 1, sizeof(uint64_t));
	t.path = xcalloc((size_t)maxn + 1, sizeof(uint32_t));
	str(&t.s, ""); /* string_table[0] */
	for (size_t k = 0; k < d->n; k++)
		value_type(&hdr, 1, &t.s, d->c[k].name, d->c[k].unit);
	maps_make(&t.maps, d);
	put_mappings(&hdr, p, &t.maps, &t.s);
	/* Samples: each stack's frames and the model's values.  A base's
	 * samples follow, negated. */
	for (int side = 0; side < (base ? 2 : 1); side++) {
		const struct export_data *e = side ? base : d;
		const struct profile *q = e->p;
		int64_t *delta = side ? xcalloc(q->nmodules + 1, sizeof(int64_t)) : NULL;
		unsigned char *matched = side ? xcalloc(q->nmodules + 1, 1) : NULL;

		if (side) {
			merge_deltas(p, q, delta);
			merge_matched(p, q, matched);
		}
		for (size_t i = 0; i < e->m->nstacks && i < q->nstacks; i++) {
			uint64_t c[FORMAT_MAX_COUNTERS];
			int any = 0;

			export_counts(e, i, c);
			for (size_t k = 0; k < e->n; k++)
				any |= export_value(e, c, k) != 0;
			if (!any)
				continue;
			x.n = y.n = 0;
			if (d->m->lisp)
				lisp_sample(&t, e, i, &y);
			else
				addr_sample(&t, d, e, delta, matched, i, &y);
			pb_bytes(&x, 1, y.b, y.n);
			y.n = 0;
			for (size_t k = 0; k < e->n; k++) {
				uint64_t v = export_value(e, c, k);
				pb_varint(&y, side ? (uint64_t)-(int64_t)v : v); /* int64 */
			}
			pb_bytes(&x, 2, y.b, y.n);
			pb_bytes(&smp, 2, x.b, x.n);
		}
		free(delta);
		free(matched);
	}
	pb_int(&hdr, 14, (uint64_t)str(&t.s, d->c[dflt].name)); /* default_sample_type */
	/* A sampled profile: its values are estimates already (unsampled, as
	 * Go's and jemalloc's heap profiles are); the period says how. */
	/* When and how long (pprof's "Duration"), from INFO; and a sampling
	 * profile's period, its default resource's interval: pprof prints
	 * the samples' total beside the run's time, as for its own CPU
	 * profiles. */
	{
		const char *a = reader_info(p, "start_ns"), *b = reader_info(p, "end_ns");
		char key[96];
		const char *iv;
		uint64_t t0 = a ? strtoull(a, NULL, 10) : 0, t1 = b ? strtoull(b, NULL, 10) : 0;

		/* A merged file's: its runs' times summed (merge.c). */
		const char *dur = reader_info(p, "duration_ns");

		if (t0) {
			pb_int(&hdr, 9, t0); /* time_nanos */
			if (dur)
				pb_int(&hdr, 10, strtoull(dur, NULL, 10)); /* duration_nanos */
			else if (t1 >= t0)
				pb_int(&hdr, 10, t1 - t0);
		}
		snprintf(key, sizeof key, "interval.%s", d->c[dflt].name);
		if (p->kind != FORMAT_KIND_MPROF && (iv = reader_info(p, key)) != NULL) {
			value_type(&hdr, 11, &t.s, d->c[dflt].name, d->c[dflt].unit);
			pb_int(&hdr, 12, strtoull(iv, NULL, 10));
		}
	}
	if (reader_sampled(p)) {
		char note[160];

		value_type(&hdr, 11, &t.s, "space", "bytes"); /* period_type */
		pb_int(&hdr, 12, reader_sampled(p));          /* period */
		snprintf(note, sizeof note,
			 "sampled: one allocation in every %llu bytes on average; values are estimates",
			 (unsigned long long)reader_sampled(p));
		pb_int(&hdr, 13, (uint64_t)str(&t.s, note)); /* comment */
	}
	for (size_t k = 0; k < strtab_count(t.s.t); k++) {
		const char *v = strtab_get(t.s.t, (uint32_t)k);
		pb_bytes(&t.fns, 6, v, strlen(v));
	}
	fflush(out);
	gz = gzdopen(dup(fileno(out)), "wb");
	if (!gz || gzwrite(gz, hdr.b, (unsigned)hdr.n) != (int)hdr.n ||
	    gzwrite(gz, smp.b, (unsigned)smp.n) != (int)smp.n ||
	    gzwrite(gz, t.loc.b, (unsigned)t.loc.n) != (int)t.loc.n ||
	    gzwrite(gz, t.fns.b, (unsigned)t.fns.n) != (int)t.fns.n)
		rc = -1;
	if (gz && gzclose(gz) != Z_OK)
		rc = -1;
	free(hdr.b);
	free(smp.b);
	free(t.loc.b);
	free(t.fns.b);
	free(x.b);
	free(y.b);
	free(t.frames);
	free(t.path);
	free(t.maps.m);
	free(t.lm.key);
	free(t.lm.id);
	free(t.lisp);
	strtab_free(t.fm.keys);
	strtab_free(t.s.t);
	return rc;
}
