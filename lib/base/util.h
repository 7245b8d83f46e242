/*
 * util.h - small helpers shared by the tools (never the runtime): checked
 * allocation, the one error/warning reporter, and a string-interning table.
 */
#ifndef UTIL_H
#define UTIL_H

#include <stddef.h>
#include <stdint.h>

/* Allocation that cannot fail: on out-of-memory, report and exit(2), as git's
 * xmalloc does.  Tools only. */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
/* A formatted string in a new buffer (asprintf that cannot fail). */
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Grow *p (of *cap elements of size `size`) to hold at least n. */
void util_grow(void *p, size_t *cap, size_t n, size_t size);

/* The program name used in messages ("mprof"). */
extern const char *util_progname;
/* "PROG: warning: ..." on stderr. */
void warnx_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "PROG: ..." on stderr, an error the caller goes on from (a command that
 * fails in cpprof's loop, which then exits 2). */
void errx_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "PROG: ..." on stderr, then exit(2): for commands only. */
void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/*
 * Open path for reading only if it is a regular file, without blocking: a
 * path from a data file or a command line may name a FIFO (open would wait
 * for a writer forever), a device, a directory or a /proc file.  Returns the
 * descriptor (O_CLOEXEC), or -1 with *why set to a static reason.
 */
int util_open_file(const char *path, const char **why);

/* The tools' first argument, when it is another tool's command naming
 * no file ("mprof record ./x", "cfprof list"): one line, exit 2, rather
 * than "record: No such file or directory" or a second argument read as
 * the data file.  cmds lists the tool's commands for the message. */
void util_no_command(int argc, char **argv, const char *cmds);

uint64_t util_hash(const void *p, size_t n, uint64_t seed);

/* s as a fraction from 0 to 1 (a number and nothing after it: not "abc",
 * "", "0.5x" or "nan") into *f; 0, or -1 if it is none. */
int util_fraction(const char *s, double *f);

/* Interned strings: equal strings get the same small id, 0..n-1. */
struct strtab;
struct strtab *strtab_new(void);
/* One that keeps the caller's strings rather than copies: they must
 * outlive it (names a symbolizer interned). */
struct strtab *strtab_new_borrowing(void);
uint32_t strtab_intern(struct strtab *t, const char *s);
const char *strtab_get(const struct strtab *t, uint32_t id);
size_t strtab_count(const struct strtab *t);
/* -1 if s was never interned. */
int64_t strtab_find(const struct strtab *t, const char *s);
void strtab_free(struct strtab *t);

#endif
