/*
 * execs.h - the collectors' exec functions (execs.c): execve and the rest
 * of the family, interposed so that the keep (keep.h) knows the program
 * image whose tables it holds is going; the real function does the rest.
 * Exported by every runtime library.
 */
#ifndef EXECS_H
#define EXECS_H

#include <stddef.h>

/* Find the real functions (a constructor does; a collector that starts
 * sampling in its own constructor calls it first, so that none of this
 * is sampled as the program's). */
void execs_init(void);

/*
 * A program image that execs after spending this much CPU time (its
 * process's, since the image began: its exec, or the fork that made the
 * process) has its profile saved as it goes: a shell's loop before its
 * `exec prog` would otherwise be lost, replaced by prog's profile.  Less
 * is not saved, so that a shell's or make's child that forks and execs
 * at once (a fraction of a millisecond) does not leave a file each.
 */
#define EXECS_SAVE_CPU_NS 10000000ull

/* Defined by each runtime (its collector): the image is about to exec
 * path; save its profile aside (execs_aside) if it spent enough, and go
 * on recording (the exec may fail).  Not in a vfork child. */
void rt_exec_save(const char *path);

/*
 * For rt_exec_save: 1 and the file's suffix (".exec1", ".exec2" for the
 * process's second image saved so: numbered through the images that take
 * a launcher's keep over) and what ended it ("exec'd PATH", cut to fit)
 * into the buffers, if this image spent EXECS_SAVE_CPU_NS; else 0.
 */
int execs_aside(const char *path, char *suffix, size_t scap, char *ended, size_t ecap);
/* The file aside was written, at path: removed if the exec fails. */
void execs_wrote(const char *path);

#endif
