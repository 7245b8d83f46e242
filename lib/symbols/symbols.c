/*
 * symbols.c - offline symbolization with elfutils libdw (see symbols.h):
 * resolving an address.
 *
 * Owns the interned strings every returned frame points to, and each
 * image's ELF symbols and subprogram index.  The Dwfl sessions built from
 * a profile's module list (one per distinct file) are symbols_open.c's;
 * the DWARF types, the size -> type names index for mprof's bin table and
 * an allocating frame's type, are symbols_types.c's (symbols_int.h: what
 * the files share).
 *
 * Resolution of one address (like eu-addr2line -f -i -C):
 *   1. The recorded module holding the address (binary search); none ->
 *      "0xaddr"; a module whose file could not be opened -> "module+0xoff".
 *   2. The ELF symbol holding it (symtab, else dynsym, also from separate
 *      debug info; the table libdwfl picks, read once with
 *      dwfl_module_getsym_info and sorted, since dwfl_module_addrinfo scans
 *      every symbol on every call): the real function's name and entry.
 *      Code with no symbol and no DWARF name (the vDSO's local helpers) is
 *      named module+entry, the entry from its CFI, else module+offset.
 *   3. DWARF: the concrete DW_TAG_subprogram holding the pc (from a sorted
 *      index of every subprogram's ranges, built once per module; when the
 *      index has none, dwfl_module_addrdie + dwarf_getscopes), then down
 *      through the blocks and DW_TAG_inlined_subroutines holding the pc.
 *      Each inlined subroutine is one frame: the innermost gets the pc's
 *      file:line, each outer one the DW_AT_call_file/DW_AT_call_line of the
 *      inlined frame inside it.  Checked against addr2line -i.
 *   4. The real function is named by the ELF symbol when there is one,
 *      inlined ones by DWARF (linkage name, else DW_AT_name); C++ and
 *      Rust names (legacy "_ZN...17h<hash>E" and v0 "_R...") are
 *      demangled by libiberty's cplus_demangle, the GNU tools' own, and
 *      a C++ name is simplified by cxxname.c unless full names are asked
 *      for.  A frame of an allocator's allocate, a make_unique or a
 *      std::string member also gets the type it allocates, sized by its
 *      DWARF (symbols_alloc_type).
 */
#include "symbols/symbols.h"
#include "symbols/symbols_int.h"

#include "symbols/cxxname.h"
#include "base/util.h"

#include <dwarf.h>
#include <elf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <libiberty/demangle.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* Deepest inline chain we keep for one address; deeper DWARF is cut. */
#define SYM_MAX_INLINE 64
/* Most DIEs kept on the way from an inline pc out to its subprogram. */
#define SCOPES_MAX 256

/* One ELF symbol that can name code, for our own sorted lookup: libdwfl's
 * dwfl_module_addrinfo scans the whole symbol table on every call. */
struct elf_sym {
	uint64_t addr, size; /* absolute */
	const char *name;    /* in the ELF string table, alive with the Dwfl */
	const char *file;    /* a local symbol's source file (the STT_FILE
			      * symbol before it), else NULL */
	int rank;            /* preference among aliases: global, weak, local */
};

/* The code range of one concrete subprogram DIE. */
struct sub_range {
	uint64_t lo, hi; /* DWARF addresses */
	Dwarf_Die die;
};

/* ---- small helpers ---------------------------------------------------- */

int symbols_grow(void *pp, size_t *cap, size_t n, size_t size)
{
	void **p = pp;
	size_t c = *cap ? *cap : 16;
	void *q;

	if (n <= *cap)
		return 0;
	while (c < n)
		c *= 2;
	q = realloc(*p, c * size);
	if (!q)
		return -1;
	*p = q;
	*cap = c;
	return 0;
}

static uint64_t hash_str(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 0x100000001b3ull;
	return h;
}

const char *symbols_intern(struct symbols *s, const char *str)
{
	struct istr *t = &s->strs;
	size_t i;

	if (2 * (t->n + 1) > t->nslots) {
		size_t nn = t->nslots ? 2 * t->nslots : 1024;
		char **ns = calloc(nn, sizeof(*ns));
		if (!ns)
			return NULL;
		for (size_t k = 0; k < t->nslots; k++) {
			if (!t->slots[k])
				continue;
			i = hash_str(t->slots[k]) & (nn - 1);
			while (ns[i])
				i = (i + 1) & (nn - 1);
			ns[i] = t->slots[k];
		}
		free(t->slots);
		t->slots = ns;
		t->nslots = nn;
	}
	i = hash_str(str) & (t->nslots - 1);
	while (t->slots[i]) {
		if (strcmp(t->slots[i], str) == 0)
			return t->slots[i];
		i = (i + 1) & (t->nslots - 1);
	}
	t->slots[i] = strdup(str);
	if (!t->slots[i])
		return NULL;
	t->n++;
	return t->slots[i];
}

/* ---- resolving -------------------------------------------------------- */

static struct sym_mod *find_mod(const struct symbols *s, uint64_t addr);

size_t symbols_text_segments(struct symbols *s, uint64_t addr, struct sym_seg *out, size_t max)
{
	const struct sym_mod *m = find_mod(s, addr);
	GElf_Addr ebias;
	Elf *e;
	size_t np = 0, n = 0;

	if (!m || !m->img || !m->img->dwmod || !(e = dwfl_module_getelf(m->img->dwmod, &ebias)) ||
	    elf_getphdrnum(e, &np) != 0)
		return 0;
	for (size_t i = 0; i < np && n < max; i++) {
		GElf_Phdr ph;
		uint64_t lo;

		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X) ||
		    !ph.p_memsz)
			continue;
		lo = m->bias + (ph.p_vaddr & ~(uint64_t)0xfff);
		out[n++] = (struct sym_seg){ lo, m->bias + ph.p_vaddr + ph.p_memsz,
					     ph.p_offset & ~(uint64_t)0xfff };
	}
	return n;
}

static struct sym_mod *find_mod(const struct symbols *s, uint64_t addr)
{
	size_t lo = 0, hi = s->nmods;

	while (lo < hi) { /* last module with start <= addr */
		size_t mid = lo + (hi - lo) / 2;
		if (s->mods[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || addr >= s->mods[lo - 1].end)
		return NULL;
	return &s->mods[lo - 1];
}

static int strip_cold(char *buf);

/*
 * The names of the function whose symbol or linkage name is raw: demangled
 * (C++ and Rust legacy "_Z...", Rust v0 "_R...") or plain.  Rust's schemes
 * are tried first (a legacy Rust name is a valid C++ one, which would keep
 * its hash); without DMGL_VERBOSE a Rust name loses its hash, as rustfilt
 * prints it, and is otherwise left as it is.  A C++ name is simplified
 * (cxxname.h) unless s->full_names.  name and full are NULL on OOM.
 */
static void names_of(struct symbols *s, const char *raw, struct fnames *fn)
{
	/* A symbol table may spell the version into the name
	 * ("_ZNKSt11logic_error4whatEv@@GLIBCXX_3.4.22",
	 * "__libc_start_main@@GLIBC_2.34"), which the demangler refuses: the
	 * name before it is demangled, the full name keeps it, the short one
	 * does not (as perf and heaptrack print them).  A PLT stub's
	 * name@plt is a name of ours, kept whole. */
	const char *at = strchr(raw, '@');
	char *head = at ? strndup(raw, (size_t)(at - raw)) : NULL, *d = NULL, *buf, *simple;
	int plt;
	const char *m = head ? head : raw;

	memset(fn, 0, sizeof(*fn));
	if (m[0] == '_' && (m[1] == 'Z' || m[1] == 'R')) {
		d = rust_demangle(m, DMGL_PARAMS | DMGL_ANSI);
		if (!d && m[1] == 'Z' && (d = cplus_demangle(m, DMGL_PARAMS | DMGL_ANSI | DMGL_GNU_V3)))
			fn->cxx = 1;
	}
	free(head);
	plt = at && !strcmp(at, "@plt");
	if (!d)
		buf = strdup(raw);
	else if (!at)
		buf = d;
	else if (asprintf(&buf, "%s%s", d, at) < 0)
		buf = NULL;
	if (buf != d)
		free(d);
	if (!buf)
		return;
	fn->cold = strip_cold(buf);
	fn->full = fn->name = symbols_intern(s, buf);
	if (at && !plt) { /* the short name without the version */
		size_t n = strlen(buf), v = strlen(at);
		if (n > v && !strcmp(buf + n - v, at)) {
			buf[n - v] = 0;
			fn->name = symbols_intern(s, buf);
		}
	}
	if (fn->cxx && !s->full_names && (simple = cxxname_simplify(buf))) {
		fn->name = symbols_intern(s, simple);
		free(simple);
	}
	free(buf);
}

/* The linkage name of a subprogram or inlined subroutine DIE, following
 * DW_AT_abstract_origin and DW_AT_specification, else its DW_AT_name. */
static const char *die_raw_name(Dwarf_Die *die)
{
	Dwarf_Attribute a;
	const char *n;

	n = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &a));
	if (!n)
		n = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a));
	if (!n)
		n = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &a));
	return n;
}

/* Entry address (DWARF address space) of a subprogram DIE. */
static int die_entry(Dwarf_Die *die, Dwarf_Addr *entry)
{
	Dwarf_Addr base, start, end;

	if (dwarf_entrypc(die, entry) == 0)
		return 0;
	if (dwarf_ranges(die, 0, &base, &start, &end) > 0) {
		*entry = start;
		return 0;
	}
	return -1;
}

/* File name number idx of the CU that contains die. */
static const char *cu_file(Dwarf_Die *die, Dwarf_Word idx)
{
	Dwarf_Die cu;
	Dwarf_Files *files;
	size_t nfiles;

	if (!dwarf_diecu(die, &cu, NULL, NULL) || dwarf_getsrcfiles(&cu, &files, &nfiles) != 0 ||
	    idx >= nfiles)
		return NULL;
	return dwarf_filesrc(files, idx, NULL, NULL);
}

/* A source path as an interned string, made absolute with the CU's
 * DW_AT_comp_dir when the line table holds it relative (as addr2line
 * prints it, and so that a tool can open the file). */
static const char *src_path(struct symbols *s, Dwarf_Die *cu, const char *file)
{
	Dwarf_Attribute a;
	const char *dir;
	char buf[PATH_MAX];

	if (!file)
		return NULL;
	if (file[0] == '/' || !(dir = dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &a))) ||
	    (size_t)snprintf(buf, sizeof(buf), "%s/%s", dir, file) >= sizeof(buf))
		return symbols_intern(s, file);
	return symbols_intern(s, buf);
}

/* GCC splits a function's unlikely code into "f.cold" (C++: "f() [clone
 * .cold]"), reached by jumps, not calls: it is still f's frame, so it gets
 * f's name.  Returns 1 if a suffix was removed from buf. */
static int strip_cold(char *buf)
{
	size_t n = strlen(buf);
	char *dot;

	if (n > 14 && strcmp(buf + n - 14, " [clone .cold]") == 0) {
		buf[n - 14] = 0;
		return 1;
	}
	dot = strstr(buf, ".cold");
	if (dot && dot != buf && (dot[5] == 0 || (dot[5] == '.' && dot[6] >= '0' && dot[6] <= '9'))) {
		*dot = 0;
		return 1;
	}
	return 0;
}

static int cmp_elf_sym(const void *a, const void *b)
{
	const struct elf_sym *x = a, *y = b;
	/* An external name before a local one, a PLT stub's last; among
	 * them, the name a program calls: not glibc's hidden alias, the
	 * fewest leading underscores, weak or not (read, not __read or
	 * __GI___libc_read; close, glibc's weak alias of __close; clone3,
	 * not __GI___clone3), but the vDSO's __vdso_ names. */
	int cx = x->rank < 2 ? 0 : x->rank, cy = y->rank < 2 ? 0 : y->rank;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (cx != cy)
		return cx - cy;
	if (!strncmp(x->name, "__GI_", 5) != !strncmp(y->name, "__GI_", 5))
		return !strncmp(x->name, "__GI_", 5) ? 1 : -1;
	/* The vDSO's own name says where the time went: libc's
	 * clock_gettime calls it (clock_gettime clock_gettime read as
	 * recursion). */
	if (!strncmp(x->name, "__vdso_", 7) != !strncmp(y->name, "__vdso_", 7))
		return !strncmp(x->name, "__vdso_", 7) ? -1 : 1;
	if (strspn(x->name, "_") != strspn(y->name, "_"))
		return strspn(x->name, "_") < strspn(y->name, "_") ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank - y->rank;
	return strcmp(x->name, y->name); /* deterministic among equals */
}

/* Load m's function symbols (symtab, else dynsym, from the file or its
 * separate debug info, as libdwfl picks them), sorted, one per address. */
/* Section name of scn in e, or "". */
static const char *scn_name(Elf *e, size_t shstrndx, Elf_Scn *scn, GElf_Shdr *sh)
{
	const char *n = gelf_getshdr(scn, sh) ? elf_strptr(e, shstrndx, sh->sh_name) : NULL;

	return n ? n : "";
}

/*
 * The PLT's stubs as symbols "name@plt", as objdump and perf name them
 * (x86-64, GNU ld's layout: stub i of .plt.sec, or else stub i + 1 of
 * .plt, for .rela.plt's relocation i), into syms from k on (room for at
 * most max); the new k.  Else a sample in a stub was named after the
 * sizeless symbol before the PLT (_init+5200).
 */
static size_t plt_syms(struct sym_img *m, struct elf_sym *syms, size_t k, size_t max)
{
	GElf_Addr bias;
	Elf *e = dwfl_module_getelf(m->dwmod, &bias);
	Elf_Scn *scn = NULL, *rela = NULL;
	GElf_Shdr sh, rsh, dsh, plt = { 0 }, sec = { 0 };
	size_t shstrndx, nrel, used = 0, room = 0;
	Elf_Data *rd, *dd;
	uint64_t base;

	if (!e || elf_getshdrstrndx(e, &shstrndx) != 0)
		return k;
	while ((scn = elf_nextscn(e, scn))) {
		const char *n = scn_name(e, shstrndx, scn, &sh);

		if (!strcmp(n, ".plt"))
			plt = sh;
		else if (!strcmp(n, ".plt.sec"))
			sec = sh;
		else if (!strcmp(n, ".rela.plt") && sh.sh_type == SHT_RELA)
			rela = scn;
	}
	if (!rela || !gelf_getshdr(rela, &rsh) || rsh.sh_entsize != sizeof(Elf64_Rela) ||
	    !(rd = elf_getdata(rela, NULL)) || !gelf_getshdr(elf_getscn(e, rsh.sh_link), &dsh) ||
	    !(dd = elf_getdata(elf_getscn(e, rsh.sh_link), NULL)))
		return k;
	base = sec.sh_size ? sec.sh_addr : plt.sh_addr + 16;
	if (!sec.sh_size && !plt.sh_size)
		return k;
	nrel = rsh.sh_size / rsh.sh_entsize;
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < nrel && k < max; i++) {
			GElf_Rela r;
			GElf_Sym sym;
			const char *name;
			uint64_t at = base + 16 * i;

			if (!gelf_getrela(rd, (int)i, &r) || !GELF_R_SYM(r.r_info) ||
			    !gelf_getsym(dd, (int)GELF_R_SYM(r.r_info), &sym) ||
			    !(name = elf_strptr(e, dsh.sh_link, sym.st_name)) || !name[0])
				continue;
			if (at + 16 > (sec.sh_size ? sec.sh_addr + sec.sh_size : plt.sh_addr + plt.sh_size))
				break;
			if (pass == 0) {
				room += strlen(name) + 5;
				continue;
			}
			snprintf(m->pltnames + used, room - used, "%s@plt", name);
			syms[k].addr = at + bias;
			syms[k].size = 16;
			syms[k].name = m->pltnames + used;
			syms[k].rank = 3;
			syms[k].file = NULL;
			used += strlen(name) + 5;
			k++;
		}
		if (pass == 0 && (!room || !(m->pltnames = malloc(room))))
			return k;
	}
	return k;
}

/*
 * Whether a sizeless untyped symbol in section shndx of e is a label in
 * code: an assembly entry point with no .type or .size, as the loader's
 * _dl_start_user, which calls the constructors of every library (it was
 * ld-linux-x86-64.so.2+0x1aba0 under each).  Data sections' markers
 * (__start_SECTION, _end) are not.
 */
static int code_label(Elf *e, GElf_Word shndx)
{
	GElf_Shdr sh;
	Elf_Scn *scn = e ? elf_getscn(e, shndx) : NULL;

	return scn && gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_EXECINSTR);
}

static void load_syms(struct sym_img *m)
{
	int n = dwfl_module_getsymtab(m->dwmod);
	size_t k = 0, nplt = 0;
	GElf_Addr bias;
	Elf *e = dwfl_module_getelf(m->dwmod, &bias);
	Elf_Scn *scn = NULL;
	size_t shstrndx, fsize = 0;
	const char *file = NULL;

	m->syms_loaded = 1;
	/* Room for the PLT's stubs: one a relocation of .rela.plt, as many
	 * as the file can hold (a corrupt sh_size asked malloc for 2^52
	 * entries). */
	if (e && elf_getshdrstrndx(e, &shstrndx) == 0 && elf_rawfile(e, &fsize))
		while ((scn = elf_nextscn(e, scn))) {
			GElf_Shdr sh;

			if (!strcmp(scn_name(e, shstrndx, scn, &sh), ".rela.plt") &&
			    sh.sh_entsize >= 8 && sh.sh_size <= fsize)
				nplt = sh.sh_size / sh.sh_entsize;
		}
	if (n < 1)
		n = 1;
	if (n + nplt <= 1 || !(m->syms = malloc((n + nplt) * sizeof(*m->syms))))
		return;
	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx;
		Elf *se = NULL;
		const char *name = dwfl_module_getsym_info(m->dwmod, i, &sym, &addr, &shndx, &se, NULL);
		int type = GELF_ST_TYPE(sym.st_info), bind = GELF_ST_BIND(sym.st_info);

		if (type == STT_FILE) /* the file of the local symbols after it */
			file = name && name[0] ? name : NULL;
		if (!name || !name[0] || shndx == SHN_UNDEF || sym.st_shndx == SHN_ABS)
			continue;
		if (type != STT_FUNC && type != STT_GNU_IFUNC && !(type == STT_NOTYPE && sym.st_size) &&
		    !(type == STT_NOTYPE && code_label(se, shndx)))
			continue;
		m->syms[k].addr = addr;
		m->syms[k].size = sym.st_size;
		m->syms[k].name = name;
		m->syms[k].rank = bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1 : 2;
		m->syms[k].file = bind == STB_LOCAL ? file : NULL;
		k++;
	}
	k = plt_syms(m, m->syms, k, (size_t)n - 1 + nplt);
	qsort(m->syms, k, sizeof(*m->syms), cmp_elf_sym);
	m->nsyms = 0;
	for (size_t i = 0; i < k; i++) /* keep the preferred alias at each address */
		if (m->nsyms == 0 || m->syms[m->nsyms - 1].addr != m->syms[i].addr)
			m->syms[m->nsyms++] = m->syms[i];
}

size_t symbols_addrs_of(struct symbols *s, const char *name, uint64_t *addrs, size_t max)
{
	size_t k = 0;

	for (size_t i = 0; i < s->nimgs; i++) {
		struct sym_img *m = &s->imgs[i];
		int n = dwfl_module_getsymtab(m->dwmod);

		for (int j = 1; j < n; j++) {
			GElf_Sym sym;
			GElf_Addr addr;
			GElf_Word shndx;
			const char *nm = dwfl_module_getsym_info(m->dwmod, j, &sym, &addr, &shndx, NULL, NULL);
			int type = GELF_ST_TYPE(sym.st_info);

			if (!nm || strcmp(nm, name) != 0 || shndx == SHN_UNDEF)
				continue;
			if (type != STT_FUNC && type != STT_GNU_IFUNC)
				continue;
			if (k < max)
				addrs[k] = addr;
			k++;
		}
	}
	return k < max ? k : max;
}

/* The symbol whose [addr, addr + size) holds pc, else a sizeless symbol
 * right before it; NULL if none. */
static const struct elf_sym *find_sym(struct sym_img *m, uint64_t pc)
{
	size_t lo = 0, hi;

	if (!m->syms_loaded)
		load_syms(m);
	hi = m->nsyms;
	while (lo < hi) { /* last symbol with addr <= pc */
		size_t mid = lo + (hi - lo) / 2;
		if (m->syms[mid].addr <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	if (m->syms[lo - 1].size == 0 || pc < m->syms[lo - 1].addr + m->syms[lo - 1].size)
		return &m->syms[lo - 1];
	/* A symbol nested in a bigger one (an entry label inside a function):
	 * look a little further back for one that holds pc. */
	for (size_t i = lo - 1, k = 0; i-- > 0 && k < 16; k++)
		if (pc < m->syms[i].addr + m->syms[i].size)
			return &m->syms[i];
	return NULL;
}

/*
 * The subprogram index: dwarf_getscopes walks a whole CU per address, which
 * costs milliseconds in big C++ units; instead every concrete subprogram's
 * ranges are listed once per module, and only the one subprogram holding
 * the pc is searched for its inlined subroutines.
 */
static void index_subs(struct sym_img *m, Dwarf_Die *parent, int depth)
{
	Dwarf_Die d;

	if (depth > TYPE_MAX_DEPTH || dwarf_child(parent, &d) != 0)
		return;
	do {
		int tag = dwarf_tag(&d);
		Dwarf_Addr base, lo, hi;
		ptrdiff_t off = 0;

		if (tag == DW_TAG_namespace) { /* clang defines functions inside */
			index_subs(m, &d, depth + 1);
			continue;
		}
		if (tag != DW_TAG_subprogram)
			continue;
		while ((off = dwarf_ranges(&d, off, &base, &lo, &hi)) > 0) {
			if (lo >= hi ||
			    symbols_grow(&m->subs, &m->subs_cap, m->nsubs + 1, sizeof(*m->subs)) != 0)
				continue;
			m->subs[m->nsubs].lo = lo;
			m->subs[m->nsubs].hi = hi;
			m->subs[m->nsubs].die = d;
			m->nsubs++;
		}
	} while (dwarf_siblingof(&d, &d) == 0);
}

static int cmp_sub(const void *a, const void *b)
{
	const struct sub_range *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static void load_subs(struct sym_img *m)
{
	Dwarf *dw = dwfl_module_getdwarf(m->dwmod, &m->dwbias);
	Dwarf_CU *cu = NULL;
	Dwarf_Die cudie, subdie;
	uint8_t unit_type;

	m->subs_loaded = -1;
	if (!dw)
		return;
	m->subs_loaded = 1;
	while (dwarf_get_units(dw, cu, &cu, NULL, &unit_type, &cudie, &subdie) == 0) {
		if (unit_type == DW_UT_skeleton && dwarf_tag(&subdie) >= 0)
			index_subs(m, &subdie, 0);
		else if (unit_type == DW_UT_compile || unit_type == DW_UT_skeleton)
			index_subs(m, &cudie, 0);
	}
	if (m->nsubs)
		qsort(m->subs, m->nsubs, sizeof(*m->subs), cmp_sub);
}

/* The innermost subprogram whose ranges hold the DWARF address a. */
static Dwarf_Die *find_sub(struct sym_img *m, uint64_t a)
{
	size_t lo = 0, hi = m->nsubs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (m->subs[mid].lo <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Ranges nest (GNU C nested functions): the latest start that still
	 * holds a is the innermost. */
	for (size_t i = lo, k = 0; i-- > 0 && k < 64; k++)
		if (a < m->subs[i].hi)
			return &m->subs[i].die;
	return NULL;
}

static int holds_pc(Dwarf_Die *d, uint64_t a)
{
	return dwarf_haspc(d, a) > 0;
}

/*
 * The scopes holding pc, innermost first, ending with the subprogram, like
 * dwarf_getscopes; fills *cu and *bias.  Returns the count, 0 if only the CU
 * is known (no subprogram: assembly), -1 without DWARF for pc.
 */
static int get_scopes(struct sym_img *m, uint64_t pc, Dwarf_Die *out, Dwarf_Die *cu,
		      Dwarf_Addr *bias)
{
	Dwarf_Die chain[SCOPES_MAX], *sub, *cudie, *all = NULL;
	int n = 0, found = 1;

	if (!m->subs_loaded)
		load_subs(m);
	if (m->subs_loaded < 0)
		return -1;
	*bias = m->dwbias;
	sub = find_sub(m, pc - m->dwbias);
	if (sub && dwarf_diecu(sub, cu, NULL, NULL)) {
		/* Walk down from the subprogram through the blocks and
		 * inlined subroutines that hold pc. */
		chain[n++] = *sub;
		while (found && n < SCOPES_MAX) {
			Dwarf_Die c;
			found = 0;
			if (dwarf_child(&chain[n - 1], &c) != 0)
				break;
			do {
				int tag = dwarf_tag(&c);
				if ((tag == DW_TAG_inlined_subroutine || tag == DW_TAG_lexical_block ||
				     tag == DW_TAG_try_block || tag == DW_TAG_catch_block) &&
				    holds_pc(&c, pc - m->dwbias)) {
					chain[n++] = c;
					found = 1;
					break;
				}
			} while (dwarf_siblingof(&c, &c) == 0);
		}
		for (int i = 0; i < n; i++)
			out[i] = chain[n - 1 - i];
		return n;
	}
	/* Not in the index (a subprogram nested somewhere unusual, or none):
	 * the general, slower search. */
	cudie = dwfl_module_addrdie(m->dwmod, pc, bias);
	if (!cudie)
		return -1;
	*cu = *cudie;
	n = dwarf_getscopes(cudie, pc - *bias, &all);
	if (n < 0)
		n = 0;
	if (n > SCOPES_MAX)
		n = SCOPES_MAX;
	for (int i = 0; i < n; i++) {
		out[i] = all[i];
		if (dwarf_tag(&all[i]) == DW_TAG_subprogram) {
			n = i + 1;
			break;
		}
	}
	free(all);
	return n;
}

/*
 * The entry of the function holding pc, from the module's call frame
 * information (.eh_frame, else .debug_frame): for code with no symbol and
 * no DWARF name, such as the vDSO's local helpers (under kvm-clock, time in
 * clock_gettime is spent in one), so that its addresses count as one
 * function rather than one line each.  0 if the CFI does not cover pc.
 */
/* m's .eh_frame_hdr table (PT_GNU_EH_FRAME), if it has the usual one:
 * version 1, 4-byte frame pointer and count, datarel sdata4 pairs. */
static void eh_load(struct sym_img *m)
{
	GElf_Addr bias;
	Elf *e = dwfl_module_getelf(m->dwmod, &bias);
	size_t np = 0;

	if (!e || elf_getphdrnum(e, &np) != 0)
		return;
	for (size_t i = 0; i < np; i++) {
		GElf_Phdr ph;
		Elf_Data *d;
		const unsigned char *p;
		uint32_t n;

		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_GNU_EH_FRAME)
			continue;
		d = elf_getdata_rawchunk(e, (int64_t)ph.p_offset, ph.p_filesz, ELF_T_BYTE);
		if (!d || !d->d_buf || d->d_size < 12)
			return;
		p = d->d_buf;
		if (p[0] != 1 || p[3] != 0x3b || ((p[1] & 0x0f) != 0x03 && (p[1] & 0x0f) != 0x0b) ||
		    (p[2] != 0x03 && p[2] != 0x0b))
			return;
		memcpy(&n, p + 8, 4);
		if (n > (d->d_size - 12) / 8)
			return;
		m->ehtab = p + 12;
		m->ehn = n;
		m->ehvaddr = ph.p_vaddr;
		return;
	}
}

/* The start of the FDE that covers ELF address v, by the table: the
 * greatest start at or below v (FDEs do not overlap); 0 if none. */
static int eh_entry(struct sym_img *m, uint64_t v, uint64_t *entry)
{
	size_t lo = 0, hi;
	int32_t off;

	if (!m->eh_loaded) {
		m->eh_loaded = 1;
		eh_load(m);
	}
	hi = m->ehn;
	while (lo < hi) { /* the first start above v */
		size_t mid = lo + (hi - lo) / 2;

		memcpy(&off, m->ehtab + 8 * mid, 4);
		if (m->ehvaddr + (uint64_t)(int64_t)off <= v)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return 0;
	memcpy(&off, m->ehtab + 8 * (lo - 1), 4);
	*entry = m->ehvaddr + (uint64_t)(int64_t)off;
	return 1;
}

static int cfi_entry(struct sym_img *m, uint64_t pc, uint64_t *entry)
{
	uint64_t fde;
	Dwarf_Addr bias = 0, lo, hi;
	Dwarf_CFI *cfi = dwfl_module_eh_cfi(m->dwmod, &bias);
	Dwarf_Frame *fr = NULL;
	int found = 0;

	if (!cfi)
		cfi = dwfl_module_dwarf_cfi(m->dwmod, &bias);
	if (!cfi || pc < bias || dwarf_cfi_addrframe(cfi, pc - bias, &fr) != 0)
		return 0;
	/* The row's range, which is the function's only where it has one
	 * row: the start of its FDE, from .eh_frame_hdr's table, where that
	 * agrees (perl's nameless functions came out as a name per row). */
	if (dwarf_frame_info(fr, &lo, &hi, NULL) >= 0 && lo <= pc - bias && pc - bias < hi) {
		*entry = (eh_entry(m, pc - bias, &fde) && fde <= lo ? fde : lo) + bias;
		found = 1;
	}
	free(fr);
	return found;
}

/* Whether a module is one of our own runtime libraries, whose inlined
 * helpers a profile need not name: a sample in the sampler's work inside
 * an interposed read is read's (io_kbegin, inlined into it, was 0.4% of
 * dd bs=4k's samples). */
static int own_runtime(const char *base)
{
	static const char *const own[] = { "libcpprof.so", "libcfprof.so", "libmprof.so" };

	for (size_t i = 0; i < sizeof own / sizeof own[0]; i++)
		if (!strcmp(base, own[i]))
			return 1;
	return 0;
}

/* The last part of a path (interned), or NULL. */
static const char *path_base(struct symbols *s, const char *path)
{
	const char *b = path ? strrchr(path, '/') : NULL;

	return path ? symbols_intern(s, b ? b + 1 : path) : NULL;
}

static int is_c(int lang)
{
	return lang == DW_LANG_C89 || lang == DW_LANG_C || lang == DW_LANG_C99 ||
	       lang == DW_LANG_C11;
}

/*
 * Path p with its "." and "x/.." parts taken out and its slashes single,
 * in place: a header's static inline function is one function in CUs
 * that found it as src/../include/util.h and lib/../include/util.h.
 */
static char *path_tidy(char *p)
{
	int abs = *p == '/';
	char *root = p + abs, *out = root; /* out: past the parts kept */
	const char *in = root;
	size_t kept = 0; /* parts kept other than ".." */

	while (*in) {
		const char *end = in;
		size_t n;
		int up;

		while (*end && *end != '/')
			end++;
		n = (size_t)(end - in);
		up = n == 2 && in[0] == '.' && in[1] == '.';
		if (up && kept) { /* "x/..": x goes */
			while (out > root && out[-1] != '/')
				out--;
			if (out > root)
				out--;
			kept--;
		} else if (n && !(n == 1 && in[0] == '.') && !(up && abs)) {
			if (out > root)
				*out++ = '/';
			memmove(out, in, n);
			out += n;
			kept += !up;
		}
		in = *end ? end + 1 : end;
	}
	*out = '\0';
	return p;
}

/*
 * The path of the file that defines a static function (DIE die, a
 * subprogram or an inlined subroutine, its abstract origin's attributes
 * integrated), or NULL; *external set for an external one, the one of
 * its name in the program (glibc's inline realpath of <stdlib.h> is
 * libc's realpath).
 * Not dwarf_decl_file: in DWARF 5, file 0 is the CU's own (clang's
 * default), and libdw 0.188 returns NULL for it.
 */
static const char *static_decl(struct symbols *s, Dwarf_Die *die, int *external)
{
	Dwarf_Attribute a;
	Dwarf_Word idx;
	Dwarf_Die cu;
	Dwarf_Half version;
	Dwarf_Files *files;
	size_t nfiles;
	const char *path, *dir;
	char *tidy;

	if ((*external = dwarf_hasattr_integrate(die, DW_AT_external)) ||
	    !dwarf_attr_integrate(die, DW_AT_decl_file, &a) || dwarf_formudata(&a, &idx) != 0 ||
	    !dwarf_cu_die(a.cu, &cu, &version, NULL, NULL, NULL, NULL, NULL) ||
	    (idx == 0 && version < 5) || dwarf_getsrcfiles(&cu, &files, &nfiles) != 0 ||
	    idx >= nfiles || !(path = dwarf_filesrc(files, idx, NULL, NULL)))
		return NULL;
	/* A path libdw leaves relative is the compilation directory's. */
	if (path[0] != '/' && (dir = dwarf_formstring(dwarf_attr(&cu, DW_AT_comp_dir, &a))))
		tidy = path_tidy(xasprintf("%s/%s", dir, path));
	else
		tidy = path_tidy(xstrdup(path));
	path = symbols_intern(s, tidy);
	free(tidy);
	return path;
}

/* Whether a local symbol's file (STT_FILE) is a C source: "x.c", not
 * LLVM's codegen units ("crate.1a2b-cgu.0", with Rust's __rust_try). */
static int c_file(const char *file)
{
	size_t n = file ? strlen(file) : 0;

	return n > 2 && !strcmp(file + n - 2, ".c");
}

/* Whether a symbol's name is a C function's: not mangled C++ or Rust. */
static int c_symbol(const char *name)
{
	return strncmp(name, "_Z", 2) && strncmp(name, "_R", 2);
}

/* The DIE a concrete one is an instance of (its abstract origin), or
 * itself. */
static Dwarf_Die *origin_of(Dwarf_Die *die, Dwarf_Die *mem)
{
	Dwarf_Attribute a;

	return dwarf_attr(die, DW_AT_abstract_origin, &a) && dwarf_formref_die(&a, mem) ? mem : die;
}

/*
 * Whether inlined scope in, directly inside scope out, is out itself: an
 * instance of the same function "called" from where it is declared, line
 * and column.  GCC splits a function and inlines the part back (glibc's
 * read: the subprogram __GI___libc_read holds an inlined
 * __GI___libc_read from read.c:24:1, its own name's place), which read
 * as two frames of one call (`__read __GI___libc_read`).  Real recursion
 * calls from the body: another column, on a line of its own or not
 * (`long walk(long n) { return n ? walk(n - 1) : 0; }`, inlined into
 * itself at -O3).  Without columns, nothing is taken for it.
 */
static int self_inlined(Dwarf_Die *in, Dwarf_Die *out)
{
	Dwarf_Die m1, m2, *a, *b;
	Dwarf_Attribute at;
	Dwarf_Word call, decl, ccol, dcol;

	if (!out)
		return 0;
	a = origin_of(in, &m1);
	b = origin_of(out, &m2);
	return dwarf_dieoffset(a) == dwarf_dieoffset(b) &&
	       dwarf_formudata(dwarf_attr(in, DW_AT_call_line, &at), &call) == 0 &&
	       dwarf_formudata(dwarf_attr(a, DW_AT_decl_line, &at), &decl) == 0 && call == decl &&
	       dwarf_formudata(dwarf_attr(in, DW_AT_call_column, &at), &ccol) == 0 &&
	       dwarf_formudata(dwarf_attr(a, DW_AT_decl_column, &at), &dcol) == 0 && ccol == dcol;
}

/*
 * Fill f[] (up to SYM_MAX_INLINE) for pc in mod; returns the count (>= 1).
 * addr is the recorded address, for the "+offset" of every frame.
 */
static int resolve_in_module(struct symbols *s, struct sym_mod *mod, uint64_t addr, uint64_t pc,
			     struct sym_frame *f)
{
	/* In the image's addresses: it may be reported at another entry's
	 * bias (the same file listed twice). */
	struct sym_img *m = mod->img;
	uint64_t shift = m->bias - mod->bias;
	const struct elf_sym *es = find_sym(m, pc += shift);
	const char *symname = es ? es->name : NULL;
	uint64_t func_addr = es ? es->addr : 0;
	struct fnames fn = { 0 };
	const char *func;
	int nf = 0, ns;
	Dwarf_Addr bias = 0;
	Dwarf_Die scopes[SCOPES_MAX], cu, sub;
	int have_sub = 0, c_cu = 0;

	addr += shift;

	if (symname && symname[0])
		names_of(s, symname, &fn);

	ns = get_scopes(m, pc, scopes, &cu, &bias);
	if (ns >= 0) {
		const char *file = NULL;
		int line = 0;
		Dwarf_Line *dl = dwarf_getsrc_die(&cu, pc - bias);

		if (dl) {
			file = dwarf_linesrc(dl, NULL, NULL);
			dwarf_lineno(dl, &line);
		}
		c_cu = is_c(dwarf_srclang(&cu));
		for (int i = 0; i < ns; i++) {
			int tag = dwarf_tag(&scopes[i]);
			Dwarf_Attribute a;
			Dwarf_Word w;

			if (tag == DW_TAG_subprogram) {
				sub = scopes[i];
				have_sub = 1;
				break;
			}
			if (tag != DW_TAG_inlined_subroutine || nf == SYM_MAX_INLINE - 1 ||
			    self_inlined(&scopes[i], i + 1 < ns ? &scopes[i + 1] : NULL))
				continue;
			memset(&f[nf], 0, sizeof(f[nf]));
			if ((f[nf].sysname = die_raw_name(&scopes[i]))) {
				struct fnames in;
				names_of(s, f[nf].sysname, &in);
				f[nf].func = in.name;
				f[nf].full = in.full;
				symbols_alloc_type(s, &in, &scopes[i], &f[nf]);
			}
			f[nf].file = src_path(s, &cu, file);
			f[nf].line = line;
			f[nf].inlined = 1;
			if (c_cu)
				f[nf].decl = static_decl(s, &scopes[i], &f[nf].external);
			nf++;
			/* The next frame out is at this inlined call's site. */
			file = NULL;
			line = 0;
			if (dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_file, &a), &w) == 0)
				file = cu_file(&scopes[i], w);
			if (dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_line, &a), &w) == 0)
				line = (int)w;
		}
		/* The real function, last. */
		memset(&f[nf], 0, sizeof(f[nf]));
		f[nf].file = src_path(s, &cu, file);
		f[nf].line = line;
	} else {
		memset(&f[nf], 0, sizeof(f[nf]));
	}
	f[nf].inlined = 0;
	f[nf].sysname = symname && symname[0] ? symname : NULL;
	if (have_sub) {
		Dwarf_Addr entry;
		/* The symbol table names the real function (it has the
		 * linkage name even for static C++ functions); DWARF only
		 * when there is no symbol. */
		if (!fn.name && (f[nf].sysname = die_raw_name(&sub)))
			names_of(s, f[nf].sysname, &fn);
		if ((fn.cold || !func_addr) && die_entry(&sub, &entry) == 0)
			func_addr = entry + bias;
	}
	symbols_alloc_type(s, &fn, have_sub ? &sub : NULL, &f[nf]);
	/* The file that defines a static C function, where two of one name
	 * must be told apart: DWARF's, else (no DWARF for it) the symbol
	 * table's. */
	if (have_sub && c_cu)
		f[nf].decl = static_decl(s, &sub, &f[nf].external);
	else if (!have_sub && es && c_symbol(es->name) && (es->rank < 2 || c_file(es->file))) {
		if (es->rank == 2)
			f[nf].decl = path_base(s, es->file);
		f[nf].external = es->rank < 2;
	}
	func = fn.name;
	f[nf].full = fn.full;
	if (!func) {
		/* Nameless: the function's entry as module+offset when the
		 * CFI knows it (one function), else the address itself. */
		char buf[64 + 256];
		uint64_t entry;
		int whole = cfi_entry(m, pc, &entry);
		snprintf(buf, sizeof(buf), "%.256s+0x%llx", mod->base,
			 (unsigned long long)((whole ? entry : addr) - m->bias));
		func = symbols_intern(s, buf);
		func_addr = whole ? entry : 0;
	}
	f[nf].func = func;
	nf++;
	for (int i = 0; i < nf; i++) {
		if (!f[i].func) /* inlined DIE without a name, or OOM */
			f[i].func = "??";
		if (!f[i].full)
			f[i].full = f[i].func;
		if (!f[i].sysname)
			f[i].sysname = f[i].full;
		f[i].func_addr = func_addr;
		f[i].offset = func_addr ? addr - func_addr : 0;
	}
	if (own_runtime(mod->base)) {
		f[0] = f[nf - 1];
		f[0].own_runtime = 1;
		nf = 1;
	}
	return nf;
}

static int resolve_uncached(struct symbols *s, uint64_t addr, int ra, struct sym_frame *f)
{
	uint64_t pc = ra && addr ? addr - 1 : addr;
	struct sym_mod *m = find_mod(s, pc);
	char buf[64 + 256];

	if (m && m->pending) {
		warnx_("%s", m->pending);
		free(m->pending);
		m->pending = NULL;
	}
	memset(f, 0, sizeof(*f));
	if (m && m->img)
		return resolve_in_module(s, m, addr, pc, f);
	if (!m) {
		/* Code a JIT made, named by its perf map. */
		const struct perfmap_ent *e = perfmap_find(s, pc);

		if (e) {
			f->func = f->full = f->sysname = e->name;
			f->func_addr = e->start;
			f->offset = addr - e->start;
			return 1;
		}
	}
	if (m)
		snprintf(buf, sizeof(buf), "%.256s+0x%llx", m->base,
			 (unsigned long long)(addr - m->bias));
	else
		snprintf(buf, sizeof(buf), "0x%llx", (unsigned long long)addr);
	f->func = f->full = f->sysname = symbols_intern(s, buf);
	return 1;
}

/* Not cached here: the model, the only caller that resolves many
 * addresses, keeps each address's sites itself; a second cache of every
 * frame cost 90 bytes an address (a hostile file can make every frame a
 * new address). */
int symbols_resolve(struct symbols *s, uint64_t addr, int is_return_address,
		    struct sym_frame *out, int max)
{
	struct sym_frame tmp[SYM_MAX_INLINE];
	int n;

	if (max <= 0)
		return 0;
	n = resolve_uncached(s, addr, !!is_return_address, tmp);
	if (n > max)
		n = max;
	for (int i = 0; i < n; i++) {
		out[i] = tmp[i];
		if (!out[i].func) /* out of memory while interning */
			out[i].func = "??";
		if (!out[i].full)
			out[i].full = out[i].func;
		if (!out[i].sysname)
			out[i].sysname = out[i].full;
	}
	return n;
}
