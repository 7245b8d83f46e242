/*
 * elfsyms.c - owns the symbol-table lookups of `cfprof record`
 * (elfsyms_*), through libelf: .symtab when the file has one, else
 * .dynsym.
 */
#include "symbols/elfsyms.h"
#include "symbols/cxxname.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <libiberty/demangle.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef int visit_fn(const GElf_Sym *s, const char *name, void *ctx);

/* Call fn on every symbol of every symbol table until it returns nonzero.
 * 1 if it did, 0 if not, -1 if path is not a readable ELF file. */
static int each_symbol(const char *path, visit_fn *fn, void *ctx)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), stop = 0;
	Elf *e;
	Elf_Scn *scn = NULL;

	if (fd < 0)
		return -1;
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF) {
		if (e)
			elf_end(e);
		close(fd);
		return -1;
	}
	while (!stop && (scn = elf_nextscn(e, scn)) != NULL) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
			continue;
		d = elf_getdata(scn, NULL);
		for (size_t i = 0; d && sh.sh_entsize && i < sh.sh_size / sh.sh_entsize && !stop; i++) {
			GElf_Sym s;
			const char *n;
			if (!gelf_getsym(d, (int)i, &s))
				break;
			n = elf_strptr(e, sh.sh_link, s.st_name);
			if (n)
				stop = fn(&s, n, ctx);
		}
	}
	elf_end(e);
	close(fd);
	return stop != 0;
}

struct fns {
	const char *name;
	uint64_t *out;
	size_t max, n;
};

/* Whether the symbol `sym` is the function the user named `want`: by its
 * symbol-table name, or a C++ function by its name as the views print it,
 * short (thrower, D1::f) or in full (thrower(int)), as demangled. */
static int names(const char *sym, const char *want)
{
	char *full, *brief;
	int same;

	if (!strcmp(sym, want))
		return 1;
	if (sym[0] != '_' || sym[1] != 'Z' ||
	    !(full = cplus_demangle(sym, DMGL_PARAMS | DMGL_ANSI | DMGL_GNU_V3)))
		return 0;
	same = !strcmp(full, want);
	if (!same && (brief = cxxname_simplify(full))) {
		same = !strcmp(brief, want);
		free(brief);
	}
	free(full);
	return same;
}

static int add_fn(const GElf_Sym *s, const char *name, void *ctx)
{
	struct fns *f = ctx;

	if (GELF_ST_TYPE(s->st_info) != STT_FUNC || s->st_shndx == SHN_UNDEF || !s->st_value ||
	    !names(name, f->name))
		return 0;
	for (size_t i = 0; i < f->n; i++)
		if (f->out[i] == s->st_value)
			return 0; /* in .symtab and .dynsym */
	if (f->n < f->max)
		f->out[f->n++] = s->st_value;
	return 0;
}

int elfsyms_functions(const char *path, const char *name, uint64_t *out, size_t max)
{
	struct fns f = { name, out, max, 0 };

	if (each_symbol(path, add_fn, &f) < 0)
		return -1;
	/* add_fn never stops the walk: every table is searched. */
	return (int)f.n;
}

static int is_name(const GElf_Sym *s, const char *name, void *ctx)
{
	(void)s;
	return strcmp(name, ctx) == 0;
}

int elfsyms_mentions(const char *path, const char *name)
{
	return each_symbol(path, is_name, (void *)name);
}
