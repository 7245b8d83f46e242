/*
 * keep.h - the keep, the runtime's side (keep.c): the tables a save reads,
 * in memory the launcher can read after the program is gone, so the
 * profile survives SIGKILL, the OOM killer, abort, a crash, _exit and
 * exit_group (lib/format/keepfmt.h has the layout and the why; lib/run/keeper.c the
 * launcher's side).
 *
 * Only the process a launcher started takes the keep, and only when the
 * launcher made one (its variable, MPROF_KEEP and the like, names it).
 * Otherwise every call here is cheap and keep_map is arena_map: the
 * runtime works as it did.  Nothing here allocates with malloc or uses
 * stdio.
 */
#ifndef KEEP_H
#define KEEP_H

#include <stddef.h>
#include <stdint.h>

struct keep_head;
/* The header, while this process records into the keep; else NULL. */
extern struct keep_head *keep_h __attribute__((visibility("hidden")));

/*
 * Take the keep the variable keep_env names, if the variable root_env
 * names this process (the launcher's child) and the descriptor is the
 * launcher's memfd; a process that inherited it otherwise closes it.  A
 * forked child's image takes the child's keep its image before left; an
 * image left none, under a launcher that takes children's keeps, makes
 * and sends one of its own.
 * kind is the collector's FORMAT_KIND_*, layout its signature.  Once per
 * program image (an image the root exec'd takes it over).  Works before
 * libc has its environment (reads /proc/self/environ).
 */
void keep_attach(const char *keep_env, const char *root_env, uint32_t kind, uint64_t layout);

/*
 * Without a launcher, a keep of our own (MPROF_SNAPSHOT=1): a memfd that
 * `mprof snapshot PID` finds in /proc/PID/fd and writes the profile of
 * the running process from.  Nobody writes it at death.  0, or -1.
 */
int keep_own(uint32_t kind, uint64_t layout);

/* n bytes of zeroed pages from the keep, or from arena_map when there is
 * none (or it is full: it is then void, never salvaged); NULL if neither. */
void *keep_map(size_t n);
/* Like keep_map, for a table reserved large and touched as used: without
 * a keep, a private mapping with MAP_NORESERVE (no commit charge). */
void *keep_reserve(size_t n);
/* The program lowers its address-space limit to limit (limits.c): the
 * keep's reservation cut to a quarter of it, never below what is in use
 * (then a keep_map past it voids the keep, as a full one does). */
void keep_fit(uint64_t limit);
/* Give back what keep_map or keep_reserve gave. */
void keep_unmap(void *p, size_t n);
/* Whether p was given by the keep (a pointer the launcher can follow). */
int keep_has(const void *p);

/* The collector's root: what the launcher starts reading from. */
void keep_set_root(const void *root);
/* The data file the process writes: base (absolute), and in a forked
 * child base.PID (keep_fork_child adds it).  Outside signal context. */
void keep_out(const char *base);
/* An INFO entry (key, value: copied) the file must have; a COUNTERS
 * entry (name, unit), in column order.  Outside signal context. */
void keep_info(const char *key, const char *val);
void keep_counter(const char *name, const char *unit);

/* The runtime is writing a file (fd, its temporary, before the close: a
 * rename keeps the inode), then renamed it into place: keep_saved; final
 * (at exit, or mprof_stop) means the launcher has nothing to do.  A death
 * between the two leaves the keep recording: the launcher writes. */
void keep_wrote(int fd);
void keep_saved(int final);
/* Recording again (mprof_restart after a final save). */
void keep_recording(void);
/* The program called _exit(status): said in the header for the launcher.
 * 1 if the launcher will write the profile from the keep; 0 if the
 * runtime must save itself (no keep, or one void or saved). */
int keep_exiting(int status);
/* The program's exit handlers ran, the runtime's destructor last: if the
 * keep is still recording after, its save failed (a program that gave up
 * the right to write it), and the launcher says so rather than "without
 * exit handlers". */
void keep_exit_handlers(void);
/* The process is about to exec path (execs.c); it failed after all. */
void keep_exec(const char *path);
void keep_exec_failed(void);
/* The number of the file of an image saved as it execs (execs.h): 1 for
 * the process's first, and on, through the images that take the keep
 * over; 0 without a keep of this process. */
int keep_exec_number(void);
/* That file went (the exec failed): its number is free again. */
void keep_exec_number_back(void);
/* The keep cannot be trusted any more: the launcher will say why.  Before
 * the keep is taken, it will be void when it is. */
void keep_void(const char *why);
/* The runtime's save of its file failed (path, errno err): the keep's
 * why says so while it still records, and the launcher, which writes the
 * file from the keep, says why (a worker that dropped to nobody could not
 * create its file, and nothing said so). */
void keep_save_failed(const char *path, int err);

/*
 * fork: keep_fork_prepare in the parent just before (after the
 * collector's fork locks: a consistent copy), keep_fork_parent after, and
 * keep_fork_child in the child: the keep's pages become the child's own
 * (a copy of those in use, as they were at the fork), the descriptor is
 * closed, and keep_map maps privately from then on, or from the child's
 * own keep (keep_forked).  The child never
 * shares a page of the keep with its parent, whatever fails.
 * keep_fork_child: 0; -1 when no copy as at the fork could be made (the
 * child's pages were copied after it, from tables the parent's threads
 * were changing, or lost): the child must not record.
 */
void keep_fork_prepare(void);
void keep_fork_parent(void);
int keep_fork_child(void);
/* Whether a launcher will write this process's profile from the keep if
 * it ends now: the keep is the launcher's (or a forked child's, sent to
 * it) and still recording.  Then a save that fails at the end is the
 * launcher's to write, and to tell of: the runtime says nothing. */
int keep_watched(void);
/* Whether the keep is a forked child's own: under a launcher that takes
 * children's keeps, keep_fork_child moves the child's copy into a memfd
 * of its own and sends it there (lib/run/keeper.h's keeper_wait), which
 * writes the profile of a child that dies by a signal. */
int keep_forked(void);

/* The environment's value of name, as the program started, into buf
 * (cap bytes); 0, or -1 when unset or too long.  Before environ too. */
int keep_env(const char *name, char *buf, size_t cap);

#endif
