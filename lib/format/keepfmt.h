/*
 * keepfmt.h - the keep: shared memory in which a collector keeps its
 * tables while a launcher (`mprof run`, `cpprof record`, `cfprof record`)
 * waits for the program, so that the launcher can write the profile
 * however the program ends (issue 22: SIGKILL, the OOM killer, abort, a
 * crash, _exit, exit_group).  The runtime (runtime/common/keep.c) and the
 * launcher (lib/run/keeper.c) both include this; keep the two in step.
 *
 * The launcher makes a memfd, writes this header at its offset 0 (state
 * KEEP_WAITING) and passes it to the program as fd N, naming it in the
 * environment as N:DEV:INO (the fd's st_dev and st_ino, so a runtime never
 * takes a file of the program's that happens to have that number).  The
 * runtime of the process the launcher started maps the whole file shared,
 * sets state KEEP_RECORDING and from then on takes the memory of the
 * tables a save reads (stacks, per-thread counters, the module list) from
 * it, by bumping `used`.  Those tables hold pointers: the program's
 * addresses, which the launcher translates (address - base = offset).
 * What a save also reads from the runtime's static variables is mirrored
 * into the collector's root (a few stores on rare paths: a new stack, a
 * new thread, a publish of the heap's peak), never on the hot path.
 *
 * When the runtime writes its file at exit (or mprof_stop), state becomes
 * KEEP_SAVED and the launcher does nothing.  Just before the process execs
 * another program, KEEP_EXECED: the runtime of that program, if it has
 * one, takes the keep over; if not (static, set-user-ID, LD_PRELOAD gone),
 * the tables left behind are not its profile.  When the program ends any
 * other way, the state is still KEEP_RECORDING, and the launcher reads the
 * tables from the memfd and writes the file, saying in INFO how the
 * program ended.  Everything in the file is hostile to the launcher: a
 * crash may have scribbled on it.  Every address is checked against the
 * mapping, every count bounded, before use.
 */
#ifndef KEEPFMT_H
#define KEEPFMT_H

#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

#define KEEP_MAGIC 0x3170656b666f7270ull /* "profkep1" */
#define KEEP_VERSION 2
/* The header's size; the tables start after it. */
#define KEEP_HEAD 16384

enum keep_state {
	KEEP_WAITING = 0,   /* made by the launcher; no runtime has it yet */
	KEEP_RECORDING = 1, /* a runtime records into it */
	KEEP_SAVED = 2,     /* the runtime wrote its file: nothing to do */
	KEEP_VOID = 3,      /* it could not be used: `why` says why */
	KEEP_EXECED = 4,    /* the process exec'd `exec`; a runtime there takes
			     * the keep over (RECORDING), else nothing is left */
};

#define KEEP_MAX_INFO 256
#define KEEP_MAX_COUNTERS 64
#define KEEP_WHY 160

/* A pair of NUL-terminated strings in the keep (the program's addresses). */
struct keep_kv {
	uint64_t key, val;
};

struct keep_head {
	uint64_t magic;
	uint32_t version;
	uint32_t kind;     /* FORMAT_KIND_* of the runtime that took it */
	uint64_t layout;   /* the collector's layout signature (its keep.h) */
	uint32_t state;    /* enum keep_state */
	int32_t pid;       /* of the process that took it */
	uint64_t base;     /* the program's address of offset 0 */
	uint64_t size;     /* bytes mapped */
	uint64_t used;     /* bytes handed out, this header included */
	uint64_t start_ns; /* CLOCK_REALTIME when the runtime took it */
	uint64_t saves;    /* files the runtime wrote (autosaves too) */
	uint64_t file_dev, file_ino; /* the last of them */
	uint64_t root;     /* the collector's root (the program's address) */
	uint32_t exit_called; /* 1: the program called _exit (exit_status);
			       * 2: its exit handlers ran, the runtime's last */
	int32_t exit_status;
	/* Children forked with a keep of their own on its way to the
	 * launcher (keep.c counts each in the parent, before fork returns):
	 * the launcher waits, briefly, for as many keeps as there are, so
	 * that a program that forks and ends at once (a daemon detaching)
	 * does not end before its child's keep has come (keeper_wait). */
	uint32_t forked;
	/* Program images of this process whose profile was saved as they
	 * exec'd (runtime/common/execs.c): the last one's number, carried
	 * over to the image that takes the keep next. */
	uint32_t exec_saves;
	/* The module list (runtime/common/modules.h, struct modules_ent):
	 * every object the runtime saw mapped, oldest first. */
	uint64_t mod_ents, mod_n, mod_str, mod_nstr;
	uint32_t ninfo, ncounters; /* entries of info[] and counters[] in use */
	uint64_t info_lost;        /* INFO entries that did not fit */
	char why[KEEP_WHY];        /* KEEP_VOID: the reason */
	char exec[KEEP_WHY];       /* KEEP_EXECED: the program exec'd (and
				    * once it took the keep over, what runs) */
	struct keep_kv info[KEEP_MAX_INFO];         /* INFO as the runtime knows it */
	struct keep_kv counters[KEEP_MAX_COUNTERS]; /* COUNTERS: name, unit */
	/* The data file this process writes (absolute; a forked child's
	 * FILE.PID), where `mprof snapshot` puts its files by default: a
	 * server that rewrites its process title overwrites its environment
	 * (redis, nginx), MPROF_OUT with it.  Empty: not said.  Last, so the
	 * fields above keep their places. */
	char out[4096];
};
_Static_assert(sizeof(struct keep_head) <= KEEP_HEAD, "the header fits its page");

/* The program's address of a string in the keep, rounded up to this. */
#define KEEP_ALIGN 16

/*
 * A forked child's own keep, sent to the launcher (runtime/common/keep.c's
 * child_keep, lib/run/keeper.c's keeper_wait): one datagram on the socket
 * named after N:DEV:INO in the environment (":S:SINO"), the child's pid
 * and its parent's its 8 bytes and the memfd its one SCM_RIGHTS
 * descriptor.
 */
/* struct ucred's size (pid, uid, gid), without _GNU_SOURCE here. */
#define KEEP_UCRED_SIZE (3 * sizeof(int32_t))
struct keep_kid_msg {
	int32_t pid, ppid; /* the child's, its parent's (the launcher counts the program's own) */
	struct iovec iov;
	struct msghdr mh;
	/* Received, also the sender's credentials (the launcher's socket has
	 * SO_PASSCRED: its pid as the launcher sees it, in a pid namespace
	 * of its own too). */
	char cm[CMSG_SPACE(sizeof(int)) + CMSG_SPACE(KEEP_UCRED_SIZE)]
		__attribute__((aligned(__alignof__(struct cmsghdr))));
};

/* m made ready to send (fd >= 0: pid and fd in it) or to receive into. */
static inline struct msghdr *keep_kid_msg(struct keep_kid_msg *m, int32_t pid, int32_t ppid,
					  int fd)
{
	memset(m, 0, sizeof *m);
	m->pid = pid;
	m->ppid = ppid;
	m->iov.iov_base = &m->pid;
	m->iov.iov_len = 2 * sizeof m->pid;
	m->mh.msg_iov = &m->iov;
	m->mh.msg_iovlen = 1;
	m->mh.msg_control = m->cm;
	m->mh.msg_controllen = fd >= 0 ? CMSG_SPACE(sizeof(int)) : sizeof m->cm;
	if (fd >= 0) {
		struct cmsghdr *c = CMSG_FIRSTHDR(&m->mh);

		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof fd);
	}
	return &m->mh;
}

#endif
