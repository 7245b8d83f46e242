/*
 * symbols_int.h - what the symbolizer's files share, and nothing outside
 * the symbolizer may use (its interface is symbols.h).  The symbolizer is
 * one module (symbols_*) in several files, one part each:
 *
 *   symbols.c        resolving an address: modules, ELF symbols, DWARF
 *                    subprograms and inline frames, names; the interned
 *                    strings every returned frame points to
 *   symbols_open.c   opening: the modules, their files' images (the
 *                    vDSO's too), build-id checks; and closing
 *   symbols_types.c  DWARF types: the program's named types by size
 *                    (mprof's table 1), and the type an allocating frame
 *                    asks storage for
 */
#ifndef SYMBOLS_INT_H
#define SYMBOLS_INT_H

#include <elfutils/libdwfl.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

/* Deepest nesting of namespaces/classes/functions walked for types (and
 * for the subprogram index, symbols.c). */
#define TYPE_MAX_DEPTH 128

struct elf_sym;
struct sub_range;
struct type_ent;
struct decl_ent;
struct spec_ent;
struct sym_frame;

/*
 * One file opened for symbols, in a Dwfl session of its own: libdwfl frees
 * an earlier module when a later one's range overlaps it (a data file's
 * ranges are input, and may lie), so a session never holds two modules.
 * Module entries naming the same file (device and inode) share its image,
 * reported at the first one's bias: a data file naming one library a
 * thousand times loads its symbols and DWARF once.
 */
struct sym_img {
	Dwfl *dwfl;
	Dwfl_Module *dwmod;
	dev_t dev;
	ino_t ino;
	uint64_t bias;             /* the bias it was reported at */
	struct sub_range *subs;    /* sorted by lo; built on first use */
	size_t nsubs, subs_cap;
	Dwarf_Addr dwbias;         /* module address minus DWARF address */
	int subs_loaded;          /* 1 built, -1 no DWARF */
	struct elf_sym *syms;      /* sorted by addr; built on first use */
	size_t nsyms;
	int syms_loaded;
	int own_types;             /* the program's own code: walk its types */
	/* .eh_frame_hdr's table of FDE starts (symbols.c's eh_entry):
	 * ehn pairs of 32-bit offsets from ehvaddr, loaded on first use. */
	char *pltnames;            /* the "name@plt" strings syms point to */
	const unsigned char *ehtab;
	size_t ehn;
	uint64_t ehvaddr;
	int eh_loaded;
};

struct sym_mod {
	uint64_t start, end, bias; /* as recorded */
	char *path;                /* recorded path */
	const char *base;          /* basename of path, points into it */
	struct sym_img *img;       /* NULL: no file, addresses print as base+off */
	char *pending;             /* a warning, said when the first address
				    * resolves here: a module no frame lies in
				    * (the preloaded monitor) stays quiet */
};

struct istr {
	char **slots;
	size_t nslots, n;
};

/* A piece of code a JIT made, from its perf map (perfmap.c). */
struct perfmap_ent {
	uint64_t start, size;
	uint32_t line;    /* the map's line: a later one wins */
	const char *name; /* interned */
};

struct symbols {
	int full_names;       /* C++ names as demangled, not simplified */
	struct perfmap_ent *pmap; /* sorted by start, then line */
	size_t npmap;
	struct sym_mod *mods; /* sorted by start */
	size_t nmods;
	struct sym_img *imgs; /* one per distinct file; never moves */
	size_t nimgs;
	struct istr strs;
	/* types, built on first symbols_types_of_size (symbols_types.c) */
	int types_built;
	struct type_ent *types;
	size_t ntypes, types_cap;
	const char **type_names; /* parallel to types after sorting */
	struct decl_ent *decls;
	size_t ndecls, decls_cap;
	struct spec_ent *specs;
	size_t nspecs, specs_cap;
};

/* The names of one function. */
struct fnames {
	const char *name; /* what views print: C++ simplified (cxxname.h)
			   * unless full_names; interned */
	const char *full; /* demangled in full; interned */
	int cxx;          /* a demangled C++ name */
	int cold;         /* GCC's cold part of it ("f.cold") */
};

/* Make room for n elements of size bytes at *pp (capacity *cap, doubled
 * from 16): 0, or -1 on OOM (*pp unchanged). */
int symbols_grow(void *pp, size_t *cap, size_t n, size_t size);

/* Interned copy of s (equal strings share one copy), NULL on OOM. */
const char *symbols_intern(struct symbols *s, const char *str);
/* The profiled process's perf map (/tmp/perf-PID.map), if it wrote one
 * (perfmap.c); the entry that holds pc, or NULL. */
void perfmap_load(struct symbols *s, const struct profile *p);
const struct perfmap_ent *perfmap_find(const struct symbols *s, uint64_t pc);

/*
 * symbols_types.c: the type an allocating frame asks storage for
 * (cxxname_alloc_type), as f->atype, and its size as f->asize (0: unknown)
 * from die, the frame's function (NULL without DWARF), else from the name
 * of a builtin type.
 */
void symbols_alloc_type(struct symbols *s, const struct fnames *fn, Dwarf_Die *die,
			struct sym_frame *f);

static inline const char *base_name(const char *path)
{
	const char *b = strrchr(path, '/');
	return b ? b + 1 : path;
}

static inline int has_prefix(const char *s, const char *p)
{
	return strncmp(s, p, strlen(p)) == 0;
}

#endif
