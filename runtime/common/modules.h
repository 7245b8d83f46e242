/*
 * modules.h - the MODULES section: the objects mapped in the process at save
 * time (dl_iterate_phdr), so frames can be symbolized offline.
 */
#ifndef MODULES_H
#define MODULES_H

struct format_writer;

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
 * Around a real dlclose (outside signal context): modules_hold_begin notes
 * the objects mapped and says whether this call holds (0: another dlclose
 * is in progress, a nested or a concurrent one); modules_hold_end(that)
 * maps a PROT_NONE placeholder over the range of each object the dlclose
 * unmapped, so nothing mapped later lies over it (modules.c).
 */
int modules_hold_begin(void);
void modules_hold_end(int mine);

#endif
