/*
 * salvage_cpprof.c - owns writing a cpprof profile from a dead program's
 * keep (salvage_cpprof, keeper.h): what runtime/cpprof/save.c writes at
 * exit, read from the sampler's stack table (table.h's root, struct
 * tab_keep) as it was at the moment of death.  An entry is whole once its
 * slot points at it (the table publishes so); one that does not read
 * whole from the image is left out, and INFO's salvage_lost says how many.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "format/format.h"
#include "run/keeper.h"
#include "format/keepfmt.h"
#include "table.h"
#include "base/util.h"

/* Slot i's entry, checked: its counters and frames in the image. */
static const struct tab_ent *entry(const struct salvage *s, const struct tab_keep *tk,
				   const uint32_t *slot, uint64_t i)
{
	const struct tab_ent *e;
	uint64_t off = slot[i], a = tk->mem + off * 8;

	if (!off || off >= tk->words || !(e = keeper_at(s->k, a, sizeof *e)) ||
	    e->depth > FORMAT_MAX_DEPTH ||
	    !keeper_at(s->k, a + sizeof *e, ((uint64_t)tk->nres + e->depth) * 8))
		return NULL;
	return e;
}

int salvage_cpprof(struct salvage *s)
{
	const struct tab_keep *tk;
	const uint32_t *slot;
	uint64_t n = 0, lost = 0, pf_depth = 0;
	const uint64_t *pf = NULL;
	char num[2][24];

	if (s->k->h->layout != TAB_KEEP_LAYOUT) {
		snprintf(s->why, sizeof s->why,
			 "its keep was written by a libcpprof.so of another version");
		return -1;
	}
	tk = keeper_at(s->k, s->k->h->root, sizeof *tk);
	if (!tk || tk->nres < 1 || tk->nres > FORMAT_MAX_COUNTERS || tk->words > (1ull << 40) ||
	    !(slot = keeper_at(s->k, tk->slot, TAB_SLOTS * sizeof *slot))) {
		snprintf(s->why, sizeof s->why, "its keep has no sampler's table");
		return -1;
	}
	for (uint64_t i = 0; i < TAB_SLOTS; i++) {
		if (entry(s, tk, slot, i))
			n++;
		else if (slot[i])
			lost++;
	}
	snprintf(num[0], sizeof num[0], "%" PRIu64, tk->lost);
	snprintf(num[1], sizeof num[1], "%" PRIu64 " stacks", lost);
	const char *const kv[][2] = { { "dropped", num[0] }, { "salvage_lost", num[1] } };
	keeper_put_info(s, kv, sizeof kv / sizeof kv[0], tk->lang);
	keeper_put_modules(s);
	keeper_put_counters(s);
	format_begin_section(s->w, FORMAT_SEC_STACKS);
	format_put_u64(s->w, n);
	for (uint64_t i = 0; i < TAB_SLOTS; i++) {
		const struct tab_ent *e = entry(s, tk, slot, i);
		const uint64_t *f;
		uint32_t shared;

		if (!e)
			continue;
		f = e->c + tk->nres;
		/* Outer frames in common with the stack before go by reference. */
		shared = pf ? format_common_outer(f, e->depth, pf, (uint32_t)pf_depth) : 0;
		format_put_stack(s->w, e->depth, e->flags, shared ? 1 : 0, shared, f, e->c,
				 (uint32_t)tk->nres);
		pf = f;
		pf_depth = e->depth;
	}
	format_end_section(s->w);
	format_begin_section(s->w, FORMAT_SEC_THREADS);
	format_put_u64(s->w, n);
	for (uint64_t i = 0; i < TAB_SLOTS; i++) {
		const struct tab_ent *e = entry(s, tk, slot, i);

		if (e)
			format_put_u32(s->w, e->tid);
	}
	format_end_section(s->w);
	return 0;
}
