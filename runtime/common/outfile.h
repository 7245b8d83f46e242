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
#include <stdint.h>
#include <sys/types.h>

struct outfile {
	int fd;
	char path[PATH_MAX + 32], tmp[PATH_MAX + 64];
	void (*warn)(const char *a, const char *b, const char *c);
};

/* Create the temporary file for `base`.  0, or -1 after a warning. */
int outfile_open(struct outfile *o, const char *base, pid_t root,
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
