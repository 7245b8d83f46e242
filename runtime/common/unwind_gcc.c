/*
 * unwind_gcc.c - the reference unwinder (part of unwind_*, unwind_int.h):
 * libgcc's _Unwind_Backtrace, the fallback of unwind_capture for every
 * stack the fast walk does not fully understand, and the other side of
 * check mode's comparison.  It calls the loader (dl_iterate_phdr) and may
 * allocate: never from a signal handler.
 */
#include <link.h>
#include <string.h>
#include <unwind.h>

#include "format.h"
#include "unwind_int.h"

struct unwind_walk {
	uint64_t *frames;
	uint64_t ret;
	int max, n, skipped, found, truncated;
};

static _Unwind_Reason_Code unwind_step(struct _Unwind_Context *ctx, void *arg)
{
	struct unwind_walk *w = arg;
	uint64_t ip = _Unwind_GetIP(ctx);

	if (!w->found) {
		if (ip != w->ret)
			return ++w->skipped > UNWIND_MAX_SKIP ? _URC_END_OF_STACK : _URC_NO_REASON;
		w->found = 1;
	}
	if (!ip)
		return _URC_END_OF_STACK;
	if (w->n == w->max) {
		w->truncated = 1;
		return _URC_END_OF_STACK;
	}
	w->frames[w->n++] = ip;
	return _URC_NO_REASON;
}

/*
 * libgcc_s's text, [lo, hi) (0, 0 until found or if not loaded).  libgcc
 * allocates while it holds its own lock (object_mutex: sorting the FDEs of
 * frames a JIT registered with __register_frame, the first time an unwind
 * searches them); an allocation made there must not call back into
 * libgcc, which would take that lock again and hang.  Found by name: the
 * address of _Unwind_Backtrace may be a PLT entry in the executable (the
 * runtime linked from libmprof.a into a non-PIE program), and a program's
 * own static copy of libgcc has a lock of its own, which we never take.
 */
static uintptr_t uw_gcc_lo, uw_gcc_hi;
static int uw_gcc_state; /* 0 not looked for, 1 looked for */

static int gcc_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	const char *name = info->dlpi_name, *base = name ? strrchr(name, '/') : NULL;
	uintptr_t lo = UINTPTR_MAX, hi = 0;

	(void)size, (void)arg;
	base = base ? base + 1 : name;
	if (!base || strncmp(base, "libgcc_s.so", 11) != 0)
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		uintptr_t a = info->dlpi_addr + ph->p_vaddr;
		if (a < lo)
			lo = a;
		if (a + ph->p_memsz > hi)
			hi = a + ph->p_memsz;
	}
	__atomic_store_n(&uw_gcc_lo, lo, __ATOMIC_RELAXED);
	__atomic_store_n(&uw_gcc_hi, hi, __ATOMIC_RELAXED);
	return 1;
}

static int called_by_libgcc(uint64_t ret)
{
	if (!__atomic_load_n(&uw_gcc_state, __ATOMIC_ACQUIRE)) {
		dl_iterate_phdr(gcc_cb, NULL);
		__atomic_store_n(&uw_gcc_state, 1, __ATOMIC_RELEASE);
	}
	return ret >= __atomic_load_n(&uw_gcc_lo, __ATOMIC_RELAXED) &&
	       ret < __atomic_load_n(&uw_gcc_hi, __ATOMIC_RELAXED);
}

__attribute__((noinline)) int unwind_capture_slow(uint64_t *frames, int max, uint64_t ret,
						  uint32_t *flags)
{
	struct unwind_walk w = { .frames = frames, .ret = ret, .max = max };

	*flags = 0;
	if (called_by_libgcc(ret)) {
		/* Inside libgcc's unwinder, which may hold its lock: the
		 * return address alone. */
		frames[0] = ret;
		*flags = FORMAT_STACK_TRUNCATED;
		return 1;
	}
	_Unwind_Backtrace(unwind_step, &w);
	if (!w.found) {
		frames[0] = ret;
		*flags = FORMAT_STACK_TRUNCATED;
		return 1;
	}
	if (w.truncated)
		*flags = FORMAT_STACK_TRUNCATED;
	return w.n;
}
