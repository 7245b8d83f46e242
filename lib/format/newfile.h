/*
 * newfile.h - creating a file where another user may write (newfile.c):
 * the data goes to a temporary beside the target, created exclusively
 * under an unguessable name, and is renamed over the target when whole.
 *
 * Compiled into the collectors (runtime/) as well as the tools: no
 * allocation, no stdio, only calls that are safe inside someone else's
 * malloc.
 */
#ifndef NEWFILE_H
#define NEWFILE_H

#include <stddef.h>

/* Room a temporary's name needs beyond the target's. */
#define NEWFILE_SUFFIX_LEN 21 /* ".tmp." and 16 hex digits */

/*
 * Create the temporary for path: "PATH.tmp.XXXXXXXXXXXXXXXX" (random hex)
 * in path's directory, opened O_WRONLY|O_CREAT|O_EXCL|O_NOFOLLOW, mode
 * 0666 less the umask; its name into tmp (cap bytes).  The caller writes
 * it, closes it and renames it over path (a link at path is replaced,
 * never followed), or removes it.  Refuses a target that is, or links
 * to, something other than a regular file (the rename would replace a
 * device or a FIFO): -EISDIR for a directory, -EEXIST for the others.
 * Returns the descriptor (O_CLOEXEC), or -errno.
 */
int newfile_open(const char *path, char *tmp, size_t cap);
/*
 * A collector, at its start: the umask the program started with is also
 * applied to the files made from then on.  A daemon clears its umask
 * (nginx's umask(0)), and its profiles came out mode 0666, writable by
 * every user; a program that tightens its umask still gets its own.
 * Read from /proc (umask(2) would change it, for a moment, for every
 * thread).
 */
void newfile_keep_umask(void);
/* What newfile_open's -errno means, for a message (tools: strerror). */
const char *newfile_strerror(int rc);

#endif
