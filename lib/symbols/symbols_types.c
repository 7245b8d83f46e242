/*
 * symbols_types.c - the symbolizer's DWARF types (symbols_int.h): the
 * lazily built size -> type names index for mprof's bin table (mprof.1,
 * TABLE 1; the original's BUGS section says its type-name code was
 * unreliable: here the names come straight from DWARF type DIEs), and the
 * type a frame of an allocator's allocate, a make_unique or a std::string
 * member asks storage for, sized by its DWARF (symbols_alloc_type).
 */
#include "symbols/symbols.h"
#include "symbols/symbols_int.h"

#include "symbols/cxxname.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct type_ent {
	uint64_t size;
	const char *name; /* interned */
};

/* A C++ class declared inside a namespace or class and defined outside it
 * (struct Outer::Inner { ... }): the definition names its declaration with
 * DW_AT_specification, whose parents give the qualified name. */
struct decl_ent {
	Dwarf_Off off;
	const char *qname;
};
struct spec_ent {
	Dwarf_Off spec;
	uint64_t size;
	const char *fallback;
};

/* ---- allocating frames' types ----------------------------------------- */

/* sizeof the type `type` refers to, 0 if unknown. */
static uint64_t type_size(Dwarf_Die *die, int attr_name)
{
	Dwarf_Attribute a;
	Dwarf_Die t;
	Dwarf_Word size;

	if (!dwarf_attr_integrate(die, attr_name, &a) || !dwarf_formref_die(&a, &t) ||
	    dwarf_aggregate_size(&t, &size) != 0)
		return 0;
	return size;
}

/* sizeof(T) for a function returning T* (an allocator's allocate), from
 * its DWARF return type; 0 if it returns no pointer to a sized type. */
static uint64_t pointee_size(Dwarf_Die *fn)
{
	Dwarf_Attribute a;
	Dwarf_Die t;

	if (!dwarf_attr_integrate(fn, DW_AT_type, &a) || !dwarf_formref_die(&a, &t) ||
	    dwarf_peel_type(&t, &t) != 0 || dwarf_tag(&t) != DW_TAG_pointer_type)
		return 0;
	return type_size(&t, DW_AT_type);
}

/* sizeof the first template type parameter of a function (make_unique's
 * T), looked for in its DIE, then its abstract origin or declaration. */
static uint64_t tparam_size(Dwarf_Die *fn)
{
	Dwarf_Die d = *fn, c;
	Dwarf_Attribute a;

	for (int hop = 0; hop < 4; hop++) {
		if (dwarf_child(&d, &c) == 0)
			do
				if (dwarf_tag(&c) == DW_TAG_template_type_parameter)
					return type_size(&c, DW_AT_type);
			while (dwarf_siblingof(&c, &c) == 0);
		if (!dwarf_attr(&d, DW_AT_abstract_origin, &a) && !dwarf_attr(&d, DW_AT_specification, &a))
			break;
		if (!dwarf_formref_die(&a, &d))
			break;
	}
	return 0;
}

/*
 * The type an allocating frame asks storage for (cxxname_alloc_type), as
 * f->atype, and its size as f->asize (0: unknown) from die, the frame's
 * function (NULL without DWARF), else from the name of a builtin type.
 */
void symbols_alloc_type(struct symbols *s, const struct fnames *fn, Dwarf_Die *die,
			struct sym_frame *f)
{
	enum cxxname_size how;
	char *t;

	if (!fn->cxx || !fn->full || !(t = cxxname_alloc_type(fn->full, &how)))
		return;
	f->atype = symbols_intern(s, t);
	if (die && how == CXXNAME_SIZE_RETURN)
		f->asize = pointee_size(die);
	else if (die && how == CXXNAME_SIZE_TPARAM)
		f->asize = tparam_size(die);
	if (!f->asize)
		f->asize = cxxname_builtin_size(t);
	free(t);
}

/* ---- types by size ---------------------------------------------------- */

static int add_type(struct symbols *s, uint64_t size, const char *name)
{
	const char *in = symbols_intern(s, name);

	if (!in || symbols_grow(&s->types, &s->types_cap, s->ntypes + 1, sizeof(*s->types)) != 0)
		return -1;
	s->types[s->ntypes].size = size;
	s->types[s->ntypes].name = in;
	s->ntypes++;
	return 0;
}

/* Declared in a file of the program: not a system header, not built in
 * ("<built-in>", which libdw may join to the compilation directory). */
static int own_decl(Dwarf_Die *die)
{
	const char *f = dwarf_decl_file(die), *dir;
	Dwarf_Die cu;
	Dwarf_Attribute a;

	if (!f || base_name(f)[0] == '<')
		return 0;
	/* A relative path is relative to the compilation directory: the
	 * monitor's own sources claim /usr/src/mprof (see the Makefile). */
	if (f[0] != '/' && dwarf_diecu(die, &cu, NULL, NULL) &&
	    (dir = dwarf_formstring(dwarf_attr(&cu, DW_AT_comp_dir, &a))))
		return !has_prefix(dir, "/usr/");
	return !has_prefix(f, "/usr/");
}

static int is_cxx_like(int lang)
{
	switch (lang) {
	case DW_LANG_C89:
	case DW_LANG_C:
	case DW_LANG_C99:
	case DW_LANG_C11:
	case DW_LANG_ObjC:
		return 0;
	}
	return 1;
}

struct walk {
	struct symbols *s;
	int cxx;
	char *qual; /* "ns::Outer::" prefix, growing buffer */
	size_t qlen, qcap;
};

static int qual_push(struct walk *w, const char *name, size_t *saved)
{
	size_t n = strlen(name);

	*saved = w->qlen;
	if (symbols_grow(&w->qual, &w->qcap, w->qlen + n + 3, 1) != 0)
		return -1;
	memcpy(w->qual + w->qlen, name, n);
	memcpy(w->qual + w->qlen + n, "::", 3);
	w->qlen += n + 2;
	return 0;
}

/* "prefix" + name in w->qual's scratch tail; returns a pointer valid until
 * the next push. */
static const char *qualified(struct walk *w, const char *name)
{
	size_t n = strlen(name);

	if (symbols_grow(&w->qual, &w->qcap, w->qlen + n + 1, 1) != 0)
		return NULL;
	memcpy(w->qual + w->qlen, name, n + 1);
	return w->qual;
}

static void walk_children(struct walk *w, Dwarf_Die *parent, int depth);

static void walk_die(struct walk *w, Dwarf_Die *die, int depth)
{
	struct symbols *s = w->s;
	int tag = dwarf_tag(die);
	const char *name = dwarf_diename(die);
	Dwarf_Attribute a;
	Dwarf_Word size;
	bool decl = false;
	size_t saved;

	switch (tag) {
	case DW_TAG_namespace:
		if (!name)
			name = "(anonymous namespace)";
		if (qual_push(w, name, &saved) == 0) {
			walk_children(w, die, depth + 1);
			w->qlen = saved;
		}
		return;
	case DW_TAG_structure_type:
	case DW_TAG_union_type:
	case DW_TAG_class_type:
		dwarf_formflag(dwarf_attr(die, DW_AT_declaration, &a), &decl);
		if (decl) {
			/* Remember the qualified name of a declaration a
			 * later out-of-line definition may refer to. */
			if (name && w->cxx && w->qlen &&
			    symbols_grow(&s->decls, &s->decls_cap, s->ndecls + 1, sizeof(*s->decls)) == 0) {
				const char *q = qualified(w, name);
				const char *in = q ? symbols_intern(s, q) : NULL;
				if (in) {
					s->decls[s->ndecls].off = dwarf_dieoffset(die);
					s->decls[s->ndecls].qname = in;
					s->ndecls++;
				}
			}
			return;
		}
		if (!name || !dwarf_hasattr(die, DW_AT_byte_size) || !own_decl(die) ||
		    dwarf_formudata(dwarf_attr(die, DW_AT_byte_size, &a), &size) != 0)
			goto children;
		if (dwarf_hasattr(die, DW_AT_specification)) {
			Dwarf_Die spec;
			const char *q = qualified(w, name);
			const char *in = q ? symbols_intern(s, q) : NULL;
			if (in && dwarf_formref_die(dwarf_attr(die, DW_AT_specification, &a), &spec) &&
			    symbols_grow(&s->specs, &s->specs_cap, s->nspecs + 1, sizeof(*s->specs)) == 0) {
				s->specs[s->nspecs].spec = dwarf_dieoffset(&spec);
				s->specs[s->nspecs].size = size;
				s->specs[s->nspecs].fallback = in;
				s->nspecs++;
			}
		} else {
			const char *q = qualified(w, name);
			if (q)
				add_type(s, size, q);
		}
	children:
		/* Nested types: scoped by the class in C++, not in C. */
		if (w->cxx && name) {
			if (qual_push(w, name, &saved) == 0) {
				walk_children(w, die, depth + 1);
				w->qlen = saved;
			}
		} else {
			walk_children(w, die, depth + 1);
		}
		return;
	case DW_TAG_typedef:
		if (name && own_decl(die) && dwarf_aggregate_size(die, &size) == 0) {
			const char *q = qualified(w, name);
			if (q)
				add_type(s, size, q);
		}
		return;
	case DW_TAG_subprogram:
	case DW_TAG_lexical_block:
		/* Types local to a function are the program's types too. */
		walk_children(w, die, depth + 1);
		return;
	default:
		return;
	}
}

static void walk_children(struct walk *w, Dwarf_Die *parent, int depth)
{
	Dwarf_Die child;

	if (depth > TYPE_MAX_DEPTH || dwarf_child(parent, &child) != 0)
		return;
	do
		walk_die(w, &child, depth);
	while (dwarf_siblingof(&child, &child) == 0);
}

static void walk_module(struct symbols *s, Dwfl_Module *mod)
{
	Dwarf_Addr bias;
	Dwarf *dw = dwfl_module_getdwarf(mod, &bias);
	Dwarf_CU *cu = NULL;
	Dwarf_Die cudie, subdie;
	uint8_t unit_type;
	struct walk w = { .s = s };

	if (!dw)
		return;
	while (dwarf_get_units(dw, cu, &cu, NULL, &unit_type, &cudie, &subdie) == 0) {
		/* A skeleton's real content is in its split unit. */
		Dwarf_Die *top = unit_type == DW_UT_skeleton && dwarf_tag(&subdie) >= 0 ? &subdie : &cudie;
		w.cxx = is_cxx_like(dwarf_srclang(top));
		w.qlen = 0;
		walk_children(&w, top, 0);
	}
	free(w.qual);
}

static int cmp_decl(const void *a, const void *b)
{
	const struct decl_ent *x = a, *y = b;
	return x->off < y->off ? -1 : x->off > y->off;
}

static int cmp_type(const void *a, const void *b)
{
	const struct type_ent *x = a, *y = b;
	if (x->size != y->size)
		return x->size < y->size ? -1 : 1;
	return strcmp(x->name, y->name);
}

static void build_types(struct symbols *s)
{
	size_t n = 0;

	s->types_built = 1;
	/* A file listed twice is one image: walked once. */
	for (size_t i = 0; i < s->nimgs; i++)
		if (s->imgs[i].own_types)
			walk_module(s, s->imgs[i].dwmod);
	/* Out-of-line definitions take their declaration's qualified name
	 * (offsets are per Dwarf: only a module's own decls can match, which
	 * is how compilers emit them). */
	if (s->ndecls)
		qsort(s->decls, s->ndecls, sizeof(*s->decls), cmp_decl);
	for (size_t i = 0; i < s->nspecs; i++) {
		struct decl_ent key = { .off = s->specs[i].spec }, *d = NULL;
		if (s->ndecls)
			d = bsearch(&key, s->decls, s->ndecls, sizeof(*s->decls), cmp_decl);
		add_type(s, s->specs[i].size, d ? d->qname : s->specs[i].fallback);
	}
	if (s->ntypes)
		qsort(s->types, s->ntypes, sizeof(*s->types), cmp_type);
	for (size_t i = 0; i < s->ntypes; i++) /* interned: equal names, equal pointers */
		if (n == 0 || s->types[n - 1].size != s->types[i].size ||
		    s->types[n - 1].name != s->types[i].name)
			s->types[n++] = s->types[i];
	s->ntypes = n;
	s->type_names = malloc((n ? n : 1) * sizeof(*s->type_names));
	if (!s->type_names) {
		s->ntypes = 0;
		return;
	}
	for (size_t i = 0; i < n; i++)
		s->type_names[i] = s->types[i].name;
}

size_t symbols_types_of_size(struct symbols *s, uint64_t size, const char *const **names)
{
	size_t lo = 0, hi, first;

	if (!s->types_built)
		build_types(s);
	hi = s->ntypes;
	while (lo < hi) { /* first entry with size >= size */
		size_t mid = lo + (hi - lo) / 2;
		if (s->types[mid].size < size)
			lo = mid + 1;
		else
			hi = mid;
	}
	first = lo;
	while (lo < s->ntypes && s->types[lo].size == size)
		lo++;
	*names = s->type_names ? s->type_names + first : NULL;
	return lo - first;
}
