/*
 * execs.h - the collectors' exec functions (execs.c): execve and the rest
 * of the family, interposed so that the keep (keep.h) knows the program
 * image whose tables it holds is going; the real function does the rest.
 * Exported by every runtime library; nothing to call.
 */
#ifndef EXECS_H
#define EXECS_H

#endif
