/*
 * loader.c - owns the sampler's view of the dynamic loader (ld_*): dlopen
 * and dlclose are interposed so the unwinder's module snapshot, which the
 * signal handler reads instead of calling dl_iterate_phdr, follows what is
 * mapped (unwind.h: unwind_modules_refresh, unwind_dlclose_begin/end).
 *
 * Before a dlclose the loaded objects are remembered (modules.c), so the
 * data file still lists the library for the frames sampled in it.  After
 * it, the address range of each object it unmapped is held by a PROT_NONE
 * placeholder (no memory, address space only), so that nothing mapped
 * later, the same library dlopen'd again included, overlaps it: the data
 * file cannot list two objects over one address, and a library reloaded
 * half over its old place lost its names (tests/e2e/50, under load: the
 * snapshot's own mmap after dlclose moved the reload).  At most
 * LD_HOLDS placeholders, for a program that loads and unloads forever.
 *
 * A library's constructors run inside dlopen, before the refresh: samples
 * taken in them stop at its first frame (flagged truncated).
 */
#include <dlfcn.h>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

#include "modules.h"
#include "state.h"
#include "unwind.h"

typedef void *open_fn(const char *, int);
typedef int close_fn(void *);

CP_VIS void *dlopen(const char *file, int mode)
{
	static open_fn *real;
	void *h;

	if (!real)
		real = (open_fn *)dlsym(RTLD_NEXT, "dlopen");
	if (!real)
		return NULL;
	h = real(file, mode);
	if (h && __atomic_load_n(&cp.on, __ATOMIC_ACQUIRE))
		unwind_modules_refresh();
	return h;
}

#define LD_MAXMODS 1024 /* objects compared around one dlclose */
#define LD_HOLDS 64      /* placeholders at most, for the process */

struct ld_range {
	uintptr_t lo, hi;
};
struct ld_list {
	struct ld_range r[LD_MAXMODS];
	int n;
};

static int ld_range_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct ld_list *l = arg;
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
	if (lo < hi && l->n < LD_MAXMODS)
		l->r[l->n++] = (struct ld_range){ lo, hi };
	return 0;
}

static int ld_holds;

/* Hold the ranges of before that now is without (what dlclose unmapped). */
static void hold_unmapped(const struct ld_list *before, const struct ld_list *now)
{
	uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);

	for (int i = 0; i < before->n; i++) {
		uintptr_t lo = before->r[i].lo & ~(pg - 1), hi = (before->r[i].hi + pg - 1) & ~(pg - 1);
		int k;
		void *p;

		for (k = 0; k < now->n; k++)
			if (now->r[k].lo == before->r[i].lo && now->r[k].hi == before->r[i].hi)
				break;
		if (k < now->n || __atomic_load_n(&ld_holds, __ATOMIC_RELAXED) >= LD_HOLDS)
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
		__atomic_add_fetch(&ld_holds, 1, __ATOMIC_RELAXED);
	}
}

CP_VIS int dlclose(void *handle)
{
	static close_fn *real;
	int rc;

	if (!real)
		real = (close_fn *)dlsym(RTLD_NEXT, "dlclose");
	if (!real)
		return -1;
	if (!__atomic_load_n(&cp.on, __ATOMIC_ACQUIRE))
		return real(handle);
	static struct ld_list before, now; /* under ld_busy: 16 KiB each, off the stack */
	static int ld_busy;
	/* Only one dlclose holds ranges at a time: one nested in another (a
	 * destructor's) or running beside it just does not (never a wait). */
	int mine = !__atomic_exchange_n(&ld_busy, 1, __ATOMIC_ACQUIRE);

	modules_remember(); /* its frames are symbolized after it is gone */
	if (mine) {
		before.n = now.n = 0;
		dl_iterate_phdr(ld_range_cb, &before);
	}
	unwind_dlclose_begin();
	rc = real(handle);
	if (mine) {
		dl_iterate_phdr(ld_range_cb, &now);
		hold_unmapped(&before, &now); /* before the snapshot's mmap can land there */
	}
	unwind_dlclose_end();
	if (mine)
		__atomic_store_n(&ld_busy, 0, __ATOMIC_RELEASE);
	return rc;
}
