/*
 * execs.h - the collectors' exec functions (execs.c): execve and the rest
 * of the family, interposed so that the keep (keep.h) knows the program
 * image whose tables it holds is going; the real function does the rest.
 * Exported by every runtime library.
 */
#ifndef EXECS_H
#define EXECS_H

/* Find the real functions (a constructor does; a collector that starts
 * sampling in its own constructor calls it first, so that none of this
 * is sampled as the program's). */
void execs_init(void);

#endif
