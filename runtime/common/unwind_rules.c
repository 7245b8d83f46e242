/*
 * unwind_rules.c - the rule cache and finding a return address's module
 * (part of unwind_*, unwind_int.h).  A cache miss asks the loader
 * (dl_iterate_phdr, which holds the loader lock while it calls us) for the
 * module holding the address, and reads the rule from its .eh_frame_hdr
 * (unwind_cfi.c).  Seeing a dlclose (dlpi_subs changed) flushes the cache
 * and bumps uw_gen, which voids every thread's previous and remembered
 * walks: another library may now sit where the closed one was.
 */
#include <errno.h>
#include <link.h>
#include <stddef.h>
#include <sys/mman.h>

#include "arena.h"
#include "keep.h"
#include "modules.h"
#include "unwind_int.h"

uint64_t *uw_cache;
unsigned uw_gen;
static unsigned long long uw_subs;
static int uw_subs_known;
static unsigned uw_misses; /* look-ups that missed the cache */

struct find {
	uint64_t ra;
	uint32_t rule;
	int first;
};

static int find_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct find *f = arg;
	uintptr_t pc = f->ra - 1;
	const uint8_t *hdr = NULL;
	uintptr_t lo = 0, len = 0;
	int inside = 0;

	if (f->first) {
		f->first = 0;
		if (size < offsetof(struct dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs))
			return -1; /* cannot see dlclose: never cache */
		/* A library was unloaded: another may now be where it was, so
		 * no cached rule can be trusted. */
		if (uw_subs_known && info->dlpi_subs != uw_subs) {
			for (uint32_t i = 0; i < C_SIZE; i++)
				__atomic_store_n(&uw_cache[i], 0, __ATOMIC_RELAXED);
			__atomic_add_fetch(&uw_gen, 1, __ATOMIC_RELEASE);
		}
		uw_subs = info->dlpi_subs;
		uw_subs_known = 1;
	}
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t a = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && pc >= a && pc - a < ph->p_memsz) {
			inside = 1;
			if (ph->p_flags & PF_R) {
				lo = a;
				len = ph->p_filesz < ph->p_memsz ? ph->p_filesz : ph->p_memsz;
			}
		} else if (ph->p_type == PT_GNU_EH_FRAME)
			hdr = (const uint8_t *)a;
	}
	if (!inside)
		return 0;
	f->rule = hdr ? uw_rule_from_hdr(hdr, pc) : R_FALLBACK;
	if (f->rule == R_NOFDE)
		f->rule = uw_rule_nofde(f->ra, lo, len);
	c_put(uw_cache, f->ra, f->rule);
	return 1;
}

uint32_t uw_rule_lookup(uint64_t ra)
{
	struct find f = { .ra = ra, .rule = R_FALLBACK, .first = 1 };
	uint64_t *c = __atomic_load_n(&uw_cache, __ATOMIC_ACQUIRE);
	int found;

	if (!c) {
		c = mmap(NULL, C_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (c == MAP_FAILED)
			return R_FALLBACK;
		uint64_t *expect = NULL;
		if (!__atomic_compare_exchange_n(&uw_cache, &expect, c, 0, __ATOMIC_ACQ_REL,
						 __ATOMIC_ACQUIRE)) {
			munmap(c, C_BYTES);
			c = expect;
		}
	}
	if (ra < 2 || ra >> 47)
		return R_FALLBACK;
	/* Addresses hash all over the cache, and each page's first look-up
	 * (a read) and first entry fault twice (arena.h).  A program that
	 * misses 64 times will miss more: the rest of the cache is populated
	 * in one call then (python's start: 47 fewer faults, 1% less time); a
	 * small one never pays for 64 pages it does not use.  errno is the
	 * program's (this may run in a signal handler). */
	if (__atomic_add_fetch(&uw_misses, 1, __ATOMIC_RELAXED) == 64) {
		int e = errno;

		arena_populate(c, C_BYTES);
		errno = e;
	}
	found = dl_iterate_phdr(find_cb, &f);
	/* The keep's module list must hold every frame's object (keep.h):
	 * a miss is the first sight of a return address in one (it is
	 * cached then).  An address in no object (JIT code) misses every
	 * time, and no object to remember holds it: a remember for it
	 * cost 26 us a frame. */
	if (keep_h && found)
		modules_note(ra);
	return f.rule;
}
