/*
 * unwind.c - owns stack capture (unwind_*): a caching x86-64 DWARF CFI
 * unwinder, with libgcc's _Unwind_Backtrace as the reference and the
 * fallback for every frame it does not fully understand.
 *
 * Fast path: for each return address, a *rule* says how to find the
 * caller's frame: CFA = rsp|rbp + offset, return address at CFA-8, rbp
 * saved at CFA+k or unchanged, rsp = CFA.  Rules are computed once from
 * .eh_frame_hdr/.eh_frame (the module found with dl_iterate_phdr, the CIE
 * and FDE programs interpreted up to the address) and kept in a lock-free
 * cache of 64-bit words, one per return address.  Anything else (CFA
 * expressions, CFA on another register, signal frames, no FDE, unknown
 * opcodes, a read outside this thread's stack) makes the whole capture
 * fall back to _Unwind_Backtrace, so the result is always the reference
 * unwinder's (MPROF_UNWIND_CHECK=1 runs both and compares; doc/runtime.md).
 */
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>
#include <unwind.h>

#include "bounds.h"
#include "format.h"
#include "stackhash.h"
#include "unwind.h"

const char unwind_name[] = "mprof CFI cache (libgcc _Unwind_Backtrace fallback)";

/* Frames of the monitor itself above `ret`; more means `ret` is not there. */
#define UNWIND_MAX_SKIP 64

/* ---- the reference unwinder (libgcc) ---- */

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

__attribute__((noinline)) static int unwind_capture_slow(uint64_t *frames, int max, uint64_t ret,
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

/* ---- rules and their cache ---- */

/*
 * A rule in 32 bits: kind (bits 0-1), CFA on rbp rather than rsp (bit 2),
 * CFA offset (bits 3-19, unsigned), rbp saved (bit 20) at CFA + 8 * the
 * signed 11-bit field (bits 21-31).  A rule that does not fit is FALLBACK.
 */
enum { R_EMPTY, R_NORMAL, R_END, R_FALLBACK };
#define R_KIND(r) ((r) & 3u)
#define R_ON_RBP(r) ((r) >> 2 & 1u)
#define R_CFA_OFF(r) ((r) >> 3 & 0x1ffffu)
#define R_RBP_SAVED(r) ((r) >> 20 & 1u)
#define R_RBP_OFF(r) ((int64_t)(int32_t)(r) >> 21 << 3)
#define R_CFA_MAX 0x1ffff
#define R_RBP_MIN (-1024 * 8)
#define R_RBP_MAX (1023 * 8)

/*
 * The cache: 2^15 words, direct mapped.  A word is (ra >> 15) << 32 | rule:
 * the slot index is ra's low 15 bits folded with the next 15 (the tag's
 * own), so the slot and the tag together give ra back exactly (user
 * addresses are below 2^47; others are never cached).  One 64-bit word
 * per entry: readers need no lock and can never
 * see half an entry.  Entries are written only with the loader lock held
 * (inside dl_iterate_phdr), which also orders them with the flush after a
 * dlclose.
 */
#define C_BITS 15
#define C_SIZE (1u << C_BITS)
#define C_BYTES (C_SIZE * sizeof(uint64_t))
static uint64_t *uw_cache;

static inline uint32_t c_slot(uint64_t ra)
{
	return (uint32_t)(ra ^ ra >> 15) & (C_SIZE - 1);
}

static inline uint32_t c_get(const uint64_t *c, uint64_t ra)
{
	uint64_t e = __atomic_load_n(&c[c_slot(ra)], __ATOMIC_RELAXED);
	return e >> 32 == ra >> 15 ? (uint32_t)e : R_EMPTY;
}

static void c_put(uint64_t *c, uint64_t ra, uint32_t rule)
{
	if (c && ra >> 47 == 0)
		__atomic_store_n(&c[c_slot(ra)], (ra >> 15) << 32 | rule, __ATOMIC_RELAXED);
}

/* ---- reading .eh_frame ---- */

struct cfi_rd {
	const uint8_t *p, *end;
	int bad;
};

static uint64_t rd_uleb(struct cfi_rd *r)
{
	uint64_t v = 0;
	unsigned shift = 0;

	for (;;) {
		if (r->p >= r->end || shift > 63) {
			r->bad = 1;
			return 0;
		}
		uint8_t b = *r->p++;
		v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
			return v;
	}
}

static int64_t rd_sleb(struct cfi_rd *r)
{
	int64_t v = 0;
	unsigned shift = 0;
	uint8_t b;

	do {
		if (r->p >= r->end || shift > 63) {
			r->bad = 1;
			return 0;
		}
		b = *r->p++;
		v |= (int64_t)((uint64_t)(b & 0x7f) << shift);
		shift += 7;
	} while (b & 0x80);
	if (shift < 64 && (b & 0x40))
		v |= (int64_t)(~0ull << shift);
	return v;
}

static uint64_t rd_fixed(struct cfi_rd *r, unsigned n)
{
	uint64_t v = 0;

	if ((size_t)(r->end - r->p) < n) {
		r->bad = 1;
		return 0;
	}
	memcpy(&v, r->p, n); /* little-endian */
	r->p += n;
	return v;
}

/*
 * A DW_EH_PE-encoded pointer: absolute, pc-relative or (base != 0)
 * relative to .eh_frame_hdr.  Indirect and other bases are refused, except
 * when only skipping (the personality routine), where the value is unused.
 */
static uint64_t rd_enc(struct cfi_rd *r, uint8_t enc, uintptr_t datarel, int skip)
{
	const uint8_t *at = r->p;
	uint64_t v;

	switch (enc & 0x0f) {
	case 0x00: v = rd_fixed(r, 8); break;
	case 0x01: v = rd_uleb(r); break;
	case 0x02: v = rd_fixed(r, 2); break;
	case 0x03: v = rd_fixed(r, 4); break;
	case 0x04: v = rd_fixed(r, 8); break;
	case 0x09: v = (uint64_t)rd_sleb(r); break;
	case 0x0a: v = (uint64_t)(int64_t)(int16_t)rd_fixed(r, 2); break;
	case 0x0b: v = (uint64_t)(int64_t)(int32_t)rd_fixed(r, 4); break;
	case 0x0c: v = rd_fixed(r, 8); break;
	default: r->bad = 1; return 0;
	}
	if (skip)
		return 0;
	switch (enc & 0xf0) {
	case 0x00: break;
	case 0x10: v += (uintptr_t)at; break;
	case 0x30:
		if (!datarel)
			r->bad = 1;
		v += datarel;
		break;
	default: r->bad = 1;
	}
	return v;
}

/* The registers the fast path follows: rbp, rsp and the return address. */
enum { RR_SAME, RR_UNDEF, RR_OFFSET, RR_OTHER };
struct cfi_reg {
	int how;
	int64_t off;
};
struct cfi_state {
	int cfa_reg, cfa_other; /* cfa_other: an expression */
	int64_t cfa_off;
	struct cfi_reg reg[3]; /* rbp, rsp, ra */
};
struct cfi_cie {
	uint64_t caf, ra_reg;
	int64_t daf;
	uint8_t fde_enc;
	int aug_z;
	const uint8_t *ins, *ins_end;
};

static int reg_index(const struct cfi_cie *c, uint64_t reg)
{
	if (reg == c->ra_reg)
		return 2;
	return reg == 6 ? 0 : reg == 7 ? 1 : -1;
}

#define CFI_STACK 8

/*
 * Run a CFA program (DWARF 5, 6.4.2) on s until the location passes
 * `target` (all of it for the CIE's initial instructions, loc == NULL).
 * Returns 0, or -1 for anything the fast path does not take.
 */
static int cfi_run(const struct cfi_cie *c, const uint8_t *p, const uint8_t *end,
		   struct cfi_state *s, const struct cfi_state *init, uintptr_t *loc, uintptr_t target)
{
	struct cfi_state stack[CFI_STACK];
	struct cfi_rd r = { p, end, 0 };
	int depth = 0;

	while (r.p < r.end && !r.bad) {
		uint8_t op = *r.p++, lo = op & 0x3f;
		uint64_t reg = 0, delta = 0;
		int64_t off = 0;
		int i, how = -1;

		if (loc && *loc > target)
			return 0;
		switch (op >> 6) {
		case 1: /* DW_CFA_advance_loc */
			delta = lo;
			goto advance;
		case 2: /* DW_CFA_offset */
			reg = lo;
			off = (int64_t)rd_uleb(&r) * c->daf;
			how = RR_OFFSET;
			goto set_reg;
		case 3: /* DW_CFA_restore */
			reg = lo;
			goto restore;
		}
		switch (op) {
		case 0x00: /* nop */
			break;
		case 0x01: /* set_loc */
			if (!loc)
				return -1;
			*loc = rd_enc(&r, c->fde_enc, 0, 0);
			break;
		case 0x02: delta = rd_fixed(&r, 1); goto advance;
		case 0x03: delta = rd_fixed(&r, 2); goto advance;
		case 0x04: delta = rd_fixed(&r, 4); goto advance;
		case 0x05: /* offset_extended */
			reg = rd_uleb(&r);
			off = (int64_t)rd_uleb(&r) * c->daf;
			how = RR_OFFSET;
			goto set_reg;
		case 0x06: /* restore_extended */
			reg = rd_uleb(&r);
			goto restore;
		case 0x07: /* undefined */
			reg = rd_uleb(&r);
			how = RR_UNDEF;
			goto set_reg;
		case 0x08: /* same_value */
			reg = rd_uleb(&r);
			how = RR_SAME;
			goto set_reg;
		case 0x09: /* register */
			reg = rd_uleb(&r);
			rd_uleb(&r);
			how = RR_OTHER;
			goto set_reg;
		case 0x0a: /* remember_state */
			if (depth == CFI_STACK)
				return -1;
			stack[depth++] = *s;
			break;
		case 0x0b: /* restore_state */
			if (!depth)
				return -1;
			*s = stack[--depth];
			break;
		case 0x0c: /* def_cfa */
			s->cfa_reg = (int)rd_uleb(&r);
			s->cfa_off = (int64_t)rd_uleb(&r);
			s->cfa_other = 0;
			break;
		case 0x0d: /* def_cfa_register */
			s->cfa_reg = (int)rd_uleb(&r);
			s->cfa_other = 0;
			break;
		case 0x0e: /* def_cfa_offset */
			s->cfa_off = (int64_t)rd_uleb(&r);
			break;
		case 0x0f: /* def_cfa_expression */
			delta = rd_uleb(&r);
			if (delta > (uint64_t)(r.end - r.p))
				return -1;
			r.p += delta;
			s->cfa_other = 1;
			break;
		case 0x10: /* expression */
		case 0x16: /* val_expression */
			reg = rd_uleb(&r);
			delta = rd_uleb(&r);
			if (delta > (uint64_t)(r.end - r.p))
				return -1;
			r.p += delta;
			how = RR_OTHER;
			goto set_reg;
		case 0x11: /* offset_extended_sf */
			reg = rd_uleb(&r);
			off = rd_sleb(&r) * c->daf;
			how = RR_OFFSET;
			goto set_reg;
		case 0x12: /* def_cfa_sf */
			s->cfa_reg = (int)rd_uleb(&r);
			s->cfa_off = rd_sleb(&r) * c->daf;
			s->cfa_other = 0;
			break;
		case 0x13: /* def_cfa_offset_sf */
			s->cfa_off = rd_sleb(&r) * c->daf;
			break;
		case 0x14: /* val_offset */
			reg = rd_uleb(&r);
			rd_uleb(&r);
			how = RR_OTHER;
			goto set_reg;
		case 0x15: /* val_offset_sf */
			reg = rd_uleb(&r);
			rd_sleb(&r);
			how = RR_OTHER;
			goto set_reg;
		case 0x2e: /* GNU_args_size: only for landing pads */
			rd_uleb(&r);
			break;
		case 0x2f: /* GNU_negative_offset_extended */
			reg = rd_uleb(&r);
			off = -(int64_t)rd_uleb(&r) * c->daf;
			how = RR_OFFSET;
			goto set_reg;
		default:
			return -1;
		}
		continue;
advance:
		if (!loc)
			return -1;
		*loc += delta * c->caf;
		continue;
set_reg:
		i = reg_index(c, reg);
		if (i >= 0) {
			s->reg[i].how = how;
			s->reg[i].off = off;
		}
		continue;
restore:
		i = reg_index(c, reg);
		if (i >= 0) {
			if (!init)
				return -1;
			s->reg[i] = init->reg[i];
		}
		continue;
	}
	return r.bad ? -1 : 0;
}

static int cie_parse(const uint8_t *cie, struct cfi_cie *c)
{
	struct cfi_rd r = { cie, cie + 12, 0 };
	uint64_t len = rd_fixed(&r, 4);
	const char *aug;
	uint8_t ver;

	if (len == 0 || len == 0xffffffff) /* 64-bit DWARF: never on x86-64 Linux */
		return -1;
	r.end = cie + 4 + len;
	if (rd_fixed(&r, 4) != 0) /* CIE id */
		return -1;
	ver = (uint8_t)rd_fixed(&r, 1);
	if (ver != 1 && ver != 3)
		return -1;
	aug = (const char *)r.p;
	while (r.p < r.end && *r.p)
		r.p++;
	if (r.p++ >= r.end)
		return -1;
	c->caf = rd_uleb(&r);
	c->daf = rd_sleb(&r);
	c->ra_reg = ver == 1 ? rd_fixed(&r, 1) : rd_uleb(&r);
	c->fde_enc = 0;
	c->aug_z = aug[0] == 'z';
	if (c->aug_z) {
		uint64_t alen = rd_uleb(&r);
		const uint8_t *adata = r.p;

		if (alen > (uint64_t)(r.end - r.p))
			return -1;
		for (const char *a = aug + 1; *a && !r.bad; a++) {
			if (*a == 'R')
				c->fde_enc = (uint8_t)rd_fixed(&r, 1);
			else if (*a == 'L')
				rd_fixed(&r, 1);
			else if (*a == 'P')
				rd_enc(&r, (uint8_t)rd_fixed(&r, 1), 0, 1);
			else
				return -1; /* 'S' (signal frame) and anything unknown */
		}
		r.p = adata + alen;
	} else if (aug[0]) {
		return -1;
	}
	if (r.bad || c->ra_reg != 16 || c->caf != 1)
		return -1;
	c->ins = r.p;
	c->ins_end = r.end;
	return 0;
}

/* The rule at address `pc` (return address - 1) from the FDE at fde. */
static uint32_t rule_from_fde(const uint8_t *fde, uintptr_t pc)
{
	struct cfi_rd r = { fde, fde + 8, 0 };
	struct cfi_state s, init;
	struct cfi_cie c;
	uint64_t len, cie_off, begin, range;
	uintptr_t loc;
	int64_t k;

	len = rd_fixed(&r, 4);
	if (len == 0 || len == 0xffffffff)
		return R_FALLBACK;
	r.end = fde + 4 + len;
	cie_off = rd_fixed(&r, 4);
	if (cie_off == 0 || cie_off > (uintptr_t)(fde + 4))
		return R_FALLBACK;
	if (cie_parse(fde + 4 - cie_off, &c) < 0)
		return R_FALLBACK;
	begin = rd_enc(&r, c.fde_enc, 0, 0);
	range = rd_enc(&r, c.fde_enc & 0x0f, 0, 0);
	if (c.aug_z) {
		uint64_t alen = rd_uleb(&r);
		if (alen > (uint64_t)(r.end - r.p))
			return R_FALLBACK;
		r.p += alen;
	}
	if (r.bad || pc < begin || pc - begin >= range)
		return R_FALLBACK; /* no FDE for pc: libgcc may see a sigreturn */

	memset(&s, 0, sizeof(s));
	s.cfa_reg = -1;
	if (cfi_run(&c, c.ins, c.ins_end, &s, NULL, NULL, 0) < 0)
		return R_FALLBACK;
	init = s;
	loc = begin;
	if (cfi_run(&c, r.p, r.end, &s, &init, &loc, pc) < 0)
		return R_FALLBACK;

	/* The return address column undefined: the outermost frame. */
	if (s.reg[2].how == RR_UNDEF)
		return R_END;
	if (s.cfa_other || (s.cfa_reg != 6 && s.cfa_reg != 7) || s.cfa_off < 8 ||
	    s.cfa_off > R_CFA_MAX || s.reg[1].how != RR_SAME || s.reg[2].how != RR_OFFSET ||
	    s.reg[2].off != -8)
		return R_FALLBACK;
	if (s.reg[0].how == RR_SAME)
		return R_NORMAL | (uint32_t)(s.cfa_reg == 6) << 2 | (uint32_t)s.cfa_off << 3;
	k = s.reg[0].off;
	if (s.reg[0].how != RR_OFFSET || k % 8 || k < R_RBP_MIN || k > R_RBP_MAX)
		return R_FALLBACK;
	return R_NORMAL | (uint32_t)(s.cfa_reg == 6) << 2 | (uint32_t)s.cfa_off << 3 | 1u << 20 |
	       ((uint32_t)(k / 8) & 0x7ff) << 21;
}

/* Binary search of .eh_frame_hdr's table (sorted by initial location). */
static uint32_t rule_from_hdr(const uint8_t *hdr, uintptr_t pc)
{
	struct cfi_rd r = { hdr, hdr + 4, 0 };
	uint64_t count, lo, hi;
	const int32_t *tab;

	if (hdr[0] != 1 || hdr[3] != 0x3b) /* version 1, datarel|sdata4 table */
		return R_FALLBACK;
	r.p = hdr + 4;
	r.end = hdr + 4 + 16;
	rd_enc(&r, hdr[1], (uintptr_t)hdr, 1);
	count = rd_enc(&r, hdr[2], (uintptr_t)hdr, 0);
	if (r.bad || count == 0 || count > (1u << 28))
		return R_FALLBACK;
	tab = (const int32_t *)(const void *)r.p;
	if ((uintptr_t)hdr + tab[0] > pc)
		return R_FALLBACK;
	lo = 0;
	hi = count;
	while (hi - lo > 1) {
		uint64_t mid = lo + (hi - lo) / 2;
		if ((uintptr_t)hdr + tab[2 * mid] <= pc)
			lo = mid;
		else
			hi = mid;
	}
	return rule_from_fde(hdr + tab[2 * lo + 1], pc);
}

/* ---- finding the module (dl_iterate_phdr holds the loader lock) ---- */

static unsigned long long uw_subs;
static int uw_subs_known;
static unsigned uw_gen; /* bumped by every flush: previous walks are void */

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

		if (ph->p_type == PT_LOAD && pc >= a && pc - a < ph->p_memsz)
			inside = 1;
		else if (ph->p_type == PT_GNU_EH_FRAME)
			hdr = (const uint8_t *)a;
	}
	if (!inside)
		return 0;
	f->rule = hdr ? rule_from_hdr(hdr, pc) : R_FALLBACK;
	c_put(uw_cache, f->ra, f->rule);
	return 1;
}

static uint32_t rule_lookup(uint64_t ra)
{
	struct find f = { .ra = ra, .rule = R_FALLBACK, .first = 1 };
	uint64_t *c = __atomic_load_n(&uw_cache, __ATOMIC_ACQUIRE);

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
	dl_iterate_phdr(find_cb, &f);
	return f.rule;
}

/* ---- this thread's stack ---- */

static __thread uintptr_t uw_lo, uw_hi; /* [lo, hi) readable; hi == 1: unknown */

static void stack_bounds(uintptr_t sp)
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

/* ---- the previous walk (mprof paper: most of the chain repeats) ---- */

/*
 * Each thread keeps its last complete walk, outermost frame first: for
 * every frame the registers it was entered with (sp, pc, bp) and where its
 * rule read the caller's rbp.  When a new walk reaches a frame with the same
 * sp, pc and bp, the rest of the walk would read the same stack words with
 * the same rules; if those words still hold the values the last walk read
 * (checked: independent loads, no rule look-ups), the rest is the last
 * walk's, exactly.
 */
#define REC_CAP 1024
struct step {
	uintptr_t sp, pc, bp;
	uintptr_t bpslot; /* where rbp was saved (8-aligned), | S_ONRBP | S_LIVE */
	uint64_t h;       /* in r[]: stackhash of the pcs from r[0] to this one */
};
#define S_ONRBP 1u /* this frame's CFA is on rbp */
#define S_LIVE 2u  /* the rest of the walk depends on the bp it came with */
#define S_BPCHK 4u /* in r[]: rec_check reads a saved rbp at or below here */
_Static_assert(S_LIVE == S_ONRBP << 1 && S_BPCHK == S_LIVE << 1, "rec_seal's bit tricks");
#define S_SLOT(s) ((s)->bpslot & ~(uintptr_t)7)
struct rec {
	int n;            /* frames in r[], 0: none */
	unsigned gen;     /* uw_gen when made */
	uintptr_t endcfa; /* the outermost frame's CFA if its return address was 0 */
	uint64_t value, owner; /* unwind_memo_set's for the walk in r[], 0: none */
	uint64_t svalue;  /* the last capture's frames from snew on are the */
	int snew;         /* outermost of the stack svalue stands for (0: none) */
	int unfilled;     /* and are r[n-1-snew] .. r[0], not in frames yet */
	struct step r[REC_CAP];   /* outermost first */
	struct step cur[REC_CAP]; /* the walk under way, innermost first */
};
static __thread struct rec *uw_rec;
/* The record is this thread's last capture, made whole by the fast walk
 * (not a fallback, not truncated): only then may it be remembered or give
 * the stack's hash. */
static __thread int uw_fresh;
static pthread_key_t uw_rec_key;
static int uw_rec_key_state; /* 0 not yet, 1 made, -1 failed */

static void memo_release(void);

static void rec_release(void *p)
{
	if (p == uw_rec)
		uw_rec = NULL;
	munmap(p, sizeof(struct rec));
	memo_release(); /* the thread is going: so are its remembered walks */
}

/* Caller holds the recursion guard (pthread_setspecific may allocate). */
static struct rec *rec_get(void)
{
	void *m;

	if (uw_rec_key_state == 0) {
		static pthread_mutex_t once = PTHREAD_MUTEX_INITIALIZER;
		pthread_mutex_lock(&once);
		if (uw_rec_key_state == 0)
			uw_rec_key_state = pthread_key_create(&uw_rec_key, rec_release) == 0 ? 1 : -1;
		pthread_mutex_unlock(&once);
	}
	if (uw_rec_key_state < 0)
		return NULL;
	m = mmap(NULL, sizeof(struct rec), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		 0);
	if (m == MAP_FAILED)
		return NULL;
	if (pthread_setspecific(uw_rec_key, m) != 0) {
		munmap(m, sizeof(struct rec));
		return NULL;
	}
	return uw_rec = m;
}

/*
 * Do the words the last walk read above its frame m still hold the same?
 * -1 when they all do.  Else q >= 1: those of r[m-1] .. r[q] hold and
 * r[q-1]'s do not, so a walk from r[m] makes r[m] .. r[q] again and goes
 * on from r[q-1]'s stack address with what is there now; or 0: all the
 * frames hold but the end of the stack does not.
 */
static int rec_check(const struct rec *rc, int m)
{
	const struct step *r = rc->r;
	int q = m;

	if (!(r[m].bpslot & S_BPCHK)) {
		/* Return addresses only (no saved rbp is read up there, the
		 * usual case): four independent loads a step, one branch. */
		for (; q >= 4; q -= 4)
			if ((*(const uintptr_t *)(r[q - 1].sp - 8) ^ r[q - 1].pc) |
			    (*(const uintptr_t *)(r[q - 2].sp - 8) ^ r[q - 2].pc) |
			    (*(const uintptr_t *)(r[q - 3].sp - 8) ^ r[q - 3].pc) |
			    (*(const uintptr_t *)(r[q - 4].sp - 8) ^ r[q - 4].pc))
				break;
		for (; q > 0; q--)
			if (*(const uintptr_t *)(r[q - 1].sp - 8) != r[q - 1].pc)
				return q;
	} else {
		for (; q > 0; q--) {
			const struct step *s = &r[q], *up = &r[q - 1];
			if (*(const uintptr_t *)(up->sp - 8) != up->pc)
				return q;
			if (S_SLOT(s) && (up->bpslot & S_LIVE) &&
			    *(const uintptr_t *)S_SLOT(s) != up->bp)
				return q;
		}
	}
	return !rc->endcfa || *(const uintptr_t *)(rc->endcfa - 8) == 0 ? -1 : 0;
}

/* A run of the last walk's frames a walk took as they are (the chain had
 * changed further out): cur[c0 .. c0 + len) are r[from], r[from - 1], ...,
 * left in r rather than copied. */
struct run {
	int c0, from, len;
};
#define REC_RUNS 32

/*
 * r[k] of a record being rebuilt outermost first (r[k - 1] final, whose
 * bpslot is *prev; 0 for r[0]), its pc, sp and bp in place: what depends on
 * the frames outer to it.  Whether its incoming bp matters (S_LIVE: its CFA
 * is on rbp, or it leaves rbp as it found it to a caller whose bp matters),
 * whether rec_check reads a saved rbp from here out (S_BPCHK), and the
 * hash.  plain: no frame from here in has its CFA on rbp and *prev's bp
 * does not matter, so no bp matters (code without frame pointers); *prev
 * is then just S_BPCHK or 0.
 */
static inline __attribute__((always_inline)) void rec_seal(struct step *d, uintptr_t *prev,
							   uint64_t *h, int plain)
{
	uintptr_t b = d->bpslot, slot = b & ~(uintptr_t)7;

	if (plain) {
		d->bpslot = slot | *prev;
	} else {
		uintptr_t has = -(uintptr_t)(slot != 0), pl = *prev & S_LIVE;
		/* Branch-free: S_LIVE == S_ONRBP << 1, S_BPCHK == S_LIVE << 1. */
		uintptr_t live = (b & S_ONRBP) << 1 | (pl & ~has);
		uintptr_t chk = (*prev & S_BPCHK) | (pl << 1 & has);
		d->bpslot = *prev = slot | (b & S_ONRBP) | live | chk;
	}
	d->h = *h = stackhash_step(*h, d->pc);
}

/*
 * The record after a walk of n new frames (cur[n - 1] outermost) on top of
 * r[0..base] (base == -1: none), runs[0..nrun) among them; onrbp: whether
 * any new frame has its CFA on rbp.  A run whose frames keep their places
 * (as many new frames outer to it as the last walk had: a recursion whose
 * call sites changed, frame for frame) is only sealed again; one that
 * moved is copied to cur first, before r changes.
 */
static inline __attribute__((always_inline)) void
rec_rebuild_pass(struct rec *rc, struct step *r, int n, const struct run *runs, int nrun,
		 uintptr_t prev, uint64_t h, const int plain)
{
	int c = n - 1;

	for (int i = nrun - 1; i >= -1; i--) {
		int stop = i >= 0 ? runs[i].c0 + runs[i].len : 0;
		for (; c >= stop; c--) {
			r[-c].sp = rc->cur[c].sp;
			r[-c].pc = rc->cur[c].pc;
			r[-c].bp = rc->cur[c].bp;
			r[-c].bpslot = rc->cur[c].bpslot;
			rec_seal(&r[-c], &prev, &h, plain);
		}
		if (i >= 0)
			for (; c >= runs[i].c0; c--)
				rec_seal(&r[-c], &prev, &h, plain);
	}
}

static void rec_rebuild(struct rec *rc, int base, int n, uintptr_t onrbp, struct run *runs,
			int nrun)
{
	uint64_t h = base >= 0 ? rc->r[base].h : STACKHASH_SEED;
	uintptr_t prev = base >= 0 ? rc->r[base].bpslot : 0;
	int i, j = 0;

	for (i = 0; i < nrun; i++) {
		if (base + n - runs[i].c0 == runs[i].from) {
			runs[j++] = runs[i];
			continue;
		}
		for (int t = 0; t < runs[i].len; t++)
			rc->cur[runs[i].c0 + t] = rc->r[runs[i].from - t];
	}
	/* cur[c] goes to r[base + n - c]. */
	if (!onrbp && !(prev & S_LIVE))
		rec_rebuild_pass(rc, rc->r + base + n, n, runs, j, prev & S_BPCHK, h, 1);
	else
		rec_rebuild_pass(rc, rc->r + base + n, n, runs, j, prev, h, 0);
}

/* ---- whole walks remembered with their caller's value ---- */

/*
 * The monitor gives every complete walk a value (its stack's index); a walk
 * that would read the same words as a remembered one, from the same
 * registers at frame 0, gets that value back without being made and without
 * filling frames, so the caller skips both the walk and the stack lookup.
 * The check is the record's (rec_check from frame 0) reduced to a list of
 * (stack address, expected word) pairs, compared four at a time.
 * Per thread: MEMO_SETS sets of MEMO_WAYS entries, the set chosen by frame
 * 0's sp and pc (one frame 0 is often reached through several chains: the
 * ways keep them side by side), for stacks up to MEMO_FRAMES deep.
 */
#ifndef MEMO_BITS /* tests build a runtime with one set (0) */
#define MEMO_BITS 5
#endif
#define MEMO_SETS (1 << MEMO_BITS)
#define MEMO_WAYS 4
#define MEMO_FRAMES 96
struct memo_pair {
	uintptr_t addr, want;
};
/* Pairs come in fours (memo_holds): the last four are padded with pairs
 * that always hold. */
#define MEMO_PAIRS ((2 * MEMO_FRAMES + 1 + 3) & ~3)
struct memo {
	uint64_t value; /* the caller's value (non-zero) */
	uint64_t owner; /* the caller's generation for value */
	uintptr_t bp;   /* frame 0's bp, where it matters */
	unsigned gen;   /* uw_gen */
	int n;          /* depth */
	int bplive;     /* frame 0's bp matters */
	int npairs;     /* a multiple of 4, at least 4 */
	uint64_t fhash; /* check mode: hash of the frames */
	struct memo_pair pair[MEMO_PAIRS];
};
struct memo_set {
	/* Frame 0 of each way (sp 0: empty), side by side: one line to scan. */
	uintptr_t sp[MEMO_WAYS], pc[MEMO_WAYS];
	/* Frame 0 of the last MEMO_WAYS walks offered that were not kept. */
	uintptr_t want_sp[MEMO_WAYS], want_pc[MEMO_WAYS];
	unsigned next;      /* the way to replace next */
	unsigned want_next; /* the want to replace next */
	struct memo way[MEMO_WAYS];
};
/* What padding pairs read: always equal to their want, 0. */
static const uintptr_t memo_pad;
static __thread struct memo_set *uw_memo; /* MEMO_SETS sets, or NULL */
static __thread int uw_memo_off;      /* mapping failed: never again */
static int uw_check = -1;             /* check mode (below) */
static uint64_t uw_n_checked, uw_n_fast, uw_n_mismatch, uw_n_memo, uw_n_part, uw_n_shared;
static void say(const char *s, size_t n);
/* Check mode: a hit's value and frame hash, verified by a full walk. */
static __thread uint64_t uw_hit_value, uw_hit_fhash;

static void memo_release(void)
{
	if (uw_memo)
		munmap(uw_memo, MEMO_SETS * sizeof(struct memo_set));
	uw_memo = NULL;
	uw_memo_off = 1;
}

static inline unsigned memo_slot(uintptr_t sp, uintptr_t pc)
{
#if MEMO_BITS
	return (unsigned)(((sp >> 4) ^ pc) * 0x9e3779b97f4a7c15ull >> (64 - MEMO_BITS));
#else
	(void)sp;
	(void)pc;
	return 0;
#endif
}

/* Whether every pair of e still holds: four independent loads a step. */
static inline __attribute__((always_inline)) int memo_holds(const struct memo *e)
{
	const struct memo_pair *p = e->pair, *end = p + e->npairs;

	do {
		if ((*(const uintptr_t *)p[0].addr ^ p[0].want) |
		    (*(const uintptr_t *)p[1].addr ^ p[1].want) |
		    (*(const uintptr_t *)p[2].addr ^ p[2].want) |
		    (*(const uintptr_t *)p[3].addr ^ p[3].want))
			return 0;
		p += 4;
	} while (p < end);
	return 1;
}

/* The remembered walk from (sp, pc, bp) at frame 0 if it still holds. */
static inline __attribute__((always_inline)) const struct memo *
memo_find(uintptr_t sp, uintptr_t pc, uintptr_t bp, uint64_t owner, int max)
{
	const struct memo_set *set;

	if (!uw_memo)
		return NULL;
	set = &uw_memo[memo_slot(sp, pc)];
	for (int w = 0; w < MEMO_WAYS; w++) {
		const struct memo *e;
		if (set->sp[w] != sp || set->pc[w] != pc)
			continue;
		e = &set->way[w];
		if (e->owner == owner && e->n <= max && (!e->bplive || e->bp == bp) &&
		    e->gen == __atomic_load_n(&uw_gen, __ATOMIC_ACQUIRE) && memo_holds(e))
			return e;
	}
	return NULL;
}

void unwind_memo_set(uint64_t owner, uint64_t value, const uint64_t *frames, int depth)
{
	struct rec *rc = uw_rec;
	struct memo_set *set;
	struct memo *e;
	int m, q, w, k = 0;

	if (!uw_fresh || !rc || depth < 1 || rc->n != depth || !value)
		return;
	if (uw_check > 0) {
		/* The walk to remember must be the stack value stands for. */
		int same = rc->n == depth;
		for (q = 0; same && q < depth; q++)
			same = rc->r[rc->n - 1 - q].pc == frames[q];
		if (!same) {
			static const char msg[] =
				"mprof: unwind mismatch: the walk to remember is not the stack counted\n";
			__atomic_fetch_add(&uw_n_mismatch, 1, __ATOMIC_RELAXED);
			say(msg, sizeof msg - 1);
			return;
		}
	}
	/* The next walk's frames that are this one's stand for value too. */
	rc->value = value;
	rc->owner = owner;
	if (rc->n > MEMO_FRAMES || uw_memo_off)
		return;
	if (!uw_memo) {
		void *p = mmap(NULL, MEMO_SETS * sizeof(struct memo_set), PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED) {
			uw_memo_off = 1;
			return;
		}
		uw_memo = p; /* per thread, for the life of the thread's stack */
	}
	m = rc->n - 1; /* frame 0 */
	set = &uw_memo[memo_slot(rc->r[m].sp, rc->r[m].pc)];
	/* Only a frame 0 offered before is worth the pairs (deep stacks that
	 * never repeat would pay for nothing).  Several recent offers are
	 * remembered: chains that share a set and take turns must not keep
	 * each other out. */
	for (w = 0; w < MEMO_WAYS; w++)
		if (set->want_sp[w] == rc->r[m].sp && set->want_pc[w] == rc->r[m].pc)
			break;
	if (w == MEMO_WAYS) {
		w = (int)(set->want_next++ % MEMO_WAYS);
		set->want_sp[w] = rc->r[m].sp;
		set->want_pc[w] = rc->r[m].pc;
		return;
	}
	/* An empty way, else the next in turn. */
	for (w = 0; w < MEMO_WAYS && set->sp[w]; w++)
		;
	if (w == MEMO_WAYS)
		w = (int)(set->next++ % MEMO_WAYS);
	e = &set->way[w];
	/* rec_check(rc, m), as pairs. */
	for (q = m; q > 0; q--) {
		const struct step *st = &rc->r[q], *up = &rc->r[q - 1];
		e->pair[k].addr = up->sp - 8;
		e->pair[k++].want = up->pc;
		if (S_SLOT(st) && (up->bpslot & S_LIVE)) {
			e->pair[k].addr = S_SLOT(st);
			e->pair[k++].want = up->bp;
		}
	}
	if (rc->endcfa) {
		e->pair[k].addr = rc->endcfa - 8;
		e->pair[k++].want = 0;
	}
	while ((k & 3) || k == 0) {
		e->pair[k].addr = (uintptr_t)&memo_pad;
		e->pair[k++].want = 0;
	}
	e->npairs = k;
	set->sp[w] = rc->r[m].sp;
	set->pc[w] = rc->r[m].pc;
	e->bp = rc->r[m].bp;
	e->bplive = (rc->r[m].bpslot & S_LIVE) != 0;
	e->gen = rc->gen;
	e->n = rc->n;
	e->owner = owner;
	e->value = value;
	if (uw_check > 0)
		e->fhash = stackhash(frames, (uint32_t)depth, 0);
}

int unwind_shared(int depth, int *nnew, uint64_t *value)
{
	const struct rec *rc = uw_rec;

	if (!uw_fresh || !rc || !rc->svalue || rc->n != depth)
		return 0;
	*nnew = rc->snew;
	*value = rc->svalue;
	return 1;
}

void unwind_fill(uint64_t *frames, int depth)
{
	struct rec *rc = uw_rec;
	int k;

	if (!rc || !rc->unfilled || rc->n != depth)
		return;
	for (k = rc->snew; k < depth; k++)
		frames[k] = rc->r[depth - 1 - k].pc;
	rc->unfilled = 0;
}

int unwind_checking(void)
{
	return uw_check > 0;
}

void unwind_check_shared(int same)
{
	static const char m[] = "mprof: unwind mismatch: a stack looked up by its shared frames differs\n";

	__atomic_fetch_add(&uw_n_shared, 1, __ATOMIC_RELAXED);
	if (!same) {
		__atomic_fetch_add(&uw_n_mismatch, 1, __ATOMIC_RELAXED);
		say(m, sizeof m - 1);
	}
}

/* Check mode: a recall's hit, verified by the capture that follows. */
static __thread uint64_t uw_recall_value, uw_recall_fhash;

int unwind_recall(const struct unwind_frame0 *f0, uint64_t owner, int max, uint64_t *value)
{
	const struct memo *e;

	*value = 0;
	if (!uw_memo || !f0->sp || !(e = memo_find(f0->sp, f0->ret, f0->bp, owner, max)))
		return -1;
	if (uw_check > 0) {
		uw_recall_value = e->value;
		uw_recall_fhash = e->fhash;
		return -1;
	}
	*value = e->value;
	return e->n;
}

/*
 * The last frame of r[0..m] (r[m].sp < sp; sps fall as the index grows)
 * whose sp is not below sp, or -1: a binary search, for a shallow stack
 * after a deep one (the walk steps over the first few frames itself).
 */
static int rec_above(const struct step *r, int m, uintptr_t sp)
{
	int lo = 0, hi = m; /* the answer is in [lo - 1, hi - 1] */

	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;
		if (r[mid].sp < sp)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo - 1;
}

/* The rule for return address pc (the cache, else the tables); *c is the
 * cache, mapped by the first look-up. */
static inline __attribute__((always_inline)) uint32_t rule_at(const uint64_t **c, uint64_t pc)
{
	uint32_t r = *c ? c_get(*c, pc) : R_EMPTY;

	if (__builtin_expect(r == R_EMPTY, 0)) {
		r = rule_lookup(pc);
		*c = __atomic_load_n(&uw_cache, __ATOMIC_ACQUIRE);
	}
	return r;
}

/* ---- the fast walk ---- */

/*
 * Walk from (pc, sp, bp), the registers of unwind_capture at pc.  Returns
 * the depth, or -1: fall back to the reference unwinder.  Every stack read
 * lies in [sp, hi) of this thread's stack, 8-byte aligned, above the
 * previous frame's, so a bad rule or a corrupt stack cannot fault or loop.
 */
static int walk(uint64_t *frames, int max, uint64_t ret, uint32_t *flags, uintptr_t pc,
		uintptr_t sp, uintptr_t bp, uint64_t owner, uint64_t *value, int lazy)
{
	const uintptr_t hi = uw_hi;
	const uint64_t *c = __atomic_load_n(&uw_cache, __ATOMIC_ACQUIRE);
	struct rec *rc = uw_rec;
	int n = 0, skipped = 0, m = -1;
	uintptr_t endcfa = 0, onrbp = 0, msp;
	uint64_t pvalue = 0;
	struct run runs[REC_RUNS];
	int nrun = 0;

	if (sp < uw_lo || sp >= hi) {
		/* Not this thread's stack (sigaltstack, a coroutine): the
		 * record no longer describes the last capture. */
		if (rc)
			rc->n = 0;
		return -1;
	}
	if (!rc && !(rc = rec_get()))
		return -1; /* no memory for the record: the reference unwinder */
	if (rc->n && rc->gen == __atomic_load_n(&uw_gen, __ATOMIC_ACQUIRE))
		m = rc->n - 1;
	rc->n = 0;
	pvalue = rc->owner == owner ? rc->value : 0;
	rc->value = 0;
	rc->svalue = 0;
	rc->unfilled = 0;
	rc->gen = __atomic_load_n(&uw_gen, __ATOMIC_ACQUIRE);
	if (value)
		*value = 0;
	/* The monitor's own frames, up to the one that returns to `ret`. */
	while (pc != ret) {
		uint32_t r = rule_at(&c, pc);
		uintptr_t cfa;

		if (++skipped > UNWIND_MAX_SKIP || R_KIND(r) != R_NORMAL)
			return -1;
		cfa = (R_ON_RBP(r) ? bp : sp) + R_CFA_OFF(r);
		if (cfa <= sp || cfa > hi || (cfa & 7))
			return -1;
		if (R_RBP_SAVED(r)) {
			uintptr_t bpslot = cfa + (uintptr_t)R_RBP_OFF(r);
			if (bpslot < sp || bpslot + 8 > hi)
				return -1;
			bp = *(const uintptr_t *)bpslot;
		}
		pc = *(const uint64_t *)(cfa - 8);
		sp = cfa;
		if (!pc)
			return -1;
	}
	if (max <= 0) {
		*flags = FORMAT_STACK_TRUNCATED;
		return 0;
	}
	if (value) {
		const struct memo *e = memo_find(sp, pc, bp, owner, max);
		if (e && uw_check > 0) {
			/* Walk anyway; unwind_capture compares. */
			uw_hit_value = e->value;
			uw_hit_fhash = e->fhash;
		} else if (e) {
			/* The record stays the last walk made. */
			rc->n = m + 1;
			rc->value = pvalue;
			*value = e->value;
			return e->n;
		}
	}
	/* The last walk's frame m is the next one that may be reached again:
	 * until sp comes up to its place (msp), no frame is compared. */
	msp = m >= 0 ? rc->r[m].sp : UINTPTR_MAX;
	for (;;) {
		uint32_t r;
		uintptr_t cfa, bpslot = 0;

		if (sp >= msp) {
			/* The last walk's frames below sp are not this one's. */
			for (int k = 0; m >= 0 && rc->r[m].sp < sp; k++, m--)
				if (k == 4) {
					m = rec_above(rc->r, m, sp);
					break;
				}
			if (m >= 0 && rc->r[m].sp == sp && rc->r[m].pc == pc &&
			    (rc->r[m].bp == bp || !(rc->r[m].bpslot & S_LIVE))) {
				int q = rec_check(rc, m);
				if (q < 0)
					goto reuse;
				if (q == 0 || n + (m - q + 1) >= max) {
					m = -1;
				} else {
					/* The chain changed above r[q] (a recursion
					 * entered another way): r[m] .. r[q] are
					 * this walk's frames, taken as they are,
					 * with the bp each restore gives now; the
					 * walk goes on from r[q-1]'s place. */
					if (uw_check > 0)
						__atomic_fetch_add(&uw_n_part, 1, __ATOMIC_RELAXED);
					if (nrun < REC_RUNS) {
						/* Left in r (rec_rebuild). */
						runs[nrun].c0 = n;
						runs[nrun].from = m;
						runs[nrun++].len = m - q + 1;
						for (; m >= q; m--, n++) {
							struct step *st = &rc->r[m];
							frames[n] = st->pc;
							onrbp |= st->bpslot & S_ONRBP;
							st->bp = bp;
							if (S_SLOT(st))
								bp = *(const uintptr_t *)S_SLOT(st);
						}
					}
					for (; m >= q; m--, n++) {
						const struct step *st = &rc->r[m];
						frames[n] = st->pc;
						rc->cur[n] = *st;
						onrbp |= st->bpslot & S_ONRBP;
						rc->cur[n].bp = bp;
						if (S_SLOT(st))
							bp = *(const uintptr_t *)S_SLOT(st);
					}
					sp = rc->r[m].sp;
					pc = *(const uint64_t *)(sp - 8);
					msp = sp; /* r[m] is reached at once */
					if (!pc) {
						endcfa = sp;
						goto done;
					}
					continue;
				}
			}
			msp = m >= 0 ? rc->r[m].sp : UINTPTR_MAX;
		}
		frames[n] = pc;
		rc->cur[n].sp = sp;
		rc->cur[n].pc = pc;
		rc->cur[n].bp = bp;
		n++;
		r = rule_at(&c, pc);
		if (R_KIND(r) != R_NORMAL) {
			if (R_KIND(r) == R_END)
				goto done;
			return -1;
		}
		cfa = (R_ON_RBP(r) ? bp : sp) + R_CFA_OFF(r);
		if (cfa <= sp || cfa > hi || (cfa & 7))
			return -1;
		if (R_RBP_SAVED(r)) {
			bpslot = cfa + (uintptr_t)R_RBP_OFF(r);
			if (bpslot < sp || bpslot + 8 > hi)
				return -1;
			bp = *(const uintptr_t *)bpslot;
		}
		rc->cur[n - 1].bpslot = bpslot | R_ON_RBP(r);
		onrbp |= R_ON_RBP(r);
		pc = *(const uint64_t *)(cfa - 8);
		sp = cfa;
		/* A zero return address ends the stack (libgcc: _URC_END_OF_STACK). */
		if (!pc) {
			endcfa = cfa;
			goto done;
		}
		if (n == max) {
			*flags = FORMAT_STACK_TRUNCATED;
			return n;
		}
	}
done:
	/* A complete walk: keep it, outermost first, for the next one. */
	rec_rebuild(rc, -1, n, onrbp, runs, nrun);
	rc->endcfa = endcfa;
	rc->n = n;
	uw_fresh = 1;
	return n;
reuse:
	/* Frames from here on are the last walk's r[m], r[m-1], ... r[0]. */
	{
		const struct step *src = &rc->r[m];
		int total = n + m + 1, cnt = total > max ? max - n : m + 1, k;

		if (total > max) {
			*flags = FORMAT_STACK_TRUNCATED;
		} else if (pvalue && total <= REC_CAP) {
			/* They are the outermost of the stack pvalue stands for:
			 * the caller may need none of them (unwind_fill). */
			rc->svalue = pvalue;
			rc->snew = n;
			rc->unfilled = lazy;
		}
		if (!rc->unfilled) {
			for (k = 0; k + 4 <= cnt; k += 4) {
				frames[n + k] = src[-k].pc;
				frames[n + k + 1] = src[-k - 1].pc;
				frames[n + k + 2] = src[-k - 2].pc;
				frames[n + k + 3] = src[-k - 3].pc;
			}
			for (; k < cnt; k++)
				frames[n + k] = src[-k].pc;
		}
		/* The record: r[0..m] stays, the new inner frames go above it. */
		if (total <= REC_CAP) {
			rec_rebuild(rc, m, n, onrbp, runs, nrun);
			rc->n = total;
			uw_fresh = total <= max;
		}
		return total > max ? max : total;
	}
}

/* ---- check mode: both unwinders, compared (a test and debug facility) ---- */

/* MPROF_UNWIND_CHECK=1, read once environ exists; =2 also spoils the fast
 * path's first stack, so a test can see that the check does catch a
 * difference. */
static __thread uint64_t *uw_ref;
extern char **environ;

static void put(char **o, const char *s)
{
	while (*s)
		*(*o)++ = *s++;
}

static void put_num(char **o, uint64_t v, int hex)
{
	char b[24];
	int i = 0;

	if (hex)
		put(o, "0x");
	do {
		b[i++] = "0123456789abcdef"[v % (hex ? 16 : 10)];
		v /= hex ? 16 : 10;
	} while (v);
	while (i)
		*(*o)++ = b[--i];
}

static void say(const char *s, size_t n)
{
	while (n) {
		ssize_t k = write(2, s, n);
		if (k <= 0)
			return;
		s += k;
		n -= (size_t)k;
	}
}

#define CHECK_MAX 1024

/*
 * Compare the fast walk's stack f[0..nf) (flags *ff) with the reference
 * unwinder's; on a difference say so and put the reference's in f.
 * Returns the depth.
 */
static int check(uint64_t *f, int max, int nf, uint32_t *ff, uint64_t ret)
{
	uint32_t fs;
	int ns, d;
	char line[160], *o = line;

	if (!uw_ref) {
		void *m = mmap(NULL, CHECK_MAX * sizeof(uint64_t), PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m == MAP_FAILED)
			return nf;
		uw_ref = m; /* per thread, kept: check mode only */
	}
	if (max > CHECK_MAX)
		return nf;
	ns = unwind_capture_slow(uw_ref, max, ret, &fs);
	__atomic_fetch_add(&uw_n_checked, 1, __ATOMIC_RELAXED);
	for (d = 0; d < nf && d < ns && f[d] == uw_ref[d]; d++)
		;
	if (d == nf && d == ns && *ff == fs)
		return nf;
	__atomic_fetch_add(&uw_n_mismatch, 1, __ATOMIC_RELAXED);
	put(&o, "mprof: unwind mismatch at depth ");
	put_num(&o, (uint64_t)d, 0);
	put(&o, ": fast ");
	put_num(&o, d < nf ? f[d] : 0, 1);
	put(&o, " slow ");
	put_num(&o, d < ns ? uw_ref[d] : 0, 1);
	put(&o, " (depths ");
	put_num(&o, (uint64_t)nf, 0);
	put(&o, "/");
	put_num(&o, (uint64_t)ns, 0);
	put(&o, ", flags ");
	put_num(&o, *ff, 0);
	put(&o, "/");
	put_num(&o, fs, 0);
	put(&o, ")\n");
	say(line, (size_t)(o - line));
	memcpy(f, uw_ref, (size_t)ns * sizeof(*f));
	*ff = fs;
	return ns;
}

__attribute__((destructor)) static void check_report(void)
{
	char line[160], *o = line;

	if (uw_check < 1)
		return;
	put(&o, "mprof: unwind check: ");
	put_num(&o, __atomic_load_n(&uw_n_checked, __ATOMIC_RELAXED), 0);
	put(&o, " stacks compared, ");
	put_num(&o, __atomic_load_n(&uw_n_fast, __ATOMIC_RELAXED), 0);
	put(&o, " by the fast path, ");
	put_num(&o, __atomic_load_n(&uw_n_memo, __ATOMIC_RELAXED), 0);
	put(&o, " remembered, ");
	put_num(&o, __atomic_load_n(&uw_n_part, __ATOMIC_RELAXED), 0);
	put(&o, " partly reused, ");
	put_num(&o, __atomic_load_n(&uw_n_shared, __ATOMIC_RELAXED), 0);
	put(&o, " looked up by shared frames, ");
	put_num(&o, __atomic_load_n(&uw_n_mismatch, __ATOMIC_RELAXED), 0);
	put(&o, " mismatches\n");
	say(line, (size_t)(o - line));
}

/* ---- the interface ---- */

__attribute__((noinline)) int unwind_capture(uint64_t *frames, int max,
					     const struct unwind_frame0 *f0, uint32_t *flags,
					     uint64_t owner, uint64_t *value, uint32_t *hash)
{
	uint64_t ret = f0->ret;
	uintptr_t pc, sp, bp;
	int n;

	*flags = 0;
	uw_fresh = 0;
	if (value)
		*value = 0;
	if (max < 1)
		return 0;
	if (__builtin_expect(uw_hi <= 1, 0)) {
		if (uw_hi == 1 || !environ) /* unknown, or libc not started yet */
			return unwind_capture_slow(frames, max, ret, flags);
		stack_bounds((uintptr_t)__builtin_frame_address(0));
	}
	if (__builtin_expect(uw_check < 0, 0)) {
		const char *s = getenv("MPROF_UNWIND_CHECK");
		uw_check = s && (s[0] == '1' || s[0] == '2') ? s[0] - '0' : 0;
	}
	/* Frame 0's registers from the entry point; or this function's own at
	 * this very point (the CFI row for pc describes them), walking up
	 * through the monitor's frames to frame 0. */
	__asm__ volatile("leaq 0(%%rip), %0\n\tmovq %%rsp, %1\n\tmovq %%rbp, %2"
			 : "=&r"(pc), "=&r"(sp), "=&r"(bp));
	if (f0->sp) {
		pc = ret;
		sp = f0->sp;
		bp = f0->bp;
	}
	uw_hit_value = 0;
	/* With frame 0 known, unwind_recall has looked the memo up already. */
	n = walk(frames, max, ret, flags, pc, sp, bp, owner,
		 f0->sp && uw_check <= 0 ? NULL : value, value != NULL);
	if (uw_check > 0) {
		if (n > 0) {
			unwind_fill(frames, n); /* compared with the reference's too */
			if (__atomic_fetch_add(&uw_n_fast, 1, __ATOMIC_RELAXED) == 0 && uw_check == 2)
				frames[n - 1] ^= 1;
			n = check(frames, max, n, flags, ret);
		} else {
			__atomic_fetch_add(&uw_n_checked, 1, __ATOMIC_RELAXED);
		}
		/* A recalled walk (unwind_recall) too. */
		if (uw_recall_value && n > 0) {
			__atomic_fetch_add(&uw_n_memo, 1, __ATOMIC_RELAXED);
			if (stackhash(frames, (uint32_t)n, 0) != uw_recall_fhash || *flags) {
				static const char m[] = "mprof: unwind mismatch: a recalled walk differs\n";
				__atomic_fetch_add(&uw_n_mismatch, 1, __ATOMIC_RELAXED);
				say(m, sizeof m - 1);
			}
		}
		uw_recall_value = 0;
		/* A remembered walk must be the very stack a walk gives. */
		if (uw_hit_value && value && n > 0) {
			__atomic_fetch_add(&uw_n_memo, 1, __ATOMIC_RELAXED);
			if (stackhash(frames, (uint32_t)n, 0) != uw_hit_fhash || *flags) {
				__atomic_fetch_add(&uw_n_mismatch, 1, __ATOMIC_RELAXED);
				static const char m[] = "mprof: unwind mismatch: a remembered walk differs\n";
				say(m, sizeof m - 1);
			} else {
				*value = uw_hit_value;
			}
		}
	}
	if (n < 0)
		n = unwind_capture_slow(frames, max, ret, flags);
	if (hash && !(value && *value)) {
		/* The record's outer hashes, when it is this very walk (it was
		 * kept whole, and check mode left the frames alone). */
		const struct rec *rc = uw_rec;
		if (uw_fresh && rc && n > 0 && rc->n == n && !*flags && uw_check <= 0) {
			*hash = stackhash_fin(rc->r[n - 1].h, (uint32_t)n, 0);
		} else {
			*hash = stackhash(frames, (uint32_t)n, *flags);
			if (uw_check > 0 && uw_fresh && rc && n > 0 && rc->n == n && !*flags &&
			    *hash != stackhash_fin(rc->r[n - 1].h, (uint32_t)n, 0)) {
				static const char m[] = "mprof: unwind mismatch: the walk's hash differs\n";
				__atomic_fetch_add(&uw_n_mismatch, 1, __ATOMIC_RELAXED);
				say(m, sizeof m - 1);
			}
		}
	}
	return n;
}

/* ---- capture from interrupted registers: async-signal-safe ---- */

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
 * counted before the waiter reads the count.
 */

struct uw_mod {
	uintptr_t lo, hi;     /* PT_LOAD range */
	const uint8_t *hdr;   /* PT_GNU_EH_FRAME, or NULL */
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
	int cap;
};

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
	if (m.lo >= m.hi || f->s->n == f->cap)
		return 0;
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
	dl_iterate_phdr(snap_cb, &f);
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
	stack_bounds((uintptr_t)__builtin_frame_address(0));
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
	int lo, hi;

	if (r != R_EMPTY)
		return r;
	if (ra < 2 || ra >> 47)
		return R_FALLBACK;
	__atomic_add_fetch(&uw_readers, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&uw_closing, __ATOMIC_SEQ_CST)) {
		__atomic_sub_fetch(&uw_readers, 1, __ATOMIC_SEQ_CST);
		return R_FALLBACK;
	}
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
		if (lo > 0 && pc < s->m[lo - 1].hi && s->m[lo - 1].hdr) {
			r = rule_from_hdr(s->m[lo - 1].hdr, pc);
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
			if (slot < sp || slot + 8 > hi || (slot & 7))
				goto stop;
			bp = *(const uintptr_t *)(slot + (uintptr_t)delta);
			bp_known = 1;
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
