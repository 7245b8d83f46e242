/*
 * modules.h - the MODULES section: the objects mapped in the process at save
 * time (dl_iterate_phdr), so frames can be symbolized offline.
 */
#ifndef MODULES_H
#define MODULES_H

#include <stdint.h>

struct format_writer;

/* One object: the address range of its PT_LOAD segments, the load bias,
 * the file offset of the first PT_LOAD, and its path and GNU build-id as
 * places in a string buffer.  The keep's module list is an array of these
 * (lib/format/keepfmt.h): the launcher reads them. */
struct modules_ent {
	uint64_t start, end, bias, offset;
	uint32_t path, path_len;
	uint32_t bid, bid_len;
};

/*
 * Write one whole MODULES section.  The main executable comes first, with
 * the path of /proc/self/exe; objects without a file (the vDSO) are left
 * out.  0, or -1 when scratch memory cannot be mapped.
 */
int modules_write(struct format_writer *w);

/*
 * For a sampler whose frames may be in a library unloaded before the save:
 * modules_remember records the objects mapped now (call at start and before
 * each dlclose; outside signal context), and modules_write_all writes the
 * MODULES section of modules_write followed by the remembered objects that
 * no live one overlaps.  0, or -1 when scratch memory cannot be mapped.
 */
int modules_remember(void);
int modules_write_all(struct format_writer *w);
/*
 * The unwinder met addr, a return address or pc in some loaded object:
 * remember the objects mapped now unless a remembered one holds addr (a
 * library loaded since).  For the keep, whose list must hold every frame's
 * object when the program dies; any context, signal handlers included
 * (another caller's remember in progress does it).
 */
void modules_note(uint64_t addr);
/* In a forked child: whatever the parent's other threads were doing. */
void modules_fork_child(void);

/*
 * Around a real dlclose (outside signal context): modules_hold_begin notes
 * the objects mapped and says whether this call holds (0: another dlclose
 * is in progress, a nested or a concurrent one); modules_hold_end(that)
 * maps a PROT_NONE placeholder over the range of each object the dlclose
 * unmapped, so nothing mapped later lies over it (modules.c).
 */
int modules_hold_begin(void);
void modules_hold_end(int mine);

#endif
