/*
 * save.h - the sampler's data file (doc/format.md, kind cpprof).
 */
#ifndef CP_SAVE_H
#define CP_SAVE_H

/* Write cp.out (FILE.PID in a process other than the root) atomically.
 * 0, or -1 after a one-line warning. */
int sv_save(const char *aside);
/* The file's INFO entries and counters known from the start, into the
 * keep (keep.h): a file the launcher writes has them. */
void sv_keep(void);

#endif
