/*
 * keeper.h - the launcher's side of the keep (lib/format/keepfmt.h): making the
 * memfd the program's runtime keeps its tables in, and, when the program
 * ended without writing its profile, writing it from there (the
 * salvagers: salvage_mprof.c, salvage_cpprof.c, salvage_cfprof.c).
 */
#ifndef KEEPER_H
#define KEEPER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct format_writer;
struct keep_head;

/* A keep made for one run. */
struct keeper {
	int fd;       /* the memfd (close-on-exec here), or -1: none */
	int child_fd; /* the number the program gets it as */
	/* Where the program's forked children send the keeps they make
	 * (runtime/common/keep.c): our end, theirs, and the number the
	 * program gets theirs as; -1: none. */
	int sock, sock_theirs, child_sock;
	char env[128]; /* "N:DEV:INO" for the variable that names it, then ":S:SINO" */
};

/* Make one: 0, or -1 when the system has no memfd (the run goes on
 * without); a system with no socketpair has no children's keeps. */
int keeper_make(struct keeper *k);
/* In the (v)forked child, before exec: the memfd as child_fd, open. */
void keeper_child(const struct keeper *k);
void keeper_close(struct keeper *k);

/* The header now (after the program ended), or -1. */
int keeper_head(const struct keeper *k, struct keep_head *h);

/* A keep's memory, mapped read-only, addressed as the program did. */
struct keeper_img {
	const struct keep_head *h;
	const unsigned char *mem; /* offset 0 */
	uint64_t base;            /* the program's address of mem[0] */
	uint64_t len;             /* bytes mapped */
};

/* Bytes [addr, addr + n) of the program's memory, or NULL unless all of
 * them are in the keep (an address from a dead program is never trusted). */
const void *keeper_at(const struct keeper_img *k, uint64_t addr, uint64_t n);
/* The NUL-terminated string at addr, or NULL (not in the keep, or longer
 * than max). */
const char *keeper_str(const struct keeper_img *k, uint64_t addr, size_t max);

/*
 * What a salvager is given: the image, the file being written, and what
 * INFO says of the end.  A salvager writes every section but INFO's
 * common part (keeper_put_info does, with its own entries added).
 */
struct salvage {
	const struct keeper_img *k;
	struct format_writer *w;
	const char *ended;  /* INFO "ended": "killed by signal 9 (SIGKILL)"; NULL:
			     * a snapshot of a running program */
	uint64_t end_ns;    /* when the launcher saw the end */
	char why[4400];     /* a failure's reason (a path in it) */
};

/* The INFO section: the runtime's entries (keep_info), pid, start_ns,
 * end_ns, reason salvage, ended, and the salvager's own n pairs; and a
 * language profile's (lang, lang.frames, lang.fn.N) from the names'
 * mirror at lang (runtime/lang/langname.h; 0: none). */
void keeper_put_info(struct salvage *s, const char *const (*kv)[2], size_t n, uint64_t lang);
/* The MODULES section from the runtime's list (later ones win where two
 * overlap); the COUNTERS section from its counters. */
void keeper_put_modules(struct salvage *s);
void keeper_put_counters(struct salvage *s);

/* Each kind's salvager: 0, or -1 with s->why. */
int salvage_mprof(struct salvage *s);
int salvage_cpprof(struct salvage *s);
int salvage_cfprof(struct salvage *s);
/* 1 if the cfprof keep at fd (header h) holds no thread's tree: a child
 * that never ran an instrumented function, whose runtime writes no file
 * (runtime/cfprof/collector.c's save); else 0. */
int salvage_cfprof_idle(int fd, const struct keep_head *h);

/* How a program whose keep is h ended with wait status `status`, as INFO
 * "ended" says it: "killed by signal 9 (SIGKILL)", "_exit(3)", "exit
 * status 5 without exit handlers (exit_group)"; oom: the system's count of
 * OOM kills rose while it ran (keeper_oom_kills). */
void keeper_ended(const struct keep_head *h, int status, int oom, char *buf, size_t len);
/* The kernel's count of processes the OOM killer killed (/proc/vmstat). */
uint64_t keeper_oom_kills(void);

/*
 * After the program (pid) ended with wait status `status`: if its runtime
 * left the keep recording, write its profile to path from the keep.
 * Returns 1 when written, 0 when there was nothing to do (the runtime
 * saved, or never took the keep: *h says which), -1 after a one-line
 * reason in why.
 */
int keeper_salvage(const struct keeper *k, pid_t pid, int status, int oom, const char *path,
		   struct keep_head *h, char *why, size_t whylen);
/* Say (what: "mprof: run") that who's profile (the program, "child 123")
 * was not written to path from its keep, why: the file that could not be
 * written, or the keep that could not be read. */
void keeper_say_unwritten(const char *what, const char *who, const char *path, const char *why);

/*
 * Wait for the program (pid) as waitpid(pid, status, 0) would, and
 * meanwhile take the keeps its forked children send (their whole
 * descent's): a child that dies without saving its profile (a signal:
 * multiprocessing's terminate() sends its workers SIGTERM) gets it
 * written from its keep to path.PID, as its runtime would have named it,
 * said on stderr after what (e.g. "mprof: run").  Children still running
 * when the program ends get a keeper of their own, in the background,
 * which does the same for them and goes when none is left (nothing said:
 * its standard streams are /dev/null).  0, or -1 (waitpid's errno).
 */
int keeper_wait(struct keeper *k, pid_t pid, int *status, const char *path, const char *what);

/*
 * The profile of running process pid, written to path from its keep
 * (found among its descriptors: it was started by `mprof run`, or its
 * runtime made its own with MPROF_SNAPSHOT=1); INFO reason snapshot.  The
 * program goes on: its tables are read as they are, a snapshot a few
 * events wide.  1, or -1 with a reason in why.
 */
int keeper_snapshot(pid_t pid, const char *path, char *why, size_t whylen);
/* The data file process pid writes, as its runtime put it in its keep
 * (absolute), into buf; 0, or -1: no keep, or none said. */
int keeper_snapshot_out(pid_t pid, char *buf, size_t len);

#endif
