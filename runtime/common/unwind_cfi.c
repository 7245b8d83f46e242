/*
 * unwind_cfi.c - reading .eh_frame (part of unwind_*, unwind_int.h): the
 * rule for an address, found by a binary search of .eh_frame_hdr's table,
 * its FDE's CIE parsed and both CFA programs (DWARF 5, 6.4.2) run up to the
 * address.  Only what the fast walk takes becomes a rule (CFA on rsp or rbp
 * plus an offset, the return address at CFA-8, rbp saved or unchanged);
 * anything else is R_FALLBACK.  Pure reads of the module's mapped tables,
 * every length checked: safe in a signal handler.
 */
#include <string.h>

#include "unwind_int.h"

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
 * The one CFA expression the walk takes: the PLT's, as GNU ld writes it
 * for x86-64 (rsp + 8, and 8 more at an entry's offsets from n on, where
 * its lazy path has pushed: DW_OP_breg7 8, DW_OP_breg16 0, DW_OP_lit15,
 * DW_OP_and, DW_OP_lit<n>, DW_OP_ge, DW_OP_lit3, DW_OP_shl, DW_OP_plus).
 * A rule is found for one address (pc), so it is evaluated there: the
 * CFA offset from rsp into *off, or 0 if e[0..len) is another expression.
 * A sample in a PLT stub kept no caller (python3: 1.7% of them).
 */
static int plt_cfa(const uint8_t *e, uint64_t len, uintptr_t pc, int64_t *off)
{
	static const uint8_t head[] = { 0x77, 0x08, 0x80, 0x00, 0x3f, 0x1a },
			     tail[] = { 0x2a, 0x33, 0x24, 0x22 };

	if (len != 11 || memcmp(e, head, sizeof head) || e[6] < 0x30 || e[6] > 0x4f ||
	    memcmp(e + 7, tail, sizeof tail))
		return 0;
	*off = 8 + ((pc & 15) >= (uintptr_t)(e[6] - 0x30) ? 8 : 0);
	return 1;
}

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
			if (loc && plt_cfa(r.p, delta, target, &off)) {
				s->cfa_reg = 7;
				s->cfa_off = off;
				s->cfa_other = 0;
			} else {
				s->cfa_other = 1;
			}
			r.p += delta;
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
	if (r.bad)
		return R_FALLBACK;
	if (pc < begin || pc - begin >= range)
		return R_NOFDE; /* no FDE for pc: libgcc may see a sigreturn */

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
uint32_t uw_rule_from_hdr(const uint8_t *hdr, uintptr_t pc)
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
		return R_NOFDE;
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

uint32_t uw_rule_nofde(uintptr_t ra, uintptr_t lo, uintptr_t len)
{
	/* mov $15, %rax; syscall: rt_sigreturn, glibc's __restore_rt (what
	 * libgcc's x86_64_fallback_frame_state looks for). */
	static const uint8_t sigreturn[9] = { 0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05 };

	if (ra < lo || ra - lo > len || len - (ra - lo) < sizeof sigreturn)
		return R_FALLBACK;
	return memcmp((const void *)ra, sigreturn, sizeof sigreturn) ? R_END : R_FALLBACK;
}
