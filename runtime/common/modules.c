/*
 * modules.c - owns the MODULES section (modules_*): what is mapped at save
 * time, found with dl_iterate_phdr.  Per object: the address range of its
 * PT_LOAD segments, the load bias, the file offset of the first PT_LOAD,
 * the path and the GNU build-id (so the symbolizer can check it reads the
 * same file).
 *
 * The list is collected into scratch mappings first and written after, so
 * the count at the head of the section is the number of entries written
 * even if another thread loads or unloads a library meanwhile.
 */
#include <elf.h>
#include <limits.h>
#include <link.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

#include "arena.h"
#include "format.h"
#include "keep.h"
#include "keepfmt.h"
#include "modules.h"
#include "outfile.h"

struct modules_scratch {
	struct modules_ent *ents;
	size_t nents, cap_ents;
	char *str;
	size_t nstr, cap_str;
	int first, failed;
	int kept; /* the remembered list: in the keep, old copies never unmapped */
	uint64_t vdso;
};

/*
 * Double a scratch mapping to hold at least need bytes.  The remembered
 * list's old copy stays mapped (a reader may be copying it: a save, or the
 * unwinder's modules_note in another thread or a signal handler), and
 * comes from the keep, whose launcher reads it after the program is gone.
 */
static int reserve(void **p, size_t *cap, size_t used, size_t need, int kept)
{
	size_t n = *cap ? *cap : 16384;
	void *q;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	q = kept ? keep_map(n) : arena_map(n);
	if (!q)
		return -1;
	if (*p)
		memcpy(q, *p, used);
	if (!kept)
		arena_unmap(*p, *cap);
	__atomic_store_n(p, q, __ATOMIC_RELEASE);
	*cap = n;
	return 0;
}

static int add_str(struct modules_scratch *m, const void *s, size_t n, uint32_t *off)
{
	if (reserve((void **)&m->str, &m->cap_str, m->nstr, m->nstr + n + 1, m->kept) < 0)
		return -1;
	memcpy(m->str + m->nstr, s, n);
	*off = (uint32_t)m->nstr;
	m->nstr += n;
	return 0;
}

/* The NT_GNU_BUILD_ID descriptor in a PT_NOTE segment, or NULL. */
static const unsigned char *build_id(const unsigned char *p, size_t size, size_t align,
				     uint32_t *len)
{
	size_t off = 0, a = align == 8 ? 8 : 4;

	while (off + sizeof(Elf64_Nhdr) <= size) {
		const Elf64_Nhdr *nh = (const Elf64_Nhdr *)(p + off);
		size_t name = off + sizeof *nh;
		size_t desc = name + ((nh->n_namesz + a - 1) & ~(a - 1));
		size_t next = desc + ((nh->n_descsz + a - 1) & ~(a - 1));

		if (desc > size || desc + nh->n_descsz > size)
			return NULL;
		if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
		    !memcmp(p + name, "GNU", 4)) {
			*len = nh->n_descsz;
			return p + desc;
		}
		off = next;
	}
	return NULL;
}

static int one(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct modules_scratch *m = arg;
	struct modules_ent e = { .start = UINT64_MAX };
	const unsigned char *bid = NULL;
	int first = m->first, i, have_load = 0;
	char exe[PATH_MAX];
	const char *path = info->dlpi_name;
	ssize_t k;

	m->first = 0;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uint64_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD) {
			if (!have_load)
				e.offset = ph->p_offset;
			have_load = 1;
			if (lo < e.start)
				e.start = lo;
			if (lo + ph->p_memsz > e.end)
				e.end = lo + ph->p_memsz;
		} else if (ph->p_type == PT_NOTE && !bid) {
			bid = build_id((const unsigned char *)(uintptr_t)lo, ph->p_filesz,
				       ph->p_align, &e.bid_len);
		}
	}
	if (!have_load)
		return 0;
	/* The vDSO has no file: "[vdso]", with its build-id, so the tools can
	 * use their own when it is the same kernel's. */
	if (m->vdso && e.start <= m->vdso && m->vdso < e.end) {
		path = "[vdso]";
	} else if (first) {
		k = readlink("/proc/self/exe", exe, sizeof exe - 1);
		exe[k > 0 ? k : 0] = 0;
		/* /proc/self gone (a /proc of another pid namespace mounted
		 * over it): the path read before. */
		path = k > 0 ? exe : outfile_exe();
	} else if (!path || !*path) {
		return 0;
	}
	e.bias = info->dlpi_addr;
	if (reserve((void **)&m->ents, &m->cap_ents, m->nents * sizeof e,
		    (m->nents + 1) * sizeof e, m->kept) < 0 ||
	    add_str(m, path, strlen(path), &e.path) < 0 ||
	    (bid && add_str(m, bid, e.bid_len, &e.bid) < 0)) {
		m->failed = 1;
		return 1;
	}
	e.path_len = (uint32_t)strlen(path);
	if (!bid)
		e.bid_len = 0;
	m->ents[m->nents++] = e;
	return 0;
}

int modules_write(struct format_writer *w)
{
	struct modules_scratch m = { .first = 1 };
	size_t i;

	m.vdso = getauxval(AT_SYSINFO_EHDR);
	dl_iterate_phdr(one, &m);
	format_begin_section(w, FORMAT_SEC_MODULES);
	format_put_u32(w, (uint32_t)m.nents);
	for (i = 0; i < m.nents; i++) {
		struct modules_ent *e = &m.ents[i];
		format_put_u64(w, e->start);
		format_put_u64(w, e->end);
		format_put_u64(w, e->bias);
		format_put_u64(w, e->offset);
		format_put_blob(w, m.str + e->path, e->path_len);
		format_put_blob(w, e->bid_len ? m.str + e->bid : "", e->bid_len);
	}
	format_end_section(w);
	arena_unmap(m.ents, m.cap_ents);
	arena_unmap(m.str, m.cap_str);
	return m.failed ? -1 : 0;
}

/* ---- objects unloaded before the save, and the keep's list ---- */

/*
 * A profiler keeps frames of a library that is dlclose'd before the save;
 * modules_write would no longer list it and its frames would stay
 * addresses.  modules_remember keeps every object it sees (at start,
 * before each dlclose, and, while the keep is on, when the unwinder meets
 * an address no remembered object holds: modules_note), modules_write_all
 * lists the remembered ones that nothing mapped now overlaps, after the
 * live ones (of remembered ones that overlap each other, the first).
 *
 * One writer at a time (rem_busy; a caller that finds it busy leaves the
 * work to the holder, rem_again), and readers without a lock: entries are
 * appended, each whole before nents says so (release), and a grown array
 * leaves the old one mapped.  While the keep is on, the list lives in it
 * and its header points at it: the launcher's module list.
 */
static struct modules_scratch remembered = { .first = 1, .kept = 1 };
static int rem_busy, rem_again;
static int hold_busy; /* a dlclose holds ranges (below) */

static int add_ent(struct modules_scratch *to, const struct modules_scratch *from,
		   const struct modules_ent *e)
{
	struct modules_ent c = *e;

	if (reserve((void **)&to->ents, &to->cap_ents, to->nents * sizeof c,
		    (to->nents + 1) * sizeof c, to->kept) < 0 ||
	    add_str(to, from->str + e->path, e->path_len, &c.path) < 0 ||
	    (e->bid_len && add_str(to, from->str + e->bid, e->bid_len, &c.bid) < 0))
		return -1;
	to->ents[to->nents] = c;
	__atomic_store_n(&to->nents, to->nents + 1, __ATOMIC_RELEASE);
	return 0;
}

/* The keep's header points at the list (the launcher reads it after the
 * program is gone: no order to keep with anyone). */
static void publish_kept(void)
{
	struct keep_head *h = keep_h;

	if (!h || !keep_has(remembered.ents) || !keep_has(remembered.str))
		return;
	h->mod_ents = (uint64_t)(uintptr_t)remembered.ents;
	h->mod_str = (uint64_t)(uintptr_t)remembered.str;
	h->mod_nstr = remembered.nstr;
	__atomic_store_n(&h->mod_n, remembered.nents, __ATOMIC_RELEASE);
}

static int remember_once(void)
{
	struct modules_scratch now = { .first = 1 };
	int rc = 0;

	now.vdso = getauxval(AT_SYSINFO_EHDR);
	dl_iterate_phdr(one, &now);
	for (size_t i = 0; i < now.nents && rc == 0; i++) {
		const struct modules_ent *e = &now.ents[i];
		size_t k;

		for (k = 0; k < remembered.nents; k++) {
			const struct modules_ent *r = &remembered.ents[k];
			if (r->start == e->start && r->path_len == e->path_len &&
			    !memcmp(remembered.str + r->path, now.str + e->path, e->path_len))
				break;
		}
		if (k == remembered.nents)
			rc = add_ent(&remembered, &now, e);
	}
	arena_unmap(now.ents, now.cap_ents);
	arena_unmap(now.str, now.cap_str);
	publish_kept();
	return rc || now.failed ? -1 : 0;
}

int modules_remember(void)
{
	int rc = 0;

	for (;;) {
		if (__atomic_exchange_n(&rem_busy, 1, __ATOMIC_ACQUIRE)) {
			__atomic_store_n(&rem_again, 1, __ATOMIC_RELEASE);
			return 0; /* the holder goes round once more */
		}
		__atomic_store_n(&rem_again, 0, __ATOMIC_RELAXED);
		rc |= remember_once();
		__atomic_store_n(&rem_busy, 0, __ATOMIC_RELEASE);
		if (!__atomic_load_n(&rem_again, __ATOMIC_ACQUIRE))
			return rc ? -1 : 0;
	}
}

void modules_fork_child(void)
{
	__atomic_store_n(&rem_busy, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&hold_busy, 0, __ATOMIC_RELAXED);
}

void modules_note(uint64_t addr)
{
	size_t n = __atomic_load_n(&remembered.nents, __ATOMIC_ACQUIRE);
	const struct modules_ent *e = __atomic_load_n(&remembered.ents, __ATOMIC_ACQUIRE);

	for (size_t i = 0; i < n; i++)
		if (e[i].start <= addr && addr < e[i].end)
			return;
	modules_remember();
}

int modules_write_all(struct format_writer *w)
{
	struct modules_scratch m = { .first = 1 };
	size_t i;

	size_t nrem = __atomic_load_n(&remembered.nents, __ATOMIC_ACQUIRE);
	struct modules_scratch rem = {
		.ents = __atomic_load_n(&remembered.ents, __ATOMIC_ACQUIRE),
		.str = __atomic_load_n(&remembered.str, __ATOMIC_ACQUIRE),
	};

	m.vdso = getauxval(AT_SYSINFO_EHDR);
	dl_iterate_phdr(one, &m);
	for (i = 0; i < nrem && !m.failed; i++) {
		const struct modules_ent *r = &rem.ents[i];
		size_t k;

		/* Nor an earlier remembered one: an object dlclose'd, then
		 * another mapped at its address and dlclose'd too (a reader
		 * rejects a file whose modules overlap). */
		for (k = 0; k < m.nents; k++)
			if (r->start < m.ents[k].end && m.ents[k].start < r->end)
				break;
		if (k == m.nents && add_ent(&m, &rem, r) < 0)
			m.failed = 1;
	}
	format_begin_section(w, FORMAT_SEC_MODULES);
	format_put_u32(w, (uint32_t)m.nents);
	for (i = 0; i < m.nents; i++) {
		struct modules_ent *e = &m.ents[i];
		format_put_u64(w, e->start);
		format_put_u64(w, e->end);
		format_put_u64(w, e->bias);
		format_put_u64(w, e->offset);
		format_put_blob(w, m.str + e->path, e->path_len);
		format_put_blob(w, e->bid_len ? m.str + e->bid : "", e->bid_len);
	}
	format_end_section(w);
	arena_unmap(m.ents, m.cap_ents);
	arena_unmap(m.str, m.cap_str);
	return m.failed ? -1 : 0;
}

/*
 * Placeholders.  A library dlclose'd and loaded again may come back half
 * over its old place (any mmap between the two, the profiler's own
 * included, can move it); a data file cannot list two objects over one
 * address, so the second load's frames would go unnamed.  Around each
 * dlclose, the ranges of the objects it unmapped are held with PROT_NONE
 * mappings: never over anything (MAP_FIXED_NOREPLACE), address space
 * without memory, HOLD_MAX at most for the process (each is a mapping,
 * and a process has a limit on those).
 */
#define HOLD_MAXMODS 1024 /* objects compared around one dlclose */
#define HOLD_MAX 64      /* placeholders at most, for the process */

struct hold_range {
	uintptr_t lo, hi;
};
struct hold_list {
	struct hold_range r[HOLD_MAXMODS];
	int n;
};

static int hold_range_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct hold_list *l = arg;
	uintptr_t lo = UINTPTR_MAX, hi = 0;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t a = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type != PT_LOAD)
			continue;
		if (a < lo)
			lo = a;
		if (a + ph->p_memsz > hi)
			hi = a + ph->p_memsz;
	}
	if (lo < hi && l->n < HOLD_MAXMODS)
		l->r[l->n++] = (struct hold_range){ lo, hi };
	return 0;
}

static int hold_count;

/* Hold the ranges of before that now is without (what dlclose unmapped). */
static void hold_unmapped(const struct hold_list *before, const struct hold_list *now)
{
	uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);

	for (int i = 0; i < before->n; i++) {
		uintptr_t lo = before->r[i].lo & ~(pg - 1), hi = (before->r[i].hi + pg - 1) & ~(pg - 1);
		int k;
		void *p;

		for (k = 0; k < now->n; k++)
			if (now->r[k].lo == before->r[i].lo && now->r[k].hi == before->r[i].hi)
				break;
		if (k < now->n || __atomic_load_n(&hold_count, __ATOMIC_RELAXED) >= HOLD_MAX)
			continue;
		/* Never over anything (NOREPLACE); a kernel without it takes
		 * the address as a hint: then whatever it gave is let go. */
		p = mmap((void *)lo, hi - lo, PROT_NONE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
		if (p == MAP_FAILED)
			continue;
		if (p != (void *)lo) {
			munmap(p, hi - lo);
			continue;
		}
		__atomic_add_fetch(&hold_count, 1, __ATOMIC_RELAXED);
	}
}

static struct hold_list hold_before, hold_now; /* under hold_busy */

int modules_hold_begin(void)
{
	/* Only one dlclose holds ranges at a time: one nested in another (a
	 * destructor's) or running beside it does not (never a wait). */
	if (__atomic_exchange_n(&hold_busy, 1, __ATOMIC_ACQUIRE))
		return 0;
	hold_before.n = 0;
	dl_iterate_phdr(hold_range_cb, &hold_before);
	return 1;
}

void modules_hold_end(int mine)
{
	if (!mine)
		return;
	hold_now.n = 0;
	dl_iterate_phdr(hold_range_cb, &hold_now);
	hold_unmapped(&hold_before, &hold_now);
	__atomic_store_n(&hold_busy, 0, __ATOMIC_RELEASE);
}
