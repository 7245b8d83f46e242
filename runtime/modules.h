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

#endif
