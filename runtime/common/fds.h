/*
 * fds.h - the collectors' own descriptors (fds_*), kept from the
 * program's close, close_range and closefrom (fds.c).
 *
 * A daemon closes every descriptor from 3 up (closefrom, close_range, a
 * loop of close, Python's os.closerange) and opens its own, which then
 * take the freed numbers.  Unprotected, cpprof's perf events went with
 * them: no sample after that, and no word said; and a thread's exit
 * closed what it took for its event, by then one of the program's own
 * files.  As valgrind does for its own, a descriptor a collector marks
 * here is not the program's to close: close() says EBADF, as if it were
 * not open (the program never opened it), and the ranges skip it.
 */
#ifndef FDS_H
#define FDS_H

/* Mark fd as a collector's (fd >= 0; those above FDS_MAX stay unmarked). */
void fds_own(int fd);
/* fd moved up to the lowest free number from `from` on (close-on-exec),
 * the old number closed, and marked; or -1 (fd closed) if it cannot be. */
int fds_up(int fd, int from);
/* A collector's new fd, marked, and moved up from fds_half() where
 * there is room (else where it is): the number it has now. */
int fds_keep(int fd);
/* Where a collector's descriptors go: from half the descriptor limit
 * on, 512 under the usual 1024 (the keep's take the top ones). */
int fds_half(void);
/* Unmark fd and close it (a collector's own close: never refused). */
void fds_close(int fd);
/*
 * Whether the collectors may hold n more descriptors: every one they hold
 * is one fewer for the program, whose limit (RLIMIT_NOFILE's soft one)
 * stays as it set it.  They keep to an eighth of it (128 under the usual
 * 1024; 8 at least), so a program that uses up to seven eighths of its
 * limit runs as it does bare: a sampled thread beyond that samples by
 * what takes no descriptor, or not at all (sampler.md).  Descriptors
 * kept (brief 0) leave FDS_BRIEF of the budget to those held for a moment
 * (brief 1: the watcher's look at a thread that keeps none).  Threads set
 * up at once may pass it by one each.
 */
int fds_spare(int n, int brief);
#define FDS_BRIEF 2
/* The budget fds_spare keeps to, and the limit it is an eighth of. */
int fds_budget(long *limit);
/* The program's close of fd (the interposed close, and the system call
 * through syscall(): sandbox.c): 1 and errno EBADF when fd is marked, the
 * close refused; else 0, and the caller closes it. */
int fds_refused(int fd);
/* The program's close_range (the interposed one; sys 1: the system call
 * through syscall(), made as the system call): the marked descriptors
 * left open. */
int fds_prog_close_range(unsigned int first, unsigned int last, int flags, int sys);
/* Find the real close functions (a constructor does; see execs_init). */
void fds_init(void);

#define FDS_MAX (1 << 20)

#endif
