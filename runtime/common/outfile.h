/*
 * outfile.h - a collector's data file, written whole or not at all: into
 * a temporary beside it (newfile.h: FILE.tmp. and random hex, created
 * exclusively), renamed to FILE (FILE.PID in a process other than the one
 * the run started with, a forked child), so no reader sees half a file.
 * Outside signal context; no allocation.
 */
#ifndef OUTFILE_H
#define OUTFILE_H

#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * A save's writes and the program's file-size limit (RLIMIT_FSIZE: sshd's
 * sandbox sets it to 0).  Past it, a write sends its thread SIGXFSZ,
 * whose default kills: the program died of our save, with another exit
 * status than its own.  Held: SIGXFSZ blocked in the saving thread, so
 * the write fails (EFBIG) and the save says so; released: one the save
 * caused (none was pending before) taken back, and the mask as it was.
 */
struct outfile_fsz {
	sigset_t old;
	int was;
};
void outfile_fsz_hold(struct outfile_fsz *h);
void outfile_fsz_release(struct outfile_fsz *h);
/* n bytes of s on stderr, whole (EINTR retried), the file-size signal
 * held: a collector's message never kills the program whose stderr is a
 * file past its limit.  Async-signal-safe. */
void outfile_say(const char *s, size_t n);

struct outfile {
	struct outfile_fsz fsz;
	int fd;
	int aside; /* a file aside (outfile_open): the keep is not told */
	char path[PATH_MAX + 32], tmp[PATH_MAX + 64];
	void (*warn)(const char *a, const char *b, const char *c);
};

/* Create the temporary file for `base` (the file-size signal held until
 * outfile_close); aside: NULL, or a suffix after the name (an image saved
 * as it execs, execs.h: ".exec1"), a file the keep is not told of.  0, or
 * -1 after a warning. */
int outfile_open(struct outfile *o, const char *base, pid_t root, const char *aside,
		 void (*warn)(const char *, const char *, const char *));
/* Close it; with rc 0 (the writer's result) rename it into place, else
 * remove it.  0, or -1 after a warning. */
int outfile_close(struct outfile *o, int rc);

/* v in decimal into buf (24 bytes); returns buf. */
char *outfile_u64(char *buf, uint64_t v);
/* /proc/self/cmdline with spaces between the arguments (static storage). */
const char *outfile_cmdline(void);
/* /proc/self/exe (static storage). */
const char *outfile_exe(void);

#endif
