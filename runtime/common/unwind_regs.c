/*
 * unwind_regs.c - capture from interrupted registers (part of unwind_*,
 * unwind_int.h): unwind_capture_context, _copy and _here, async-signal-
 * safe, with the module snapshot and the dlclose bracket they rely on;
 * and this thread's stack bounds, which every walk stays within.
 */
#include <link.h>
#include <sched.h>
#include <sys/auxv.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>

#include "bounds.h"
#include "format.h"
#include "unwind.h"
#include "keep.h"
#include "modules.h"
#include "unwind_int.h"

__thread uintptr_t uw_lo, uw_hi;

void uw_stack_bounds(uintptr_t sp)
{
	uintptr_t lo, hi;

	/* Never pthread_getattr_np: it takes a lock the program may hold
	 * while it allocates (bounds.c). */
	uw_hi = 1;
	if (bounds_thread(sp, &lo, &hi) == 0) {
		uw_lo = lo;
		uw_hi = hi;
	}
}

/*
 * For a profiler's signal handler (libcpprof) and for a thread that walks a
 * copy of another thread's stack.  Neither may call dl_iterate_phdr (the
 * loader lock: a handler that interrupted its holder would deadlock), lock,
 * or allocate.  So the module list is a snapshot taken outside signal
 * context (unwind_modules_refresh: at start, after dlopen and dlclose), and
 * a cache miss parses the FDE from the module's .eh_frame_hdr, which is
 * read-only mapped memory: pure reads.  Rules go into the same lock-free
 * cache as unwind_capture's (one atomic 64-bit store; any two writers of an
 * entry write the same rule).  Anything the fast rules do not cover stops
 * the walk: the stack keeps what was found and is flagged TRUNCATED; there
 * is no libgcc fallback here.
 *
 * dlclose: a handler between "module found" and "FDE parsed" must not see
 * the module unmapped.  Handlers count themselves in uw_readers around that
 * part and give up while uw_closing is set; unwind_dlclose_begin sets it
 * and waits for the count to drop to zero, the real dlclose runs, and
 * unwind_dlclose_end refreshes the snapshot and flushes the cache (another
 * library may now sit where the closed one was).  Both sides use
 * sequentially consistent atomics, so a handler either sees uw_closing or is
 * counted before the waiter reads the count.  A module that no dlclose can
 * unload (the program, the loader, libc, the vDSO, this library: where a
 * dlclose's own frames are) is read all the same: a sample in the real
 * dlclose (its unmaps, under -e syscalls) had only its innermost frame.
 */

struct uw_mod {
	uintptr_t lo, hi;     /* PT_LOAD range */
	const uint8_t *hdr;   /* PT_GNU_EH_FRAME, or NULL */
	int keep;             /* never unloaded: read while a dlclose runs */
};
struct uw_snap {
	size_t size; /* of this mapping */
	int n;
	struct uw_mod m[]; /* sorted by lo */
};
static struct uw_snap *uw_snap;
static int uw_readers, uw_closing;

struct snap_fill {
	struct uw_snap *s;
	int cap, seen;
};

/* Whether the module at base, holding [lo, hi), is one no dlclose unloads:
 * the program (the loader's first), the loader, the vDSO, libc (whose
 * dl_iterate_phdr this is), this library.  AT_BASE is 0 when the loader
 * was run as a program (ld.so ./prog), and so is the base of a library
 * linked at a fixed address: it matches nothing then. */
static int snap_keep(const struct snap_fill *f, uintptr_t base, uintptr_t lo, uintptr_t hi)
{
	uintptr_t libc = (uintptr_t)dl_iterate_phdr, self = (uintptr_t)snap_keep;
	uintptr_t ld = getauxval(AT_BASE), vdso = getauxval(AT_SYSINFO_EHDR);

	return f->seen == 0 || (ld && base == ld) || (vdso && base == vdso) ||
	       (libc >= lo && libc < hi) || (self >= lo && self < hi);
}

static int snap_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct snap_fill *f = arg;
	struct uw_mod m = { .lo = UINTPTR_MAX };

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t a = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD) {
			if (a < m.lo)
				m.lo = a;
			if (a + ph->p_memsz > m.hi)
				m.hi = a + ph->p_memsz;
		} else if (ph->p_type == PT_GNU_EH_FRAME) {
			m.hdr = (const uint8_t *)a;
		}
	}
	if (m.lo >= m.hi || f->s->n == f->cap) {
		f->seen++;
		return 0;
	}
	m.keep = snap_keep(f, info->dlpi_addr, m.lo, m.hi);
	f->seen++;
	/* Insertion sort: the list is short. */
	int k = f->s->n++;
	while (k > 0 && f->s->m[k - 1].lo > m.lo) {
		f->s->m[k] = f->s->m[k - 1];
		k--;
	}
	f->s->m[k] = m;
	return 0;
}

static void wait_readers(void)
{
	while (__atomic_load_n(&uw_readers, __ATOMIC_SEQ_CST))
		sched_yield();
}

int unwind_modules_refresh(void)
{
	struct snap_fill f;
	struct uw_snap *old;
	size_t size = 1 << 16;
	uint64_t *c = __atomic_load_n(&uw_cache, __ATOMIC_ACQUIRE);

	if (!c) {
		c = mmap(NULL, C_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (c == MAP_FAILED)
			return -1;
		uint64_t *expect = NULL;
		if (!__atomic_compare_exchange_n(&uw_cache, &expect, c, 0, __ATOMIC_ACQ_REL,
						 __ATOMIC_ACQUIRE))
			munmap(c, C_BYTES);
	}
	f.s = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (f.s == MAP_FAILED)
		return -1;
	f.s->size = size;
	f.cap = (int)((size - sizeof(*f.s)) / sizeof(struct uw_mod));
	f.seen = 0;
	dl_iterate_phdr(snap_cb, &f);
	/* The keep's module list follows the snapshot (keep.h): the handler
	 * never calls the loader, so this is where a new library is seen. */
	if (keep_h)
		modules_remember();
	old = __atomic_exchange_n(&uw_snap, f.s, __ATOMIC_SEQ_CST);
	if (old) {
		wait_readers(); /* nobody still reads the old one */
		munmap(old, old->size);
	}
	return 0;
}

void unwind_dlclose_begin(void)
{
	__atomic_add_fetch(&uw_closing, 1, __ATOMIC_SEQ_CST);
	wait_readers();
}

void unwind_dlclose_end(void)
{
	uint64_t *c = __atomic_load_n(&uw_cache, __ATOMIC_ACQUIRE);

	unwind_modules_refresh();
	if (c)
		for (uint32_t i = 0; i < C_SIZE; i++)
			__atomic_store_n(&c[i], 0, __ATOMIC_RELAXED);
	__atomic_sub_fetch(&uw_closing, 1, __ATOMIC_SEQ_CST);
}

int unwind_thread_init(void)
{
	uw_stack_bounds((uintptr_t)__builtin_frame_address(0));
	return uw_hi > 1 ? 0 : -1;
}

int unwind_thread_stack(uintptr_t *lo, uintptr_t *hi)
{
	if (uw_hi <= 1)
		return -1;
	*lo = uw_lo;
	*hi = uw_hi;
	return 0;
}

/* The rule for return address ra (the row at ra - 1), signal-safe. */
static uint32_t rule_safe(uint64_t *c, uint64_t ra)
{
	uint32_t r = c_get(c, ra);
	const struct uw_snap *s;
	uintptr_t pc = ra - 1;
	int lo, hi, closing;

	if (r != R_EMPTY)
		return r;
	if (ra < 2 || ra >> 47)
		return R_FALLBACK;
	__atomic_add_fetch(&uw_readers, 1, __ATOMIC_SEQ_CST);
	closing = __atomic_load_n(&uw_closing, __ATOMIC_SEQ_CST);
	s = __atomic_load_n(&uw_snap, __ATOMIC_SEQ_CST);
	r = R_FALLBACK;
	if (s) {
		lo = 0;
		hi = s->n;
		while (lo < hi) { /* the last module with m.lo <= pc */
			int mid = (lo + hi) / 2;
			if (s->m[mid].lo <= pc)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo > 0 && pc < s->m[lo - 1].hi && s->m[lo - 1].hdr &&
		    (!closing || s->m[lo - 1].keep)) {
			r = uw_rule_from_hdr(s->m[lo - 1].hdr, pc);
			if (r == R_NOFDE) /* the code not read in a signal */
				r = R_FALLBACK;
			/* A module missing from the snapshot (loaded since) is
			 * not cached: it will be found after the refresh. */
			c_put(c, ra, r);
		}
	}
	__atomic_sub_fetch(&uw_readers, 1, __ATOMIC_SEQ_CST);
	return r;
}

/*
 * The walk shared by both entry points.  Stack words are read at
 * addr + delta (a copy of the stack, or the stack itself when delta is 0),
 * only for addr in [sp, hi), 8-aligned, CFAs strictly increasing.  frames[0]
 * is the interrupted pc: its rule is the row at pc itself (cached under
 * pc + 1, which is what a return address pc + 1 would also mean).
 */
static int walk_regs(uintptr_t pc, uintptr_t sp, uintptr_t bp, int bp_known, uintptr_t hi,
		     intptr_t delta, uint64_t *frames, int max, uint32_t *flags)
{
	uint64_t *c = __atomic_load_n(&uw_cache, __ATOMIC_ACQUIRE);
	uint64_t key = pc + 1;
	int n = 0;

	*flags = FORMAT_STACK_PC_FIRST;
	if (max < 1)
		return 0;
	frames[n++] = pc;
	if (!c)
		goto stop;
	for (;;) {
		uint32_t r = rule_safe(c, key);
		uintptr_t cfa;

		if (R_KIND(r) == R_END)
			return n;
		if (R_KIND(r) != R_NORMAL)
			goto stop;
		if (R_ON_RBP(r) && !bp_known)
			goto stop;
		cfa = (R_ON_RBP(r) ? bp : sp) + R_CFA_OFF(r);
		if (cfa <= sp || cfa > hi || (cfa & 7))
			goto stop;
		if (R_RBP_SAVED(r)) {
			uintptr_t slot = cfa + (uintptr_t)R_RBP_OFF(r);
			/* The interrupted frame in its epilogue, past its pop
			 * of rbp (GCC's rows still say where it was saved):
			 * the register holds the caller's value again.  Such
			 * samples lost every caller (pigz: 1.3% of them). */
			if (slot < sp && n == 1)
				;
			else if (slot < sp || slot + 8 > hi || (slot & 7))
				goto stop;
			else {
				bp = *(const uintptr_t *)(slot + (uintptr_t)delta);
				bp_known = 1;
			}
		}
		pc = *(const uint64_t *)(cfa - 8 + (uintptr_t)delta);
		sp = cfa;
		if (!pc)
			return n; /* the end of the stack, as libgcc sees it */
		if (n == max)
			goto stop;
		frames[n++] = pc;
		key = pc;
	}
stop:
	*flags |= FORMAT_STACK_TRUNCATED;
	return n;
}

int unwind_capture_context(const void *ucontext, uint64_t *frames, int max, uint32_t *flags)
{
	const ucontext_t *uc = ucontext;
	uintptr_t pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
	uintptr_t sp = (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
	uintptr_t bp = (uintptr_t)uc->uc_mcontext.gregs[REG_RBP];

	if (uw_hi <= 1 || sp < uw_lo || sp >= uw_hi) {
		/* Bounds unknown (a thread not set up), or a stack that is not
		 * the thread's (sigaltstack, makecontext): the pc alone. */
		*flags = FORMAT_STACK_PC_FIRST | FORMAT_STACK_TRUNCATED;
		if (max < 1)
			return 0;
		frames[0] = pc;
		return 1;
	}
	return walk_regs(pc, sp, bp, 1, uw_hi, 0, frames, max, flags);
}

int unwind_capture_copy(uint64_t pc, uint64_t sp, uint64_t bp, int bp_known, const void *copy,
			size_t len, uint64_t *frames, int max, uint32_t *flags)
{
	return walk_regs(pc, sp, bp, bp_known, sp + len, (intptr_t)((uintptr_t)copy - sp), frames,
			 max, flags);
}

__attribute__((noinline)) int unwind_capture_here(uint64_t *frames, int max, uint64_t ret,
						  uint32_t *flags)
{
	uintptr_t pc, sp, bp;
	int n, i;

	__asm__ volatile("leaq 0(%%rip), %0\n\tmovq %%rsp, %1\n\tmovq %%rbp, %2"
			 : "=&r"(pc), "=&r"(sp), "=&r"(bp));
	if (max < 1)
		return 0;
	n = uw_hi > 1 && sp >= uw_lo && sp < uw_hi ? walk_regs(pc, sp, bp, 1, uw_hi, 0, frames, max, flags)
						   : 0;
	for (i = 0; i < n && i <= UNWIND_MAX_SKIP && frames[i] != ret; i++)
		;
	if (i >= n || frames[i] != ret) {
		frames[0] = ret;
		*flags = FORMAT_STACK_TRUNCATED;
		return 1;
	}
	memmove(frames, frames + i, (size_t)(n - i) * sizeof(*frames));
	*flags &= ~FORMAT_STACK_PC_FIRST;
	return n - i;
}
