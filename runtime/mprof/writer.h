/*
 * writer.h - saving the profile: one whole data file (lib/format.h), written
 * to FILE.tmp.PID and renamed over FILE, so a reader never sees half a file.
 * FILE is mon.out, or mon.out.PID in a process other than mon.root_pid.
 */
#ifndef WRITER_H
#define WRITER_H

/* The save lock: one save at a time; also excludes mprof_restart. */
int writer_lock(void);    /* 0, or -1: not taken (lock.h) */
int writer_trylock(void); /* 0 when taken */
void writer_unlock(void);
void writer_lock_reinit(void);

/*
 * Write the profile now; reason is the INFO "reason" (exit, autosave, stop).
 * Caller holds the save lock and the recursion guard.  0, or -1 after
 * reporting the failure through mon_trouble() (and setting mon.nosave).
 */
int writer_save(const char *reason);

#endif
