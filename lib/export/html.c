/*
 * html.c - owns the HTML report (export_html): one self-contained page,
 * lib/export/report.html embedded at build time, with the profile as JSON
 * where its marker is.  The page draws a flame graph per counter (zoom,
 * search, hover), the function view and the callees/callers of any root;
 * for mprof data it shows the four tables too, as mprof prints them.
 *
 * The JSON (doc/format.md, "The HTML report"): the stacks as a trie of
 * function ids (a pairmap), nodes as (parent, function) pairs, and per
 * counter the (node, value) pairs of the stacks ending there: the page
 * spells each path from its parents, as folded.c does.
 */
#include "export/export.h"

#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "pairmap.h"
#include "reader.h"
#include "util.h"

extern const char export_report_html[];

#define MARKER "@@PROFILE_DATA@@"

/* A JSON string that is safe inside a <script> element: '<', '>' and '&'
 * escaped (no "</script>" can end it early), control characters too. */
static void json_str(const char *s, FILE *out)
{
	fputc('"', out);
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20 || c == '<' || c == '>' || c == '&' || c == 0x7f)
			fprintf(out, "\\u%04x", c);
		else
			fputc(c, out);
	}
	fputc('"', out);
}

static const char *kind_name(const struct export_data *d)
{
	const char *k = d->p->kind == FORMAT_KIND_MPROF ? "mprof" : "cpprof";

	for (size_t j = 0; j < d->n; j++)
		if (!strcmp(d->c[j].name, "calls"))
			k = "cfprof";
	return k;
}

int export_html(const struct export_data *d, const struct export_html_info *info, FILE *out)
{
	const struct model *m = d->m;
	const char *mark = strstr(export_report_html, MARKER);
	struct pairmap t = { 0 };
	uint32_t *node = xcalloc(m->nstacks + 1, sizeof(uint32_t));
	uint32_t *path = xcalloc((size_t)m->maxn + 1, sizeof(uint32_t));
	uint64_t *self, c[FORMAT_MAX_COUNTERS];
	size_t nf = strtab_count(m->fns);

	if (!mark) /* the build embedded a page without its marker */
		return -1;
	for (size_t i = 0; i < m->nstacks; i++) {
		uint32_t n = model_path(m, &m->stacks[i], path), x = PAIRMAP_NONE;

		for (uint32_t j = 0; j < n; j++)
			x = pairmap_get(&t, x, m->sites[path[j]].fn, 0, NULL);
		node[i] = x == PAIRMAP_NONE ? pairmap_get(&t, PAIRMAP_NONE, PAIRMAP_NONE, 0, NULL) : x;
	}
	self = xcalloc(t.n + 1, sizeof(uint64_t));

	fwrite(export_report_html, 1, (size_t)(mark - export_report_html), out);
	fprintf(out, "{\"kind\":\"%s\",\"title\":", kind_name(d));
	json_str(info->title, out);
	fputs(",\"facts\":", out);
	json_str(info->facts, out);
	fprintf(out, ",\"dflt\":%zu,\"counters\":[", info->dflt);
	for (size_t k = 0; k < d->n; k++) {
		uint64_t total = 0;
		for (size_t i = 0; i < m->nstacks; i++)
			total += export_value(d, export_counts(d, i, c), k);
		fprintf(out, "%s{\"name\":", k ? "," : "");
		json_str(d->c[k].name, out);
		fputs(",\"unit\":", out);
		json_str(d->c[k].unit, out);
		fprintf(out, ",\"total\":%llu}", (unsigned long long)total);
	}
	fputs("],\n\"names\":[", out);
	for (size_t f = 0; f < nf; f++) {
		if (f)
			fputc(',', out);
		json_str(strtab_get(m->fns, (uint32_t)f), out);
	}
	/* The empty stack's name: no function was running. */
	fputs(nf ? ",\"(no stack)\"" : "\"(no stack)\"", out);
	fputs("],\n\"nodes\":[", out);
	for (size_t x = 0; x < t.n; x++)
		fprintf(out, "%s%d,%d", x ? "," : "",
			pairmap_a(&t, (uint32_t)x) == PAIRMAP_NONE ? -1 : (int)pairmap_a(&t, (uint32_t)x),
			pairmap_b(&t, (uint32_t)x) == PAIRMAP_NONE ? (int)nf : (int)pairmap_b(&t, (uint32_t)x));
	fputs("],\n\"self\":[", out);
	for (size_t k = 0; k < d->n; k++) {
		int first = 1;

		memset(self, 0, (t.n + 1) * sizeof(uint64_t));
		for (size_t i = 0; i < m->nstacks; i++)
			self[node[i]] += export_value(d, export_counts(d, i, c), k);
		fputs(k ? ",\n[" : "[", out);
		for (size_t x = 0; x < t.n; x++) {
			if (!self[x])
				continue;
			fprintf(out, "%s%zu,%llu", first ? "" : ",", x, (unsigned long long)self[x]);
			first = 0;
		}
		fputc(']', out);
	}
	fputs("],\n\"tables\":", out);
	if (info->tables)
		json_str(info->tables, out);
	else
		fputs("null", out);
	fputc('}', out);
	fputs(mark + strlen(MARKER), out);
	free(self);
	free(path);
	free(node);
	pairmap_release(&t);
	return ferror(out) ? -1 : 0;
}
