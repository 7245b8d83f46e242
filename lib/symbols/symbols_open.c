/*
 * symbols_open.c - opening the symbolizer (symbols_int.h): a profile's
 * modules, each file in a Dwfl session of its own (one image per distinct
 * file, found by device and inode), the vDSO from this process's own when
 * its build-id matches, build-id checks and the warnings they leave
 * pending; and closing it.
 */
#include "symbols/symbols.h"
#include "symbols/symbols_int.h"

#include "read/reader.h"
#include "base/util.h"

#include <elf.h>
#include <elfutils/libdwfl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static char *const no_debuginfo_path = NULL;
static const Dwfl_Callbacks offline_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = (char **)&no_debuginfo_path, /* default search path */
};

/* A file of the system rather than of the program (/lib is /usr/lib on
 * merged-/usr systems, so both spellings count). */
static int is_system_path(const char *path)
{
	static const char *const pre[] = { "/usr/", "/lib/", "/lib64/", "/lib32/", "/libx32/" };
	char real[PATH_MAX];

	for (size_t i = 0; i < sizeof(pre) / sizeof(pre[0]); i++)
		if (has_prefix(path, pre[i]))
			return 1;
	if (realpath(path, real) && path[0] == '/' && strcmp(real, path) != 0)
		return is_system_path(real);
	return 0;
}

/* ---- opening ---------------------------------------------------------- */

static int cmp_mod(const void *a, const void *b)
{
	const struct sym_mod *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

static void check_build_id(struct sym_mod *m, const struct prof_module *pm, const char *file,
			   int overridden)
{
	const unsigned char *bits;
	GElf_Addr vaddr;
	int n;

	if (!pm->build_id || pm->build_id_len == 0)
		return; /* nothing recorded to compare with */
	n = dwfl_module_build_id(m->img->dwmod, &bits, &vaddr);
	if (n == (int)pm->build_id_len && memcmp(bits, pm->build_id, (size_t)n) == 0)
		return;
	if (overridden)
		warnx_("%s does not match the profiled executable %s (build-id differs); "
		       "symbols may be wrong",
		       file, pm->path ? pm->path : "(unknown)");
	else if (asprintf(&m->pending, "%s has changed since it was profiled (build-id differs); "
				       "symbols may be wrong", file) < 0)
		m->pending = NULL;
}

/*
 * The vDSO has no file.  The runtime records it as "[vdso]" with its
 * build-id; when this process's vDSO (the same kernel build) has that
 * build-id, its image, copied into a memfd, stands in for the file.
 * Returns the fd, or -1 (and a pending warning when it is another kernel's).
 */
static int own_vdso(struct sym_mod *m, const struct prof_module *pm)
{
	const unsigned char *img = (const void *)getauxval(AT_SYSINFO_EHDR);
	const Elf64_Ehdr *eh = (const void *)img;
	const unsigned char *bid = NULL;
	size_t size, bid_len = 0;
	int fd;

	if (!img || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_phentsize != sizeof(Elf64_Phdr))
		return -1;
	size = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
	for (int i = 0; i < eh->e_phnum; i++) {
		const Elf64_Phdr *ph = (const void *)(img + eh->e_phoff + i * sizeof(Elf64_Phdr));
		if (ph->p_type == PT_LOAD && ph->p_offset + ph->p_filesz > size)
			size = ph->p_offset + ph->p_filesz;
		/* Its notes: namesz, descsz, type, "GNU\0", the build-id. */
		for (size_t off = 0; ph->p_type == PT_NOTE && off + 12 <= ph->p_filesz;) {
			const uint32_t *n = (const void *)(img + ph->p_offset + off);
			size_t name = (n[0] + 3) & ~3u, desc = (n[1] + 3) & ~3u;
			if (n[2] == NT_GNU_BUILD_ID && n[0] == 4 &&
			    !memcmp(img + ph->p_offset + off + 12, "GNU", 4)) {
				bid = img + ph->p_offset + off + 12 + name;
				bid_len = n[1];
			}
			off += 12 + name + desc;
		}
	}
	if (size > (1u << 20))
		return -1; /* not what a vDSO looks like */
	if (!bid || bid_len != pm->build_id_len || memcmp(bid, pm->build_id, bid_len) != 0) {
		if (asprintf(&m->pending, "the profile's vDSO is another kernel's (build-id "
					  "differs); its addresses print as module+offset") < 0)
			m->pending = NULL;
		return -1;
	}
	fd = memfd_create("vdso", MFD_CLOEXEC);
	if (fd < 0)
		return -1;
	if (write(fd, img, size) != (ssize_t)size) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * Report fd (owned from here on) as file at bias in a session of its own;
 * the new image, or NULL with the reason in dwfl_errmsg(-1).
 */
static struct sym_img *new_image(struct symbols *s, const char *file, int fd, uint64_t bias,
				 const struct stat *st)
{
	struct sym_img *img = &s->imgs[s->nimgs];

	memset(img, 0, sizeof(*img));
	img->dwfl = dwfl_begin(&offline_callbacks);
	if (!img->dwfl) {
		close(fd);
		return NULL;
	}
	dwfl_report_begin(img->dwfl);
	/* add_p_vaddr = true: base is the bias (load minus link-time
	 * address), right even for objects whose first PT_LOAD is not at
	 * vaddr 0; dwfl ignores the base of ET_EXEC files, which are not
	 * relocated.  On success libdwfl owns fd. */
	img->dwmod = dwfl_report_elf(img->dwfl, file, file, fd, bias, true);
	if (!img->dwmod)
		close(fd);
	if (dwfl_report_end(img->dwfl, NULL, NULL) != 0 || !img->dwmod) {
		dwfl_end(img->dwfl);
		img->dwfl = NULL;
		return NULL;
	}
	img->bias = bias;
	img->dev = st ? st->st_dev : 0;
	img->ino = st ? st->st_ino : 0;
	s->nimgs++;
	return img;
}

/*
 * A file cut short (a copy or download that stopped): its ELF header
 * reads, its section headers lie past its end, and libdw, finding no
 * section, gave no name and no word (wtr+0x1270 for every frame).  Said
 * as a build-id that differs is, and not opened: 1 if so.
 */
static int short_file(struct sym_mod *m, const char *file, int fd, int overridden)
{
	Elf64_Ehdr eh;
	struct stat st;
	uint64_t need;

	if (pread(fd, &eh, sizeof eh, 0) != (ssize_t)sizeof eh || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || fstat(fd, &st) < 0 || !eh.e_shoff)
		return 0;
	need = eh.e_shoff + (uint64_t)eh.e_shnum * eh.e_shentsize;
	if (need <= (uint64_t)st.st_size && eh.e_shoff <= (uint64_t)st.st_size)
		return 0;
	if (overridden)
		warnx_("%s is cut short (%lld bytes; its section headers end at %llu): its "
		       "addresses print as module+offset",
		       file, (long long)st.st_size, (unsigned long long)need);
	else if (asprintf(&m->pending, "%s is cut short (%lld bytes; its section headers end at %llu): "
				       "its addresses print as module+offset",
			  file, (long long)st.st_size, (unsigned long long)need) < 0)
		m->pending = NULL;
	return 1;
}

static void open_module(struct symbols *s, struct sym_mod *m, const struct prof_module *pm,
			const char *override)
{
	const char *file = override ? override : pm->path, *why;
	struct stat st;
	int fd;

	if (!file || !file[0])
		return;
	if (!override && !strcmp(file, "[vdso]")) {
		if ((fd = own_vdso(m, pm)) >= 0)
			m->img = new_image(s, file, fd, pm->bias, NULL);
		return;
	}
	/* The path comes from the data file: never open a FIFO or device. */
	fd = util_open_file(file, &why);
	if (fd < 0) {
		/* Pseudo-modules (linux-vdso.so.1, "[vdso]") are no files:
		 * no warning, their addresses print as module+offset. */
		if (override)
			warnx_("cannot open %s: %s; its addresses print as module+offset", file, why);
		else if (strchr(file, '/') &&
			 asprintf(&m->pending, "cannot open %s: %s; its addresses print as module+offset",
				  file, why) < 0)
			m->pending = NULL;
		return;
	}
	if (fstat(fd, &st) == 0) {
		for (size_t i = 0; i < s->nimgs; i++)
			if (s->imgs[i].dwfl && s->imgs[i].dev == st.st_dev && s->imgs[i].ino == st.st_ino) {
				close(fd);
				m->img = &s->imgs[i];
				check_build_id(m, pm, file, override != NULL);
				return;
			}
	}
	if (short_file(m, file, fd, override != NULL)) {
		close(fd);
		return;
	}
	m->img = new_image(s, file, fd, pm->bias, &st);
	if (!m->img) {
		warnx_("cannot open %s: %s; its addresses print as module+offset", file,
		       dwfl_errmsg(-1));
		return;
	}
	check_build_id(m, pm, file, override != NULL);
}

struct symbols *symbols_open(const struct profile *p, const char *exe_override)
{
	struct symbols *s = calloc(1, sizeof(*s));
	size_t n = p ? p->nmodules : 0;

	if (!s)
		return NULL;
	s->mods = calloc(n ? n : 1, sizeof(*s->mods));
	s->imgs = calloc(n ? n : 1, sizeof(*s->imgs));
	if (!s->mods || !s->imgs)
		goto fail;
	for (size_t i = 0; i < n; i++) {
		const struct prof_module *pm = &p->modules[i];
		struct sym_mod *m = &s->mods[s->nmods];
		const char *ov = i == 0 ? exe_override : NULL;

		m->path = strdup(pm->path ? pm->path : "");
		if (!m->path)
			goto fail;
		s->nmods++;
		m->start = pm->start;
		m->end = pm->end;
		m->bias = pm->bias;
		m->base = m->path[0] ? base_name(m->path) : "??";
		open_module(s, m, pm, ov);
		if (m->img && (i == 0 || (m->path[0] == '/' && !is_system_path(m->path))))
			m->img->own_types = 1;
	}
	qsort(s->mods, s->nmods, sizeof(*s->mods), cmp_mod);
	if (p)
		perfmap_load(s, p);
	return s;
fail:
	symbols_free(s);
	return NULL;
}

int symbols_has_perfmap(const struct symbols *s)
{
	return s->npmap > 0;
}

void symbols_full_names(struct symbols *s, int on)
{
	s->full_names = on;
}

void symbols_free(struct symbols *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nimgs; i++) {
		dwfl_end(s->imgs[i].dwfl);
		free(s->imgs[i].syms);
		free(s->imgs[i].subs);
		free(s->imgs[i].pltnames);
	}
	free(s->imgs);
	free(s->pmap);
	for (size_t i = 0; i < s->nmods; i++) {
		free(s->mods[i].path);
		free(s->mods[i].pending);
	}
	free(s->mods);
	for (size_t i = 0; i < s->strs.nslots; i++)
		free(s->strs.slots[i]);
	free(s->strs.slots);
	free(s->types);
	free(s->type_names);
	free(s->decls);
	free(s->specs);
	free(s);
}
