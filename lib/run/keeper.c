/*
 * keeper.c - owns the launcher's side of the keep (keeper_*, keeper.h): the
 * memfd made for a run and handed to the program, and writing the profile
 * of a program that ended without writing it: the image's addresses
 * checked, INFO, MODULES and COUNTERS from the header, the rest by the
 * kind's salvager, into a temporary file renamed into place.
 */

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "format/format.h"
#include "run/keeper.h"
#include "format/keepfmt.h"
#include "langname.h"
#include "modules.h"
#include "format/newfile.h"
#include "base/util.h"

int keeper_make(struct keeper *k)
{
	struct keep_head h = { .magic = KEEP_MAGIC, .version = KEEP_VERSION, .state = KEEP_WAITING };
	struct rlimit r;
	struct stat st;
	int n = 1024;

	k->fd = -1;
	k->child_fd = -1;
	k->sock = k->sock_theirs = k->child_sock = -1;
	k->env[0] = 0;
	k->fd = memfd_create("profile-keep", MFD_CLOEXEC);
	if (k->fd < 0)
		return -1;
	if (pwrite(k->fd, &h, sizeof h, 0) != (ssize_t)sizeof h || fstat(k->fd, &st) < 0) {
		keeper_close(k);
		return -1;
	}
	/* High, and free here, so the program's own descriptors (what it
	 * inherits from us, what it opens first) are where they would be;
	 * but below 1024: the kernel sizes a process's descriptor table by
	 * its highest descriptor and copies it at every fork (descriptor
	 * 19999 made a fork 90 us slower; under a limit of 2^20, as
	 * containers have, the table is 8 MiB). */
	if (getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur < 1024)
		n = (int)r.rlim_cur;
	while (--n > 2 && (fcntl(n, F_GETFD) >= 0 || errno != EBADF))
		;
	if (n <= 2) {
		keeper_close(k);
		return -1;
	}
	k->child_fd = n;
	snprintf(k->env, sizeof k->env, "%d:%llu:%llu", n, (unsigned long long)st.st_dev,
		 (unsigned long long)st.st_ino);
	/* The children's socket, the next free number below. */
	{
		int sv[2];
		struct stat ss;

		while (--n > 2 && (fcntl(n, F_GETFD) >= 0 || errno != EBADF))
			;
		if (n > 2 && socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv) == 0) {
			int on = 1;

			/* Each child's pid as the launcher sees it (kids_take). */
			setsockopt(sv[0], SOL_SOCKET, SO_PASSCRED, &on, sizeof on);
			if (fstat(sv[1], &ss) == 0) {
				k->sock = sv[0];
				k->sock_theirs = sv[1];
				k->child_sock = n;
				snprintf(k->env + strlen(k->env), sizeof k->env - strlen(k->env),
					 ":%d:%llu", n, (unsigned long long)ss.st_ino);
			} else {
				close(sv[0]);
				close(sv[1]);
			}
		}
	}
	return 0;
}

void keeper_child(const struct keeper *k)
{
	if (k->fd >= 0)
		dup2(k->fd, k->child_fd); /* the copy is not close-on-exec */
	if (k->sock_theirs >= 0)
		dup2(k->sock_theirs, k->child_sock);
}

void keeper_close(struct keeper *k)
{
	if (k->fd >= 0) {
		/* A descendant that inherited the descriptor (and no runtime
		 * to close it) holds no memory of ours.  Holes punched, not
		 * the file cut: a process that still maps it (a child forked
		 * without glibc's fork handlers) reads zeros, not SIGBUS. */
		struct stat st;

		if (fstat(k->fd, &st) == 0 && st.st_size > 0 &&
		    fallocate(k->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, st.st_size) < 0)
			errno = 0;
		close(k->fd);
	}
	k->fd = -1;
	if (k->sock >= 0)
		close(k->sock);
	if (k->sock_theirs >= 0)
		close(k->sock_theirs);
	k->sock = k->sock_theirs = -1;
}

int keeper_head(const struct keeper *k, struct keep_head *h)
{
	memset(h, 0, sizeof *h);
	if (k->fd < 0 || pread(k->fd, h, sizeof *h, 0) != (ssize_t)sizeof *h ||
	    h->magic != KEEP_MAGIC || h->version != KEEP_VERSION) {
		memset(h, 0, sizeof *h);
		return -1;
	}
	h->why[sizeof h->why - 1] = 0;
	return 0;
}

const void *keeper_at(const struct keeper_img *k, uint64_t addr, uint64_t n)
{
	uint64_t off = addr - k->base;

	if (addr < k->base || off > k->len || n > k->len - off)
		return NULL;
	return k->mem + off;
}

const char *keeper_str(const struct keeper_img *k, uint64_t addr, size_t max)
{
	const char *s = keeper_at(k, addr, 1);
	uint64_t room;

	if (!s)
		return NULL;
	room = k->len - (addr - k->base);
	if (room > max + 1)
		room = max + 1;
	return memchr(s, 0, room) ? s : NULL;
}

/* ---- the sections every kind has ---- */

/* Whether s is printable: no control byte, at most tabs tabs. */
static int printable(const char *s, int tabs)
{
	for (; *s; s++)
		if (*s == '\t' ? --tabs < 0 : (unsigned char)*s < 0x20 || *s == 0x7f)
			return 0;
	return 1;
}

/*
 * A language profile's INFO entries (langname.c's langname_info_put) from
 * the names' mirror at addr: into kv (room for 2 + LANGNAME_MAX), their
 * strings in *buf (the caller frees it); how many.  A name that does not
 * read whole is left out (its frames print unnamed); none at all when the
 * mirror does not.
 */
static size_t lang_info(const struct keeper_img *k, uint64_t addr, const char *(*kv)[2],
			char **buf)
{
	const struct langname_keep *lk;
	const uint64_t *names, *kinds;
	uint32_t nn;
	size_t n = 0;
	char *p;

	*buf = NULL;
	if (!addr || !(lk = keeper_at(k, addr, sizeof *lk)))
		return 0;
	if (!memchr(lk->lang, 0, sizeof lk->lang) || !lk->lang[0] || !printable(lk->lang, 0) ||
	    !memchr(lk->status, 0, sizeof lk->status) || !printable(lk->status, 0))
		return 0;
	kv[n][0] = "lang";
	kv[n++][1] = lk->lang;
	kv[n][0] = "lang.frames";
	kv[n++][1] = lk->status;
	nn = lk->n > LANGNAME_MAX ? LANGNAME_MAX : lk->n;
	names = keeper_at(k, lk->names, ((uint64_t)LANGNAME_MAX + 1) * sizeof *names);
	kinds = keeper_at(k, lk->kinds, ((uint64_t)LANGNAME_MAX + 1) * sizeof *kinds);
	if (!names || !nn)
		return n;
	/* Each: "lang.fn.N", then "NAME<tab>FILE:LINE" and "<tab>KIND". */
	p = *buf = xmalloc((size_t)nn * (24 + 2 * LANGNAME_LEN + 32 + 66));
	for (uint32_t id = 1; id <= nn; id++) {
		const char *name = keeper_str(k, names[id], 2 * LANGNAME_LEN + 31);
		const char *kind = kinds && kinds[id] ? keeper_str(k, kinds[id], 65) : NULL;
		size_t a;

		if (!name || !printable(name, 1) || !strchr(name, '\t'))
			continue;
		kv[n][0] = p;
		p += sprintf(p, "lang.fn.%u", id) + 1;
		kv[n++][1] = p;
		a = strlen(name);
		memcpy(p, name, a + 1);
		if (kind && *kind && printable(kind, 0)) {
			p[a] = '\t';
			memcpy(p + a + 1, kind, strlen(kind) + 1);
		}
		p += strlen(p) + 1;
	}
	return n;
}

/* Process pid's command line now, its arguments space-separated (as the
 * runtimes write it); 0, or -1. */
static int live_cmdline(int32_t pid, char *buf, size_t len)
{
	char path[48];
	ssize_t n;
	int fd;

	snprintf(path, sizeof path, "/proc/%d/cmdline", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	while (n > 0 && buf[n - 1] == 0)
		n--;
	if (n <= 0)
		return -1;
	buf[n] = 0;
	for (ssize_t i = 0; i < n; i++)
		if (!buf[i])
			buf[i] = ' ';
	return 0;
}

void keeper_put_info(struct salvage *s, const char *const (*kv)[2], size_t n, uint64_t lang)
{
	const struct keep_head *h = s->k->h;
	uint32_t ninfo = h->ninfo < KEEP_MAX_INFO ? h->ninfo : KEEP_MAX_INFO, good = 0;
	const char *ki[KEEP_MAX_INFO], *vi[KEEP_MAX_INFO];
	char pid[24], end[24], cmd[1 << 15];
	const char *salvaged[][2] = {
		{ "pid", pid },
		{ "end_ns", end },
		{ "reason", "salvage" },
		{ "ended", s->ended },
		{ "salvaged_by", "the launcher, from the runtime's keep" },
	};
	/* A snapshot of a running program: no end yet. */
	const char *snapshot[][2] = {
		{ "pid", pid },
		{ "end_ns", end },
		{ "reason", "snapshot" },
		{ "salvaged_by", "mprof snapshot, from the running program's keep" },
	};
	const char *(*own)[2] = s->ended ? salvaged : snapshot;
	size_t nown = s->ended ? sizeof salvaged / sizeof salvaged[0]
			       : sizeof snapshot / sizeof snapshot[0];
	const char *(*lkv)[2] = lang ? xcalloc(2 + LANGNAME_MAX, sizeof *lkv) : NULL;
	char *lbuf = NULL;
	size_t nl = lang ? lang_info(s->k, lang, lkv, &lbuf) : 0;

	for (uint32_t i = 0; i < ninfo; i++) {
		ki[good] = keeper_str(s->k, h->info[i].key, FORMAT_MAX_STRING);
		vi[good] = keeper_str(s->k, h->info[i].val, FORMAT_MAX_STRING);
		/* A running program's command line as it is now, as its own
		 * save at the end will say it: a server retitles itself
		 * (postgres: "postgres: postgres postgres [local] idle"),
		 * and the keep has it as it started. */
		if (ki[good] && vi[good] && !s->ended && !strcmp(ki[good], "cmdline") &&
		    live_cmdline(h->pid, cmd, sizeof cmd) == 0)
			vi[good] = cmd;
		/* The keep's word for a leak scan the program's end skipped
		 * (--leaks: it died, or ended by _exit) is not a running
		 * program's: its snapshot has no scan, and did not end. */
		if (ki[good] && !s->ended && !strcmp(ki[good], "leak_scan"))
			continue;
		if (ki[good] && vi[good])
			good++;
	}
	snprintf(pid, sizeof pid, "%d", h->pid);
	snprintf(end, sizeof end, "%llu", (unsigned long long)s->end_ns);
	format_begin_section(s->w, FORMAT_SEC_INFO);
	format_put_u32(s->w, good + (uint32_t)nown + (uint32_t)n + (uint32_t)nl);
	for (uint32_t i = 0; i < good; i++) {
		format_put_str(s->w, ki[i]);
		format_put_str(s->w, vi[i]);
	}
	for (size_t i = 0; i < nown; i++) {
		format_put_str(s->w, own[i][0]);
		format_put_str(s->w, own[i][1]);
	}
	for (size_t i = 0; i < n; i++) {
		format_put_str(s->w, kv[i][0]);
		format_put_str(s->w, kv[i][1]);
	}
	for (size_t i = 0; i < nl; i++) {
		format_put_str(s->w, lkv[i][0]);
		format_put_str(s->w, lkv[i][1]);
	}
	format_end_section(s->w);
	free(lkv);
	free(lbuf);
}

/* Entry i of the runtime's module list, checked: its path and build-id
 * inside the list's strings, a range that is one. */
static const struct modules_ent *mod_ent(const struct salvage *s, uint64_t i, const char **str)
{
	const struct keep_head *h = s->k->h;
	const struct modules_ent *e =
		keeper_at(s->k, h->mod_ents + i * sizeof *e, sizeof *e);

	*str = keeper_at(s->k, h->mod_str, h->mod_nstr);
	if (!e || !*str || e->start >= e->end || (uint64_t)e->path + e->path_len > h->mod_nstr ||
	    (uint64_t)e->bid + e->bid_len > h->mod_nstr || e->path_len == 0 ||
	    e->path_len > FORMAT_MAX_STRING || e->bid_len > 64)
		return NULL;
	return e;
}

void keeper_put_modules(struct salvage *s)
{
	const struct keep_head *h = s->k->h;
	/* The newest 2^16 at most: the list is oldest first, and the frames
	 * of the last moments are in the objects loaded last. */
	uint64_t n = h->mod_n < (1u << 16) ? h->mod_n : 1u << 16, first = h->mod_n - n, nkept = 0;
	unsigned char *keep = xcalloc(n ? n : 1, 1);
	const char *str;

	/* Newest first: of two that overlap (a library unloaded, another
	 * loaded over its place), the later is what the frames since saw. */
	for (uint64_t i = n; i-- > 0;) {
		const struct modules_ent *e = mod_ent(s, first + i, &str), *o;
		int clash = 0;

		if (!e)
			continue;
		for (uint64_t j = i + 1; j < n && !clash; j++)
			if (keep[j] && (o = mod_ent(s, first + j, &str)) && e->start < o->end &&
			    o->start < e->end)
				clash = 1;
		if (!clash) {
			keep[i] = 1;
			nkept++;
		}
	}
	format_begin_section(s->w, FORMAT_SEC_MODULES);
	format_put_u32(s->w, (uint32_t)nkept);
	for (uint64_t i = 0; i < n; i++) {
		const struct modules_ent *e;

		if (!keep[i] || !(e = mod_ent(s, first + i, &str)))
			continue;
		format_put_u64(s->w, e->start);
		format_put_u64(s->w, e->end);
		format_put_u64(s->w, e->bias);
		format_put_u64(s->w, e->offset);
		format_put_blob(s->w, str + e->path, e->path_len);
		format_put_blob(s->w, str + e->bid, e->bid_len);
	}
	format_end_section(s->w);
	free(keep);
}

void keeper_put_counters(struct salvage *s)
{
	const struct keep_head *h = s->k->h;
	uint32_t n = h->ncounters < KEEP_MAX_COUNTERS ? h->ncounters : KEEP_MAX_COUNTERS;
	const char *a[KEEP_MAX_COUNTERS], *b[KEEP_MAX_COUNTERS];
	uint32_t good = 0;

	for (uint32_t i = 0; i < n; i++) {
		a[good] = keeper_str(s->k, h->counters[i].key, 256);
		b[good] = keeper_str(s->k, h->counters[i].val, 256);
		if (a[good] && b[good])
			good++;
	}
	format_begin_section(s->w, FORMAT_SEC_COUNTERS);
	format_put_u32(s->w, good);
	for (uint32_t i = 0; i < good; i++) {
		format_put_str(s->w, a[i]);
		format_put_str(s->w, b[i]);
	}
	format_end_section(s->w);
}

/* ---- the salvage ---- */

uint64_t keeper_oom_kills(void)
{
	char line[128];
	uint64_t n = 0;
	FILE *f = fopen("/proc/vmstat", "re");

	if (!f)
		return 0;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "oom_kill %" SCNu64, &n) == 1)
			break;
	fclose(f);
	return n;
}

/* Whether h says why its runtime's save failed (keep_save_failed). */
static int save_why(const struct keep_head *h)
{
	return h->state != KEEP_VOID && h->why[0] && memchr(h->why, 0, sizeof h->why);
}

void keeper_ended(const struct keep_head *h, int status, int oom, char *buf, size_t len)
{
	if (WIFSIGNALED(status)) {
		int sig = WTERMSIG(status);
		const char *name = sigabbrev_np(sig);

		snprintf(buf, len, "killed by signal %d (SIG%s)%s%s", sig, name ? name : "?",
			 WCOREDUMP(status) ? ", core dumped" : "",
			 oom && sig == SIGKILL ? ", likely by the OOM killer" : "");
	} else if (h->exit_called == 1) {
		snprintf(buf, len, "_exit(%d)", WEXITSTATUS(status));
	} else if (h->exit_called == 2) {
		snprintf(buf, len, "exit status %d; its runtime's save at exit failed%s%.*s%s",
			 WEXITSTATUS(status), save_why(h) ? " (" : "", (int)sizeof h->why,
			 save_why(h) ? h->why : "", save_why(h) ? ")" : "");
	} else {
		snprintf(buf, len, "exit status %d without exit handlers (exit_group)",
			 WEXITSTATUS(status));
	}
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Write path from the keep at fd, whose header (read, checked) is h:
 * ended says how the program ended, NULL for a snapshot of a running
 * one.  1, or -1 with why. */
static int write_from(int kfd, const struct keep_head *h, const char *ended, const char *path,
		      char *why, size_t whylen)
{
	unsigned char buf[1 << 16];
	char tmp[4200];
	struct format_writer w;
	struct keeper_img img;
	struct salvage s;
	struct stat st;
	void *mem;
	int fd, rc;

	if (fstat(kfd, &st) < 0 || h->used < KEEP_HEAD || h->used > (uint64_t)st.st_size) {
		snprintf(why, whylen, "its keep is damaged (%s)", "the size it says is not its own");
		return -1;
	}
	mem = mmap(NULL, h->used, PROT_READ, MAP_PRIVATE | MAP_NORESERVE, kfd, 0);
	if (mem == MAP_FAILED) {
		snprintf(why, whylen, "cannot map its keep: %s", strerror(errno));
		return -1;
	}
	/* The header as read, not as mapped: it is what was checked. */
	img = (struct keeper_img){ .h = h, .mem = mem, .base = h->base, .len = h->used };
	/* Never through a link another user planted (newfile.h). */
	fd = newfile_open(path, tmp, sizeof tmp);
	if (fd < 0) {
		snprintf(why, whylen, "cannot write %s: %s", path, newfile_strerror(fd));
		munmap(mem, h->used);
		return -1;
	}
	s = (struct salvage){ .k = &img, .w = &w, .ended = ended, .end_ns = now_ns() };
	format_writer_init(&w, fd, buf, sizeof buf, h->kind);
	switch (h->kind) {
	case FORMAT_KIND_MPROF:
		rc = salvage_mprof(&s);
		break;
	case FORMAT_KIND_CPPROF:
		rc = salvage_cpprof(&s);
		break;
	case FORMAT_KIND_CFPROF:
		rc = salvage_cfprof(&s);
		break;
	default:
		snprintf(s.why, sizeof s.why, "its keep is of no kind known (%u)", h->kind);
		rc = -1;
	}
	munmap(mem, h->used);
	if (rc == 0 && (rc = format_writer_finish(&w)) < 0)
		snprintf(s.why, sizeof s.why, "cannot write %s: %s", tmp, strerror(-rc));
	if (close(fd) < 0 && rc == 0) {
		snprintf(s.why, sizeof s.why, "cannot write %s: %s", tmp, strerror(errno));
		rc = -1;
	}
	if (rc == 0 && rename(tmp, path) < 0) {
		snprintf(s.why, sizeof s.why, "cannot rename %s: %s", tmp, strerror(errno));
		rc = -1;
	}
	if (rc < 0) {
		unlink(tmp);
		snprintf(why, whylen, "%s", s.why);
		return -1;
	}
	return 1;
}

int keeper_salvage(const struct keeper *k, pid_t pid, int status, int oom, const char *path,
		   struct keep_head *h, char *why, size_t whylen)
{
	char ended[512];

	if (keeper_head(k, h) < 0 || h->state != KEEP_RECORDING || h->pid != (int32_t)pid)
		return 0;
	keeper_ended(h, status, oom, ended, sizeof ended);
	return write_from(k->fd, h, ended, path, why, whylen);
}

/* ---- forked children's keeps ---- */

struct kid {
	uint64_t start; /* its start time (/proc/PID/stat), 0 if not read */
	pid_t pid;   /* as the launcher sees it (its pidfd's, its /proc's) */
	pid_t nspid; /* as it sees itself (its keep's, its file's name) */
	int pidfd; /* -1: none (it was gone when its keep came) */
	int keep;  /* the memfd it sent */
};

struct kids {
	struct kid *k;
	size_t n, cap;
	const char *path, *what;
	size_t written; /* profiles written: the first KIDS_SAID said one by one */
	pid_t root;     /* the program's first process */
	size_t taken;   /* keeps received from its own children */
};
#define KIDS_SAID 3

/* Process pid's /proc/PID/stat into buf: its field 3 (the state, the
 * first after the name, which may hold ") " itself), or NULL. */
static const char *stat_read(pid_t pid, char *buf, size_t cap)
{
	char p[64], *f;
	int fd;
	ssize_t k;

	snprintf(p, sizeof p, "/proc/%d/stat", (int)pid);
	if ((fd = open(p, O_RDONLY | O_CLOEXEC)) < 0)
		return NULL;
	k = read(fd, buf, cap - 1);
	close(fd);
	if (k <= 0)
		return NULL;
	buf[k] = 0;
	return (f = strrchr(buf, ')')) && f[1] == ' ' && f[2] ? f + 2 : NULL;
}

/* From field 3 at f, field n's number; -1 if there is none. */
static long long stat_field(const char *f, int n)
{
	for (int field = 3; *f && field < n; f++)
		if (*f == ' ')
			field++;
	return *f >= '0' && *f <= '9' ? strtoll(f, NULL, 10) : -1;
}

/* How child pid ended, as its wait status, while it is a zombie (its
 * parent has not reaped it): /proc/PID/stat's exit_code, field 52; else
 * -1. */
static int zombie_status(pid_t pid)
{
	char buf[1024];
	const char *f = stat_read(pid, buf, sizeof buf);
	long long v = f && *f == 'Z' ? stat_field(f, 52) : -1;

	return v >= 0 && v <= 0xffff ? (int)v : -1;
}

/* When process pid started (/proc/PID/stat's starttime, field 22: the
 * same across its execs, another for a process given its pid later); 0
 * if not read. */
static uint64_t start_of(pid_t pid)
{
	char buf[1024];
	const char *f = stat_read(pid, buf, sizeof buf);
	long long v = f ? stat_field(f, 22) : -1;

	return v > 0 ? (uint64_t)v : 0;
}

/* Child c ended: its profile from its keep if its runtime did not save
 * it (the keep still recording, and its own). */
static void kid_ended(struct kids *ks, struct kid *c)
{
	struct keep_head h;
	char ended[512], path[4200], why[4400];
	int st = zombie_status(c->pid);

	/* Not a cfprof child that never ran an instrumented function: its
	 * runtime would write no file (a make's shells, each program a
	 * system() ran), and `cfprof merge FILE FILE.*` refuses another
	 * program's. */
	if (pread(c->keep, &h, sizeof h, 0) == (ssize_t)sizeof h && h.magic == KEEP_MAGIC &&
	    h.version == KEEP_VERSION && h.state == KEEP_RECORDING && h.pid == (int32_t)c->nspid &&
	    !salvage_cfprof_idle(c->keep, &h)) {
		h.why[sizeof h.why - 1] = 0;
		/* How, only while it is a zombie: its parent reaps it, not us. */
		if (st >= 0)
			keeper_ended(&h, st, 0, ended, sizeof ended);
		else if (h.exit_called == 2)
			/* Its exit handlers ran: it exited, and its save
			 * failed; only the status is its parent's. */
			snprintf(ended, sizeof ended,
				 "exited (its status, its parent knows: it reaped this forked child); "
				 "its runtime's save at exit failed%s%s%s",
				 save_why(&h) ? " (" : "", save_why(&h) ? h.why : "", save_why(&h) ? ")" : "");
		else
			snprintf(ended, sizeof ended,
				 "without its save; how, its parent knows (it reaped this forked child)");
		snprintf(path, sizeof path, "%s.%d", ks->path, (int)c->nspid);
		if (write_from(c->keep, &h, ended, path, why, sizeof why) > 0) {
			/* Said to a terminal only: a pipeline's sort killed by
			 * SIGPIPE, or a server's workers, are routine, and the
			 * program's stderr (a log) stays as bare. */
			if (ks->written++ < KIDS_SAID && isatty(STDERR_FILENO))
				errx_("%s: child %d ended without saving its profile%s%s%s; written to "
				      "%s from its keep", ks->what, (int)c->nspid, st >= 0 ? " (" : "",
				      st >= 0 ? ended : "", st >= 0 ? ")" : "", path);
		} else {
			char who[32];

			snprintf(who, sizeof who, "child %d", (int)c->nspid);
			keeper_say_unwritten(ks->what, who, path, why);
		}
	}
	if (c->pidfd >= 0)
		close(c->pidfd);
	close(c->keep);
	*c = ks->k[--ks->n];
}

void keeper_say_unwritten(const char *what, const char *who, const char *path, const char *why)
{
	/* The file, which the runtime could not write either (a device at
	 * -o, a full disk): its own words say it. */
	if (!strncmp(why, "cannot write ", 13))
		errx_("%s: %s wrote no profile: %s", what, who, why);
	else
		errx_("%s: %s wrote no profile to %s: its keep could not be read: %s", what, who,
		      path, why);
}

_Static_assert(sizeof(struct ucred) == KEEP_UCRED_SIZE, "keepfmt.h's room for the credentials");

/* Every keep waiting on the socket, taken. */
static void kids_take(struct kids *ks, int sock)
{
	for (;;) {
		struct keep_kid_msg m;
		struct msghdr *mh = keep_kid_msg(&m, 0, 0, -1);
		struct cmsghdr *c;
		ssize_t n = recvmsg(sock, mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
		int32_t pid = m.pid, ppid = m.ppid, seen = 0;
		uint64_t start;
		int fd = -1;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		for (c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c))
			if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
			    c->cmsg_len == CMSG_LEN(sizeof(int))) {
				memcpy(&fd, CMSG_DATA(c), sizeof fd);
			} else if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS &&
				   c->cmsg_len == CMSG_LEN(sizeof(struct ucred))) {
				struct ucred u;

				memcpy(&u, CMSG_DATA(c), sizeof u);
				seen = (int32_t)u.pid;
			}
		if (fd < 0)
			continue;
		if (n != (ssize_t)(2 * sizeof pid) || pid <= 0 || (mh->msg_flags & MSG_CTRUNC)) {
			close(fd);
			continue;
		}
		ks->taken += ppid == (int32_t)ks->root;
		util_grow(&ks->k, &ks->cap, ks->n + 1, sizeof *ks->k);
		/* Waited for by the pid the kernel gives the launcher: a child
		 * in a pid namespace of its own (unshare -fp) says 1, and the
		 * launcher waited for its own init, for ever. */
		if (seen <= 0)
			seen = pid;
		start = start_of(seen);
		/* A process's new image sends a keep of its own when it could
		 * not take the old one's (an exec by a raw system call, in a
		 * forked child): the old tables are not its profile.  Another
		 * process by that pid (the first ended, its pid used again: it
		 * started at another time) ends the first's. */
		for (size_t i = 0; i < ks->n; i++)
			if (ks->k[i].pid == seen) {
				if (ks->k[i].start && start && ks->k[i].start != start) {
					kid_ended(ks, &ks->k[i]);
					break;
				}
				if (ks->k[i].pidfd >= 0)
					close(ks->k[i].pidfd);
				close(ks->k[i].keep);
				ks->k[i] = ks->k[--ks->n];
				break;
			}
		ks->k[ks->n] = (struct kid){ .start = start, .pid = seen, .nspid = pid, .keep = fd,
					     .pidfd = (int)syscall(SYS_pidfd_open, seen, 0) };
		/* Gone already (no pidfd: it ended before we heard of it):
		 * ended once every keep queued is read, a keep its new image
		 * sent after this one among them. */
		if (ks->k[ks->n].pidfd >= 0 || errno == ESRCH)
			ks->n++;
		else /* no pidfd (out of descriptors): it cannot be waited for */
			close(fd);
	}
	for (size_t i = ks->n; i-- > 0;)
		if (ks->k[i].pidfd < 0)
			kid_ended(ks, &ks->k[i]);
}

/*
 * Children still running when the program ends: a daemon's, whose first
 * process ends as it detaches, and whose workers give up root (nginx's,
 * as nobody) and cannot write their own files.  Their keeps were lost
 * with the launcher, and nothing said.  A process of ours stays behind
 * for them, in the background (its own session, its standard streams
 * /dev/null: no pipe or terminal waits for it), takes the keeps of the
 * children they fork, writes the profile of each that ends without its
 * save, and goes when none is left.  The launcher returns at once.
 */
static int by_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return x < y ? -1 : x > y;
}

static void linger(struct kids *ks, struct keeper *k)
{
	struct pollfd *pf = NULL;
	size_t pcap = 0;
	pid_t bg = fork();
	int nul;

	if (bg != 0) { /* the launcher (or no fork): they are not ours */
		for (size_t i = 0; i < ks->n; i++) {
			close(ks->k[i].pidfd);
			close(ks->k[i].keep);
		}
		ks->n = 0;
		return;
	}
	setsid();
	if (chdir("/") < 0) /* no directory held (the paths are absolute) */
		errno = 0;
	if ((nul = open("/dev/null", O_RDWR)) >= 0) {
		dup2(nul, 0);
		dup2(nul, 1);
		dup2(nul, 2);
		if (nul > 2)
			close(nul);
	}
	/* Nothing else the launcher holds or inherited (a harness's pipe, a
	 * make jobserver's): whoever waits on it must not wait for us. */
	{
		int *keepfd = xcalloc(2 * ks->n + 1, sizeof *keepfd);
		size_t nk = 0;
		unsigned int from = 3;

		keepfd[nk++] = k->sock;
		for (size_t i = 0; i < ks->n; i++) {
			keepfd[nk++] = ks->k[i].pidfd;
			keepfd[nk++] = ks->k[i].keep;
		}
		qsort(keepfd, nk, sizeof *keepfd, by_int);
		for (size_t i = 0; i < nk; i++) {
			if (keepfd[i] < 0 || (unsigned int)keepfd[i] < from)
				continue;
			if ((unsigned int)keepfd[i] > from)
				close_range(from, (unsigned int)keepfd[i] - 1, 0);
			from = (unsigned int)keepfd[i] + 1;
		}
		close_range(from, ~0u, 0);
		free(keepfd);
	}
	while (ks->n) {
		util_grow(&pf, &pcap, ks->n + 1, sizeof *pf);
		pf[0] = (struct pollfd){ .fd = k->sock, .events = POLLIN };
		for (size_t i = 0; i < ks->n; i++)
			pf[1 + i] = (struct pollfd){ .fd = ks->k[i].pidfd, .events = POLLIN };
		if (poll(pf, ks->n + 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pf[0].revents)
			kids_take(ks, k->sock);
		for (size_t i = ks->n; i-- > 0;)
			if (i < ks->n && poll(&(struct pollfd){ .fd = ks->k[i].pidfd, .events = POLLIN }, 1,
					      0) > 0)
				kid_ended(ks, &ks->k[i]);
		/* The last one gone: a keep its own child sent as it ended
		 * may still be on its way. */
		if (!ks->n && poll(pf, 1, 200) > 0)
			kids_take(ks, k->sock);
	}
	_exit(0);
}

int keeper_wait(struct keeper *k, pid_t pid, int *status, const char *path, const char *what)
{
	struct kids ks = { .path = path, .what = what, .root = pid };
	struct pollfd *pf = NULL;
	size_t pcap = 0;
	int root = k->sock >= 0 ? (int)syscall(SYS_pidfd_open, pid, 0) : -1, rc = 0;

	/* Theirs is the program's now. */
	if (k->sock_theirs >= 0)
		close(k->sock_theirs);
	k->sock_theirs = -1;
	/* Two descriptors a child alive (its keep, its pidfd): as many as
	 * the hard limit allows, here only (the program has started). */
	if (k->sock >= 0) {
		struct rlimit r;

		if (getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur < r.rlim_max) {
			r.rlim_cur = r.rlim_max;
			setrlimit(RLIMIT_NOFILE, &r);
		}
	}
	while (root >= 0) {
		util_grow(&pf, &pcap, ks.n + 2, sizeof *pf);
		pf[0] = (struct pollfd){ .fd = k->sock, .events = POLLIN };
		pf[1] = (struct pollfd){ .fd = root, .events = POLLIN };
		for (size_t i = 0; i < ks.n; i++)
			pf[2 + i] = (struct pollfd){ .fd = ks.k[i].pidfd, .events = POLLIN };
		if (poll(pf, ks.n + 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		/* The keeps first: a process's new image may have sent one
		 * (image_keep, after an exec by the system call itself) and
		 * ended since, its old keep still recording: written as its
		 * profile, over the file the new image saved.  Then each
		 * child's end, looked at again if the list changed. */
		if (pf[0].revents) {
			kids_take(&ks, k->sock);
			for (size_t i = ks.n; i-- > 0;)
				if (i < ks.n && poll(&(struct pollfd){ .fd = ks.k[i].pidfd, .events = POLLIN },
						     1, 0) > 0)
					kid_ended(&ks, &ks.k[i]);
		} else {
			for (size_t i = ks.n; i-- > 0;)
				if (pf[2 + i].revents)
					kid_ended(&ks, &ks.k[i]);
		}
		if (pf[1].revents)
			break;
	}
	if (root >= 0)
		close(root);
	while (waitpid(pid, status, 0) < 0)
		if (errno != EINTR) {
			rc = -1;
			break;
		}
	/* Keeps sent as the program ended; children gone meanwhile.  A
	 * child forked just before the program ended may still be sending
	 * its keep: as many as the program's keep counts, waited for a
	 * second at most (a child killed before it sent never does). */
	if (k->sock >= 0) {
		struct keep_head h;
		int waited = 0;

		kids_take(&ks, k->sock);
		while (k->fd >= 0 && waited < 1000 && pread(k->fd, &h, sizeof h, 0) == (ssize_t)sizeof h &&
		       h.magic == KEEP_MAGIC && h.version == KEEP_VERSION && ks.taken < h.forked) {
			struct pollfd p = { .fd = k->sock, .events = POLLIN };

			if (poll(&p, 1, 10) > 0)
				kids_take(&ks, k->sock);
			waited += 10;
		}
		for (size_t i = ks.n; i-- > 0;) {
			struct pollfd p = { .fd = ks.k[i].pidfd, .events = POLLIN };

			if (poll(&p, 1, 0) > 0)
				kid_ended(&ks, &ks.k[i]);
		}
		/* Children still running (a daemon's: its first process ends
		 * as it detaches) are a keeper's of their own. */
		if (ks.n)
			linger(&ks, k);
	}
	if (ks.written > KIDS_SAID && isatty(STDERR_FILENO))
		errx_("%s: %zu more children ended without saving their profiles; written to %s.PID "
		      "from their keeps", what, ks.written - KIDS_SAID, path);
	free(ks.k);
	free(pf);
	return rc;
}

/* The parent of process pid, from /proc/PID/stat; -1 if none is read. */
static pid_t parent_of(pid_t pid)
{
	char path[64], buf[512], *rp;
	int fd, ppid;
	ssize_t n;

	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	/* pid (comm) state ppid: comm may hold ") " itself. */
	if (!(rp = strrchr(buf, ')')) || sscanf(rp + 1, " %*c %d", &ppid) != 1)
		return -1;
	return ppid;
}

static int snapshot_keep_of(pid_t pid, struct keep_head *h, char *why, size_t whylen);

/* Process pid's keep, its header in *h, if it holds its own tables now:
 * the descriptor, or -1 with a reason in why.  The launcher's pid (mprof
 * run's, which holds its program's keep) is its program's: the pid ps
 * shows first, "mprof run ./server". */
static int snapshot_keep(pid_t pid, struct keep_head *h, char *why, size_t whylen)
{
	int fd;

	memset(h, 0, sizeof *h);
	fd = snapshot_keep_of(pid, h, why, whylen);

	if (fd >= 0 || h->magic != KEEP_MAGIC || h->pid == (int32_t)pid || h->pid <= 0 ||
	    parent_of((pid_t)h->pid) != pid)
		return fd;
	return snapshot_keep_of((pid_t)h->pid, h, why, whylen);
}

static int snapshot_keep_of(pid_t pid, struct keep_head *h, char *why, size_t whylen)
{
	char dir[64], link[PATH_MAX], name[400];
	struct dirent *d;
	DIR *fds;
	int fd = -1;
	ssize_t n;

	/* The memfd, among the process's descriptors (the launcher gave it
	 * one, or its runtime made its own: MPROF_SNAPSHOT=1). */
	snprintf(dir, sizeof dir, "/proc/%d/fd", (int)pid);
	if (!(fds = opendir(dir))) {
		if (errno == ENOENT)
			snprintf(why, whylen, "no process %d", (int)pid);
		else
			snprintf(why, whylen, "%s: %s", dir, strerror(errno));
		return -1;
	}
	while (fd < 0 && (d = readdir(fds))) {
		snprintf(name, sizeof name, "%s/%s", dir, d->d_name);
		n = readlink(name, link, sizeof link - 1);
		if (n <= 0)
			continue;
		link[n] = 0;
		if (!strncmp(link, "/memfd:profile-keep", 19))
			fd = open(name, O_RDONLY | O_CLOEXEC);
	}
	closedir(fds);
	if (fd < 0) {
		snprintf(why, whylen,
			 "process %d has no keep (run it with mprof run, or with MPROF_SNAPSHOT=1)",
			 (int)pid);
		return -1;
	}
	memset(h, 0, sizeof *h);
	if (pread(fd, h, sizeof *h, 0) != (ssize_t)sizeof *h || h->magic != KEEP_MAGIC ||
	    h->version != KEEP_VERSION) {
		close(fd);
		snprintf(why, whylen, "process %d's keep is not one this mprof reads", (int)pid);
		return -1;
	}
	h->why[sizeof h->why - 1] = 0;
	h->out[sizeof h->out - 1] = 0;
	if (h->pid != (int32_t)pid || (h->state != KEEP_RECORDING && h->state != KEEP_SAVED)) {
		close(fd);
		snprintf(why, whylen, "process %d's keep is not its own tables now (%s)", (int)pid,
			 h->state == KEEP_VOID ? h->why : h->pid != (int32_t)pid ? "another process's" : "not recording");
		return -1;
	}
	return fd;
}

int keeper_snapshot_out(pid_t pid, char *buf, size_t len)
{
	struct keep_head h;
	char why[256];
	int fd = snapshot_keep(pid, &h, why, sizeof why);

	if (fd < 0)
		return -1;
	close(fd);
	if (h.out[0] != '/' || strlen(h.out) >= len)
		return -1;
	strcpy(buf, h.out);
	return 0;
}

int keeper_snapshot(pid_t pid, const char *path, char *why, size_t whylen)
{
	struct keep_head h;
	int fd = snapshot_keep(pid, &h, why, whylen), rc;

	if (fd < 0)
		return -1;
	rc = write_from(fd, &h, NULL, path, why, whylen);
	close(fd);
	return rc;
}
