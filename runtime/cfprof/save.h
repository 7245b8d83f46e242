/*
 * save.h - cfprof's data file (doc/format.md, kind cfprof).
 */
#ifndef CF_SAVE_H
#define CF_SAVE_H

/* Write the file (FILE.PID in a forked child).  0, or -1 after a warning. */
int cfsave_save(const char *aside);
/* The file's INFO entries and counters known from the start, into the
 * keep (keep.h): a file the launcher writes has them. */
void cfsave_keep(void);

#endif
