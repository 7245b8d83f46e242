/*
 * test_lispview.c - the Lisp view of a Lisp profile (lispview.c, and the
 * model that takes it): which profiles are Lisp ones, pseudo-frames named
 * from INFO, nested top-level forms as one frame, a stack with no Lisp
 * function, and INFO keys a hostile file may hold.
 */
#include "model/lispview.h"
#include "model/model.h"
#include "read/reader.h"
#include "base/util.h"
#include "tap.h"

#include <stdlib.h>

#define NSTACKS 3

static struct prof_kv kv[16];
static struct prof_stack stacks[NSTACKS];
static uint64_t frames[NSTACKS][4], counts[NSTACKS][MPROF_NCOUNTERS];
static unsigned char coded[NSTACKS][2][10 * MPROF_NCOUNTERS];

/* A Lisp profile whose INFO has n entries of kv (set by the caller). */
static void profile(struct profile *p, size_t n)
{
	memset(p, 0, sizeof(*p));
	p->kind = FORMAT_KIND_MPROF;
	p->size = 4096;
	p->info = kv;
	p->ninfo = n;
	p->ncounters = MPROF_NCOUNTERS;
	p->counter_names = (char **)format_mprof_counter_names;
	p->stacks = stacks;
	p->nstacks = NSTACKS;
	/* Coded as the reader keeps a file's stacks. */
	for (size_t i = 0; i < NSTACKS; i++) {
		struct prof_stack *s = &stacks[i];
		s->own = coded[i][0];
		s->own_len = (uint32_t)reader_pack(coded[i][0], frames[i], s->depth, 1);
		s->outer = s->depth ? frames[i][s->depth - 1] : 0;
		s->cv = coded[i][1];
		reader_pack(coded[i][1], counts[i], MPROF_NCOUNTERS, 0);
	}
}

static void set(size_t i, const char *k, const char *v)
{
	kv[i].key = (char *)k;
	kv[i].value = (char *)v;
}

/* Stack i's names joined by '>'. */
static const char *names(const struct model *m, size_t i)
{
	static char buf[256];
	uint32_t path[16], n = model_path(m, &m->stacks[i], path);

	buf[0] = 0;
	for (uint32_t j = 0; j < n; j++) {
		if (j)
			strcat(buf, ">");
		strcat(buf, strtab_get(m->fns, m->sites[path[j]].fn));
	}
	return buf;
}

int main(void)
{
	struct profile p;
	struct model m;
	char err[128];
	uint64_t c[MPROF_NCOUNTERS];

	set(0, "lisp", "ecl");
	set(1, "classes", "c f s o");
	set(2, "lisp.names", "ihs");
	set(3, "lisp.fn.1", "(top-level)");
	set(4, "lisp.fn.2", "make-points");
	set(5, "lisp.fn.3", "make-point");
	set(6, "lisp.fn.0", "never an id");
	set(7, "lisp.fn.x", "not a number");
	set(8, "lisp.fn.999999999", "beyond any file's ids");
	set(9, "lisp.entry.zz", "not an address");

	/* (top-level) > (top-level) > make-points > make-point: 1000 structures */
	frames[0][0] = FORMAT_LISP_FRAME(3);
	frames[0][1] = FORMAT_LISP_FRAME(2);
	frames[0][2] = FORMAT_LISP_FRAME(1);
	frames[0][3] = FORMAT_LISP_FRAME(1);
	stacks[0] = (struct prof_stack){ .depth = 4 };
	counts[0][MPROF_C_ALLOCS + 2] = 1000;
	counts[0][MPROF_C_BYTES + 2] = 80000;
	/* no frame at all: ECL's boot */
	stacks[1] = (struct prof_stack){ .depth = 0 };
	counts[1][MPROF_C_ALLOCS] = 5;
	counts[1][MPROF_C_BYTES] = 80;
	/* an id the file does not name */
	frames[2][0] = FORMAT_LISP_FRAME(9);
	stacks[2] = (struct prof_stack){ .depth = 1 };
	counts[2][MPROF_C_ALLOCS + 1] = 1;

	profile(&p, 2);
	ok(lispview_classes(&p) != NULL, "INFO lisp and classes: a Lisp profile");
	ok(lispview_open(&p) == NULL, "without lisp.names ihs: no Lisp view (C frames shown)");
	profile(&p, 1);
	ok(lispview_classes(&p) == NULL, "without classes: a C profile");

	profile(&p, 10);
	is_str(lispview_classes(&p), "c f s o", "the class labels are INFO's");
	model_init(&m);
	is_int(model_from_profile(&m, &p, NULL, 0, err, sizeof err), 0, "the model of a Lisp profile");
	is_int(m.nstacks, 3, "three stacks");
	is_str(names(&m, 0), "(top-level)>make-points>make-point",
	       "pseudo-frames named from INFO, outermost first, nested top-level forms one");
	is_int(model_counts(&m, &m.stacks[0], c)[MPROF_C_ALLOCS + 2], 1000,
	       "its 1000 objects in class s (the third)");
	is_str(names(&m, 1), LISP_NONE, "a stack with no Lisp function");
	is_str(names(&m, 2), "(lisp function 9)", "an id the file does not name");
	ok(strtab_find(m.fns, "never an id") < 0 && strtab_find(m.fns, "beyond any file's ids") < 0,
	   "bad lisp.fn keys are ignored");
	model_release(&m);
	return tap_done();
}
