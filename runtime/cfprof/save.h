/*
 * save.h - cfprof's data file (doc/format.md, kind cfprof).
 */
#ifndef CF_SAVE_H
#define CF_SAVE_H

/* Write the file (FILE.PID in a forked child).  0, or -1 after a warning. */
int cfsave_save(void);

#endif
