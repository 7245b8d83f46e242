/*
 * keep.c - owns the runtime's side of the keep (keep_*): taking the
 * launcher's memfd, handing out its pages, the header's INFO and COUNTERS
 * entries, the states the launcher reads, and making the pages private in
 * a forked child.  What the keep is for and its layout: lib/format/keepfmt.h.
 *
 * One shared mapping of the whole memfd, made once: the file is sized at
 * once (sparse: a page takes memory only when written), so the memory
 * handed out is a bump of `used`, with no descriptor needed after, and
 * the launcher translates the program's addresses by one subtraction.
 * Pages given back are punched out of the file (MADV_REMOVE) and their
 * addresses never reused.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "arena.h"
#include "fds.h"
#include "keep.h"
#include "keepfmt.h"
#include "outfile.h"
#include "sandbox.h"

struct keep_head *keep_h;
static uint64_t keep_size;
static int keep_fd = -1;
static uint64_t keep_dev, keep_ino; /* keep_fd's file, while it is ours */
static int keep_tried; /* this image asked once */
/* Why the keep was void before it was taken (keep_void): cfprof's first
 * hook takes it after a collector that did not start, and counted calls
 * the launcher wrote as a file of no counters, which no tool read. */
static const char *keep_void_early;
/* The launcher's socket, where a forked child sends the keep it makes of
 * its own (keep_fork_child), or -1; its inode, checked before each use. */
static int keep_sock = -1;
static uint64_t keep_sock_ino;
static int keep_is_child; /* this keep was made at a fork (keep_exiting) */
/* A launcher writes the profile from this keep if the process ends with
 * it recording: the launcher's, or a forked child's sent to it. */
static int keep_launched;
/* The launcher's keep's descriptor number (its environment's), or -1:
 * where a forked child's keep goes for a program it execs. */
static int keep_env_fd = -1;
static int keep_lk;    /* keep_info, keep_counter: rare, never in a signal */
static char *keep_str, *keep_str_end;

extern char **environ;

static uint64_t parse_u64(const char *s, const char **end)
{
	uint64_t v = 0;

	while (*s >= '0' && *s <= '9' && v < UINT64_MAX / 10 - 9)
		v = v * 10 + (uint64_t)(*s++ - '0');
	*end = s;
	return v;
}

int keep_env(const char *name, char *buf, size_t cap)
{
	static char env[1 << 16]; /* only before environ: ld.so's first malloc */
	size_t nlen = strlen(name), n = 0;
	const char *v = NULL;
	ssize_t k;
	int fd;

	if (environ) {
		for (char **e = environ; *e; e++)
			if (!strncmp(*e, name, nlen) && (*e)[nlen] == '=') {
				v = *e + nlen + 1;
				break;
			}
	} else if ((fd = open("/proc/self/environ", O_RDONLY | O_CLOEXEC)) >= 0) {
		while (n < sizeof env - 1 && ((k = read(fd, env + n, sizeof env - 1 - n)) > 0 ||
					      (k < 0 && errno == EINTR)))
			if (k > 0)
				n += (size_t)k;
		close(fd);
		env[n] = 0;
		for (size_t i = 0; i < n; i += strlen(env + i) + 1)
			if (!strncmp(env + i, name, nlen) && env[i + nlen] == '=') {
				v = env + i + nlen + 1;
				break;
			}
	}
	if (!v || strlen(v) >= cap)
		return -1;
	strcpy(buf, v);
	return 0;
}

/* Say why in a header the program could not map (state KEEP_VOID). */
static void void_at(int fd, const char *why)
{
	struct keep_head h;

	if (pread(fd, &h, sizeof h, 0) != (ssize_t)sizeof h)
		return;
	h.state = KEEP_VOID;
	h.pid = (int32_t)getpid();
	strncpy(h.why, why, sizeof h.why - 1);
	h.why[sizeof h.why - 1] = 0;
	if (pwrite(fd, &h, sizeof h, 0) < 0)
		return;
}

/*
 * The largest mapping the file can have, and the limit that says so:
 * RLIMIT_FSIZE caps what ftruncate may make (beyond it the kernel sends
 * SIGXFSZ: never), and RLIMIT_AS counts the mapping, sparse or not, in
 * the program's address space: the keep takes a quarter of it at most
 * (the largest that fit took 4 GiB of an 8 GiB limit, and the program's
 * mallocs failed at half of what they reach without it).
 */
static uint64_t size_cap(const char **which)
{
	struct rlimit r;
	uint64_t cap = UINT64_MAX;

	*which = "RLIMIT_FSIZE is below 256 MiB";
	if (getrlimit(RLIMIT_FSIZE, &r) == 0 && r.rlim_cur != RLIM_INFINITY)
		cap = (uint64_t)r.rlim_cur & ~(uint64_t)4095;
	if (getrlimit(RLIMIT_AS, &r) == 0 && r.rlim_cur != RLIM_INFINITY &&
	    (uint64_t)r.rlim_cur / 4 < cap) {
		cap = (uint64_t)r.rlim_cur / 4;
		*which = "RLIMIT_AS is below 1 GiB";
	}
	return cap;
}

/* Map the keep at fd (dev, ino; old: its header as it was) and take it:
 * the launcher's, or one of our own. */
static void attach_fd(int fd, uint64_t dev, uint64_t ino, const struct keep_head *old_h,
		      uint32_t kind, uint64_t layout)
{
	const char *small;
	uint64_t cap = size_cap(&small), sz;
	struct keep_head old = *old_h;
	void *m = MAP_FAILED;
	struct timespec ts;

	/* A program image the root exec'd takes it over: the old image's
	 * tables went with it. */
	for (sz = 64ull << 30; sz >= 256ull << 20; sz /= 4) {
		if (sz > cap)
			continue;
		if (ftruncate(fd, 0) < 0 || ftruncate(fd, (off_t)sz) < 0)
			break;
		m = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, 0);
		if (m != MAP_FAILED)
			break;
	}
	if (m == MAP_FAILED) {
		if (ftruncate(fd, 0) == 0 && pwrite(fd, &old, sizeof old, 0) == sizeof old)
			void_at(fd, cap < (256ull << 20) ? small : "the keep could not be mapped");
		fds_close(fd);
		return;
	}
	/* All but the header out of reach until keep_map hands it out:
	 * mlockall(MCL_CURRENT) populates every accessible page of a
	 * mapping, and 64 GiB of a shared one is the memfd's memory (a
	 * program that locked its memory was OOM-killed); it skips pages
	 * with no access. */
	mprotect((char *)m + KEEP_HEAD, sz - KEEP_HEAD, PROT_NONE);
	keep_h = m;
	keep_size = sz;
	keep_fd = fd; /* open, not close-on-exec: an exec'd image takes it */
	keep_dev = dev;
	keep_ino = ino;
	clock_gettime(CLOCK_REALTIME, &ts);
	keep_h->magic = KEEP_MAGIC;
	keep_h->version = KEEP_VERSION;
	keep_h->kind = kind;
	keep_h->layout = layout;
	keep_h->pid = (int32_t)getpid();
	keep_h->base = (uint64_t)(uintptr_t)m;
	keep_h->size = sz;
	keep_h->used = KEEP_HEAD;
	keep_h->start_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	if (old.pid == keep_h->pid) { /* an image of the same process exec'd */
		keep_h->exec_saves = old.exec_saves;
		memcpy(keep_h->exec, old.exec, sizeof keep_h->exec);
	}
	__atomic_store_n(&keep_h->state, KEEP_RECORDING, __ATOMIC_RELEASE);
}

/*
 * Whether descriptor fd is a forked child's keep that this process's
 * image before exec'd away from (keep_exec): a memfd of ours by its name,
 * its header ours, by pid, and EXECED.  Its header in *h, its stat in *st.
 */
static int child_exec_keep(int fd, struct keep_head *h, struct stat *st)
{
	char p[64], name[64];
	ssize_t n;

	snprintf(p, sizeof p, "/proc/self/fd/%d", fd);
	n = readlink(p, name, sizeof name - 1);
	if (n < 0)
		return 0;
	name[n] = 0;
	return !strncmp(name, "/memfd:profile-keep", 19) && fstat(fd, st) == 0 &&
	       pread(fd, h, sizeof *h, 0) == (ssize_t)sizeof *h && h->magic == KEEP_MAGIC &&
	       h->version == KEEP_VERSION && h->state == KEEP_EXECED &&
	       h->pid == (int32_t)getpid();
}

static int sock_ours(void);
static int child_memfd(void);
static void out_put(struct keep_head *h);

/*
 * An image no keep was left for, under a launcher that takes children's
 * keeps: a keep of its own, sent as a forked child's is (child_keep), so
 * that a death by a signal still leaves its FILE.PID.  Such an image was
 * started by an exec that passes no interposed function (execs.c): a
 * vfork child's (dash runs every command so: `sh -c './prog; echo'`
 * whose prog was killed left nothing, and nothing was said), glibc's
 * posix_spawn and system(), a raw exec in a forked child.  The header
 * names no parent (ppid 0): the launcher does not count it as one of the
 * program's forks (keeper.c's wait for a keep still on its way).
 */
/*
 * Whether this image may make system calls of its own beyond those every
 * image of ours makes: no seccomp filter (/proc/self/status's Seccomp is
 * 0).  A filter outlives exec, and its runtime never saw it go in
 * (sandbox.c): one that kills at memfd_create, a common rule, killed every
 * program the sandboxed process ran.  Not known (no /proc): no.
 */
static int unfiltered(void)
{
	char b[2048], *p;
	ssize_t n = 0, k;
	int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	while (n < (ssize_t)sizeof b - 1 &&
	       ((k = read(fd, b + n, sizeof b - 1 - (size_t)n)) > 0 || (k < 0 && errno == EINTR)))
		if (k > 0)
			n += k;
	close(fd);
	b[n] = 0;
	p = strstr(b, "\nSeccomp:");
	if (!p)
		return 0;
	for (p += 9; *p == ' ' || *p == '\t'; p++)
		;
	return p[0] == '0' && (p[1] == '\n' || !p[1]);
}

static void image_keep(uint32_t kind, uint64_t layout)
{
	struct keep_head h = { .magic = KEEP_MAGIC, .version = KEEP_VERSION, .state = KEEP_WAITING };
	struct keep_kid_msg m;
	struct stat st;
	int fd;

	if (sandbox_entered() || !sock_ours() || !unfiltered() || (fd = child_memfd()) < 0)
		return;
	if (pwrite(fd, &h, sizeof h, 0) != (ssize_t)sizeof h || fstat(fd, &st) < 0) {
		fds_close(fd);
		return;
	}
	keep_is_child = 1;
	attach_fd(fd, (uint64_t)st.st_dev, (uint64_t)st.st_ino, &h, kind, layout);
	if (!keep_h) {
		keep_is_child = 0;
		return;
	}
	out_put(keep_h);
	/* Not sent (the launcher is gone): the runtime saves at exit. */
	keep_launched = sendmsg(keep_sock, keep_kid_msg(&m, keep_h->pid, 0, fd),
				MSG_DONTWAIT | MSG_NOSIGNAL) >= 0;
}

void keep_attach(const char *keep_env_name, const char *root_env, uint32_t kind, uint64_t layout)
{
	char v[96], r[32];
	const char *p;
	uint64_t fd, dev, ino;
	struct keep_head old;
	struct stat st;
	int e = errno;

	if (keep_tried)
		return;
	keep_tried = 1;
	if (keep_env(keep_env_name, v, sizeof v) < 0)
		goto out;
	fd = parse_u64(v, &p);
	if (*p != ':' || fd > INT32_MAX)
		goto out;
	dev = parse_u64(p + 1, &p);
	if (*p != ':')
		goto out;
	ino = parse_u64(p + 1, &p);
	/* Then, from a launcher that takes forked children's keeps, its
	 * socket's number and inode. */
	if (*p == ':') {
		uint64_t sfd = parse_u64(p + 1, &p), sino;
		struct stat ss;

		if (*p != ':' || sfd > INT32_MAX)
			goto out;
		sino = parse_u64(p + 1, &p);
		if (fstat((int)sfd, &ss) == 0 && S_ISSOCK(ss.st_mode) && (uint64_t)ss.st_ino == sino) {
			keep_sock = (int)sfd;
			keep_sock_ino = sino;
			fds_own(keep_sock);
		}
	}
	if (*p)
		goto out;
	keep_env_fd = (int)fd;
	/* A forked child's own keep, put there by the image before (keep_exec):
	 * this image takes it over, as a child's. */
	if (child_exec_keep((int)fd, &old, &st)) {
		fds_own((int)fd);
		keep_is_child = 1;
		attach_fd((int)fd, (uint64_t)st.st_dev, (uint64_t)st.st_ino, &old, kind, layout);
		keep_launched = 1;
		goto out;
	}
	/* Never touch a descriptor that is not the launcher's memfd. */
	if (fstat((int)fd, &st) < 0 || (uint64_t)st.st_dev != dev || (uint64_t)st.st_ino != ino)
		goto out;
	if (keep_env(root_env, r, sizeof r) < 0 || parse_u64(r, &p) != (uint64_t)getpid() || *p ||
	    pread((int)fd, &old, sizeof old, 0) != (ssize_t)sizeof old || old.magic != KEEP_MAGIC ||
	    old.version != KEEP_VERSION ||
	    (old.state != KEEP_WAITING && old.pid != (int32_t)getpid())) {
		/* Inherited by a process the launcher did not start: not ours
		 * to keep open. */
		close((int)fd);
		goto out;
	}
	fds_own((int)fd);
	attach_fd((int)fd, dev, ino, &old, kind, layout);
	keep_launched = 1;
out:
	if (!keep_h && keep_sock >= 0)
		image_keep(kind, layout);
	if (keep_void_early)
		keep_void(keep_void_early);
	errno = e;
}

int keep_own(uint32_t kind, uint64_t layout)
{
	struct keep_head h = { .magic = KEEP_MAGIC, .version = KEEP_VERSION, .state = KEEP_WAITING };
	struct stat st;
	int fd, e = errno;

	if (keep_h)
		return 0;
	fd = memfd_create("profile-keep", MFD_CLOEXEC);
	/* Up high, so the program's own descriptors are where they would be
	 * without us (it may count on 3 being its first). */
	if (fd >= 0) {
		struct rlimit r;
		int hi = getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur < 1024 ? (int)r.rlim_cur - 8 : 1000;
		fd = hi > 16 ? fds_up(fd, hi) : (fds_close(fd), -1);
	}
	if (fd < 0 || pwrite(fd, &h, sizeof h, 0) != (ssize_t)sizeof h || fstat(fd, &st) < 0) {
		if (fd >= 0)
			fds_close(fd);
		errno = e;
		return -1;
	}
	attach_fd(fd, (uint64_t)st.st_dev, (uint64_t)st.st_ino, &h, kind, layout);
	errno = e;
	return keep_h ? 0 : -1;
}

void *keep_map(size_t n)
{
	struct keep_head *h = __atomic_load_n(&keep_h, __ATOMIC_ACQUIRE);
	uint64_t off;

	if (!h || __atomic_load_n(&h->state, __ATOMIC_RELAXED) == KEEP_VOID)
		return arena_map(n);
	n = (n + 4095) & ~(size_t)4095;
	off = __atomic_fetch_add(&h->used, n, __ATOMIC_RELAXED);
	if (off + n > keep_size || off + n < off) {
		keep_void("the keep is full");
		return arena_map(n);
	}
	/* Out of reach until now (keep_attach); a shared mapping is not
	 * populated by mprotect, even under mlockall(MCL_FUTURE). */
	if (mprotect((char *)h + off, n, PROT_READ | PROT_WRITE) < 0) {
		keep_void("the keep could not be made accessible");
		return arena_map(n);
	}
	return (char *)h + off;
}

void *keep_reserve(size_t n)
{
	void *p = keep_h ? keep_map(n) : NULL;

	if (p && keep_has(p))
		return p;
	if (p)
		arena_unmap(p, n); /* the keep is full: arena_map's */
	p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1,
		 0);
	return p == MAP_FAILED ? NULL : p;
}

int keep_has(const void *p)
{
	const char *h = (const char *)__atomic_load_n(&keep_h, __ATOMIC_ACQUIRE);

	return h && (const char *)p >= h && (const char *)p < h + keep_size;
}

void keep_unmap(void *p, size_t n)
{
	if (!p)
		return;
	if (keep_has(p)) {
		/* Out of the file, so the memory is free; the range stays
		 * mapped (zero) and is never handed out again. */
		madvise(p, (n + 4095) & ~(size_t)4095, MADV_REMOVE);
		return;
	}
	arena_unmap(p, n);
}

void keep_set_root(const void *root)
{
	if (keep_h)
		__atomic_store_n(&keep_h->root, (uint64_t)(uintptr_t)root, __ATOMIC_RELEASE);
}

/* keep_out's base: a forked child's keep names base.PID. */
static char keep_out_base[sizeof ((struct keep_head *)0)->out];

/* The header's out: base, or base.PID in a child's keep. */
static void out_put(struct keep_head *h)
{
	char pid[24];
	size_t n = strlen(keep_out_base);

	outfile_u64(pid, (uint64_t)getpid());
	if (!keep_out_base[0] || n + (keep_is_child ? strlen(pid) + 1 : 0) >= sizeof h->out) {
		h->out[0] = 0;
		return;
	}
	memcpy(h->out, keep_out_base, n + 1);
	if (keep_is_child) {
		h->out[n] = '.';
		memcpy(h->out + n + 1, pid, strlen(pid) + 1);
	}
}

void keep_out(const char *base)
{
	if (strlen(base) >= sizeof keep_out_base)
		return;
	memcpy(keep_out_base, base, strlen(base) + 1);
	if (keep_h && keep_h->pid == (int32_t)getpid())
		out_put(keep_h);
}

static void lk_take(void)
{
	while (__atomic_exchange_n(&keep_lk, 1, __ATOMIC_ACQUIRE))
		sched_yield();
}

static void lk_give(void)
{
	__atomic_store_n(&keep_lk, 0, __ATOMIC_RELEASE);
}

/* s copied into the keep (under keep_lk), as the program's address; 0
 * when there is no room. */
static uint64_t keep_strdup(const char *s)
{
	size_t n = strlen(s) + 1, r = (n + KEEP_ALIGN - 1) & ~(size_t)(KEEP_ALIGN - 1);
	char *d;

	if ((size_t)(keep_str_end - keep_str) < r) {
		size_t chunk = r > 65536 ? r : 65536;
		char *c = keep_map(chunk);

		if (!c || !keep_has(c))
			return 0;
		keep_str = c;
		keep_str_end = c + ((chunk + 4095) & ~(size_t)4095);
	}
	d = keep_str;
	keep_str += r;
	memcpy(d, s, n);
	return (uint64_t)(uintptr_t)d;
}

/* Append (a, b) to one of the header's lists. */
static void add_kv(struct keep_kv *list, uint32_t *n, uint32_t max, const char *a, const char *b)
{
	uint64_t ka, kb;

	if (!keep_h)
		return;
	lk_take();
	if (*n < max && (ka = keep_strdup(a)) && (kb = keep_strdup(b))) {
		list[*n].key = ka;
		list[*n].val = kb;
		__atomic_store_n(n, *n + 1, __ATOMIC_RELEASE);
	} else {
		keep_h->info_lost++;
	}
	lk_give();
}

void keep_info(const char *key, const char *val)
{
	if (keep_h)
		add_kv(keep_h->info, &keep_h->ninfo, KEEP_MAX_INFO, key, val);
}

void keep_counter(const char *name, const char *unit)
{
	if (keep_h)
		add_kv(keep_h->counters, &keep_h->ncounters, KEEP_MAX_COUNTERS, name, unit);
}

void keep_wrote(int fd)
{
	struct stat st;

	if (!keep_h || fstat(fd, &st) < 0)
		return;
	keep_h->file_dev = (uint64_t)st.st_dev;
	keep_h->file_ino = (uint64_t)st.st_ino;
}

void keep_saved(int final)
{
	if (!keep_h)
		return;
	__atomic_add_fetch(&keep_h->saves, 1, __ATOMIC_RELEASE);
	if (final && __atomic_load_n(&keep_h->state, __ATOMIC_RELAXED) == KEEP_RECORDING)
		__atomic_store_n(&keep_h->state, KEEP_SAVED, __ATOMIC_RELEASE);
}

void keep_recording(void)
{
	if (keep_h && __atomic_load_n(&keep_h->state, __ATOMIC_RELAXED) == KEEP_SAVED)
		__atomic_store_n(&keep_h->state, KEEP_RECORDING, __ATOMIC_RELEASE);
}

void keep_exit_handlers(void)
{
	if (keep_h && !keep_h->exit_called)
		__atomic_store_n(&keep_h->exit_called, 2, __ATOMIC_RELEASE);
}

int keep_exiting(int status)
{
	if (!keep_h)
		return 0;
	keep_h->exit_status = status;
	__atomic_store_n(&keep_h->exit_called, 1, __ATOMIC_RELEASE);
	/* A forked child's keep is salvaged only after a death by a signal:
	 * its launcher does not see how it ends.  Its runtime saves. */
	if (keep_is_child)
		return 0;
	/* A void keep (full, or the tables never all in it) is not
	 * written by the launcher: the runtime must save. */
	return __atomic_load_n(&keep_h->state, __ATOMIC_ACQUIRE) == KEEP_RECORDING;
}

static int fd_ours(void);

/* What the header's exec said before the exec under way (this image's
 * program, if an exec made it): back if the exec fails. */
static char exec_before[sizeof ((struct keep_head *)0)->exec];

void keep_exec(const char *path)
{
	struct keep_head *h = keep_h;
	uint32_t st = KEEP_RECORDING;

	/* Not a vfork child's exec: it shares our memory, not our image. */
	if (!h || h->pid != (int32_t)getpid())
		return;
	memcpy(exec_before, h->exec, sizeof exec_before);
	strncpy(h->exec, path ? path : "?", sizeof h->exec - 1);
	if (!__atomic_compare_exchange_n(&h->state, &st, KEEP_EXECED, 0, __ATOMIC_ACQ_REL,
					 __ATOMIC_RELAXED)) {
		memcpy(h->exec, exec_before, sizeof h->exec);
		return;
	}
	/* A forked child's keep is close-on-exec, at a number of its own:
	 * the new image finds it where the environment says the launcher's
	 * is (the launcher's is its parent's; the child has its own).  The
	 * image sort a shell's child exec'd, killed by SIGPIPE, left no
	 * profile and nothing said. */
	if (keep_is_child && keep_env_fd >= 0 && keep_fd >= 0 && keep_fd != keep_env_fd &&
	    fd_ours() && dup2(keep_fd, keep_env_fd) == keep_env_fd)
		fds_own(keep_env_fd);
}

int keep_exec_number(void)
{
	struct keep_head *h = keep_h;

	if (!h || h->pid != (int32_t)getpid())
		return 0;
	return (int)__atomic_add_fetch(&h->exec_saves, 1, __ATOMIC_RELAXED);
}

void keep_exec_number_back(void)
{
	struct keep_head *h = keep_h;

	if (h && h->pid == (int32_t)getpid() && h->exec_saves)
		__atomic_sub_fetch(&h->exec_saves, 1, __ATOMIC_RELAXED);
}

void keep_exec_failed(void)
{
	struct keep_head *h = keep_h;
	uint32_t st = KEEP_EXECED;

	if (h && h->pid == (int32_t)getpid() &&
	    __atomic_compare_exchange_n(&h->state, &st, KEEP_RECORDING, 0, __ATOMIC_ACQ_REL,
					__ATOMIC_RELAXED))
		memcpy(h->exec, exec_before, sizeof h->exec);
}

void keep_void(const char *why)
{
	struct keep_head *h = keep_h;
	uint32_t st = KEEP_RECORDING;

	if (!h && !keep_tried) {
		keep_void_early = why;
		return;
	}
	if (!h || !__atomic_compare_exchange_n(&h->state, &st, KEEP_VOID, 0, __ATOMIC_ACQ_REL,
					      __ATOMIC_RELAXED))
		return;
	strncpy(h->why, why, sizeof h->why - 1);
}

void keep_save_failed(const char *path, int err)
{
	struct keep_head *h = keep_h;
	const char *e = strerror(err);
	size_t n = 0, room = sizeof h->why - 1;

	if (!h || __atomic_load_n(&h->state, __ATOMIC_RELAXED) != KEEP_RECORDING)
		return;
	/* "PATH: ERROR", the path's end where both do not fit. */
	if (strlen(path) + 2 + strlen(e) > room) {
		size_t skip = strlen(path) + 2 + strlen(e) + 3 - room;

		if (skip < strlen(path)) {
			path += skip;
			memcpy(h->why, "...", 3);
			n = 3;
		}
	}
	for (; *path && n < room; path++)
		h->why[n++] = *path;
	for (const char *s = ": "; *s && n < room; s++)
		h->why[n++] = *s;
	for (; *e && n < room; e++)
		h->why[n++] = *e;
	h->why[n] = 0;
}

/* Whether keep_fd is still the keep's memfd: the program may have closed
 * it (a daemon's closefrom) and opened something else as that number. */
static int fd_ours(void)
{
	struct stat st;

	return keep_fd >= 0 && fstat(keep_fd, &st) == 0 && (uint64_t)st.st_dev == keep_dev &&
	       (uint64_t)st.st_ino == keep_ino;
}

/* n bytes at offset off of the keep's file into dst: 0, or -1. */
static int pread_all(char *dst, size_t n, off_t off)
{
	ssize_t k;

	while (n) {
		k = pread(keep_fd, dst, n, off);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		dst += k;
		n -= (size_t)k;
		off += k;
	}
	return 0;
}

/*
 * Copy to dst (zero pages) the pages of [src, src + n), at offset off of
 * the keep's file, that hold anything: a page never written reads as
 * zero anyway (cpprof reserves 512 MiB of entries and writes a few).  The
 * file's data (SEEK_DATA and SEEK_HOLE, which count a page swapped out as
 * data), read from the file: part of the range may not be accessible in
 * this mapping (keep_map makes it so, then uses it).  Without the
 * descriptor, the resident pages (mincore, which misses a swapped-out
 * one), from the mapping.  0, or -1 when nothing could say which pages.
 */
static int copy_data(char *dst, const char *src, uint64_t off, size_t n)
{
	size_t pages = n / 4096, vlen = (pages + 4095) & ~(size_t)4095;
	off_t at = (off_t)off, end = (off_t)(off + n), d, hole;
	unsigned char *vec;
	int rc = 0;

	if (fd_ours()) {
		while (at < end) {
			d = lseek(keep_fd, at, SEEK_DATA);
			if (d < 0 && errno == ENXIO)
				return 0; /* no data from at on */
			if (d < 0 || (hole = lseek(keep_fd, d, SEEK_HOLE)) < 0)
				goto resident;
			if (d >= end)
				return 0;
			if (hole > end)
				hole = end;
			if (pread_all(dst + (d - (off_t)off), (size_t)(hole - d), d) < 0)
				goto resident;
			at = hole;
		}
		return 0;
	}
resident:
	vec = arena_map(vlen);
	if (!vec || mincore((void *)src, n, vec) < 0) {
		rc = -1;
	} else {
		for (size_t i = 0; i < pages; i++)
			if (vec[i] & 1)
				memcpy(dst + i * 4096, src + i * 4096, 4096);
	}
	arena_unmap(vec, vlen);
	return rc;
}

/* The keep's pages in use, rounded to whole pages. */
static size_t used_now(const struct keep_head *h)
{
	uint64_t u = (__atomic_load_n(&h->used, __ATOMIC_ACQUIRE) + 4095) & ~(uint64_t)4095;

	return (size_t)(u < keep_size ? u : keep_size);
}

/*
 * fork: the child must get the keep's pages as they were at the fork, as
 * its own.  Copied after the fork, in the child, they would hold what the
 * parent wrote meanwhile (cfprof's current node, a thread's counts), so
 * they are copied before it, in the parent, into private memory the child
 * inherits; the child moves that copy over the keep's range.
 *
 * The collectors' locks do not stop every taker of keep memory while the
 * copy is made (a thread's first hook makes its record, a thread's new
 * counter chunk, the module list), and the child's statics may point at
 * what they took after the copy's length was read.  The child copies
 * those pages itself, from the mapping it still shares, and puts zero
 * pages over the rest of the range: a pointer the parent stored since the
 * fork leads to an empty record, never to an unmapped page.
 */
/* Whether keep_sock is still the launcher's socket. */
static int sock_ours(void)
{
	struct stat st;

	return keep_sock >= 0 && fstat(keep_sock, &st) == 0 && S_ISSOCK(st.st_mode) &&
	       (uint64_t)st.st_ino == keep_sock_ino;
}

/* All n bytes of p at offset off of fd: 0, or -1. */
static int pwrite_all(int fd, const char *p, size_t n, off_t off)
{
	while (n) {
		ssize_t k = pwrite(fd, p, n, off);

		if (k <= 0) {
			if (k < 0 && errno == EINTR)
				continue;
			return -1;
		}
		p += k;
		n -= (size_t)k;
		off += k;
	}
	return 0;
}

/* A memfd of the keep's size for a forked child's own keep, up high as
 * keep_own's (the program's descriptors stay where they would be), or -1. */
static int child_memfd(void)
{
	struct rlimit r;
	int fd = memfd_create("profile-keep", MFD_CLOEXEC), hi, up;

	if (fd < 0)
		return -1;
	hi = getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur < 1024 ? (int)r.rlim_cur - 8 : 1000;
	up = hi > 16 ? fds_up(fd, hi) : (fds_close(fd), -1);
	if (up >= 0 && ftruncate(up, (off_t)keep_size) < 0) {
		fds_close(up);
		up = -1;
	}
	return up;
}

/*
 * In a forked child whose launcher takes children's keeps: its keep made
 * a memfd of its own, fd, whose [0, snap) keep_fork_prepare copied the
 * tables into and keep_fork_child mapped at h; the pages copied after
 * ([snap, have), private) go into it too, the rest of the range is mapped
 * from it, and it is sent to the launcher with the child's pid, so that
 * a death by a signal (multiprocessing's terminate() sends its workers
 * SIGTERM) still leaves a profile.  0, or -1 with the pages as they were
 * (fd closed).  Only system calls: this runs in the fork's child handler.
 */
static int child_keep(struct keep_head *h, int fd, size_t snap, size_t have)
{
	struct stat st;
	struct keep_kid_msg m;
	int32_t pid = (int32_t)getpid();

	if (!sock_ours() || fstat(fd, &st) < 0 ||
	    pwrite_all(fd, (const char *)h + snap, have - snap, (off_t)snap) < 0 ||
	    mmap((char *)h + snap, keep_size - snap, PROT_NONE, MAP_SHARED | MAP_FIXED | MAP_NORESERVE,
		 fd, (off_t)snap) == MAP_FAILED) {
		fds_close(fd);
		return -1;
	}
	if (have > snap)
		mprotect((char *)h + snap, have - snap, PROT_READ | PROT_WRITE);
	/* The header is the child's now (its parent's state: a stopped
	 * profile stays saved).  Pages the parent's threads took after the
	 * header was copied were copied too: handed out after them. */
	if (h->used < have)
		h->used = have;
	h->pid = pid;
	h->saves = 0;
	h->file_dev = h->file_ino = 0;
	h->exit_called = 0;
	h->forked = 0; /* its own children, not its parent's */
	h->exec_saves = 0;
	keep_fd = fd;
	keep_dev = (uint64_t)st.st_dev;
	keep_ino = (uint64_t)st.st_ino;
	keep_is_child = 1;
	out_put(h);
	/* Not sent (the launcher is gone, its queue full): the keep serves
	 * as any, and only a death by a signal loses the profile. */
	keep_launched = sendmsg(keep_sock, keep_kid_msg(&m, pid, (int32_t)getppid(), fd),
				MSG_DONTWAIT | MSG_NOSIGNAL) >= 0;
	errno = 0;
	return 0;
}

static char *keep_snap;
static size_t keep_snap_len;
static int keep_snap_fd = -1; /* the copy's memfd, for the child's own keep; or -1 */
/* Signals held from the copy to the child's send (child_keep): a child
 * killed as it starts (a parent that kills what it just forked) would
 * die before its keep reached the launcher.  The mask before. */
static sigset_t keep_fork_mask;
static int keep_fork_masked;

void keep_fork_prepare(void)
{
	struct keep_head *h = keep_h;
	size_t used;
	char *snap = MAP_FAILED;
	int e = errno;

	keep_snap = NULL;
	keep_snap_len = 0;
	keep_snap_fd = -1;
	/* In a seccomp sandbox, no system call of ours (sandbox.h): the
	 * tables are no longer written, the child keeps none of its own. */
	if (!h || sandbox_entered())
		return;
	used = used_now(h);
	/* Under a launcher that takes children's keeps, the copy goes into
	 * the memfd that will be the child's keep (child_keep). */
	if (sock_ours() && (keep_snap_fd = child_memfd()) >= 0) {
		sigset_t all;

		sigfillset(&all);
		keep_fork_masked = pthread_sigmask(SIG_BLOCK, &all, &keep_fork_mask) == 0;
		snap = mmap(NULL, used, PROT_READ | PROT_WRITE, MAP_SHARED, keep_snap_fd, 0);
		if (snap == MAP_FAILED) {
			fds_close(keep_snap_fd);
			keep_snap_fd = -1;
		}
	}
	if (keep_snap_fd < 0)
		snap = mmap(NULL, used, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (snap != MAP_FAILED && copy_data(snap, (const char *)h, 0, used) < 0) {
		munmap(snap, used);
		snap = MAP_FAILED;
	}
	if (snap == MAP_FAILED && keep_snap_fd >= 0) {
		fds_close(keep_snap_fd);
		keep_snap_fd = -1;
	}
	if (snap != MAP_FAILED) {
		keep_snap = snap;
		keep_snap_len = used;
	}
	errno = e;
}

/* The signals held for the fork back as they were (parent, child). */
static void fork_unmask(void)
{
	if (keep_fork_masked)
		pthread_sigmask(SIG_SETMASK, &keep_fork_mask, NULL);
	keep_fork_masked = 0;
}

void keep_fork_parent(void)
{
	if (keep_snap)
		munmap(keep_snap, keep_snap_len);
	keep_snap = NULL;
	/* A child that will send its own keep (child_keep): counted for the
	 * launcher, before the program can end. */
	if (keep_snap_fd >= 0 && keep_h)
		__atomic_fetch_add(&keep_h->forked, 1, __ATOMIC_RELEASE);
	if (keep_snap_fd >= 0)
		fds_close(keep_snap_fd);
	keep_snap_fd = -1;
	fork_unmask();
}

/* [p, p + n) made private zero pages, read-only: nothing of the child's
 * is there to write (its own thread's records and chunks are older than
 * the fork's copy), and read-only private pages commit no memory however
 * many.  Else gone.  Never left shared with the parent. */
static void zero_over(char *p, size_t n)
{
	if (n && mmap(p, n, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1,
		      0) == MAP_FAILED)
		munmap(p, n);
}

void keep_fit(uint64_t limit)
{
	struct keep_head *h = keep_h;
	uint64_t want = (limit / 4) & ~(uint64_t)4095, used;

	if (!h)
		return;
	used = used_now(h);
	if (want < used)
		want = used;
	if (want >= keep_size || munmap((char *)h + want, keep_size - want) < 0)
		return;
	__atomic_store_n(&keep_size, want, __ATOMIC_RELEASE);
	h->size = want;
}

int keep_watched(void)
{
	struct keep_head *h = __atomic_load_n(&keep_h, __ATOMIC_ACQUIRE);

	return h && keep_launched && h->pid == (int32_t)getpid() &&
	       __atomic_load_n(&h->state, __ATOMIC_ACQUIRE) == KEEP_RECORDING;
}

int keep_forked(void)
{
	return keep_is_child && keep_h && keep_h->pid == (int32_t)getpid();
}

int keep_fork_child(void)
{
	struct keep_head *h = keep_h;
	size_t have = 0, late;
	char *c;
	int rc = 0, e = errno;

	if (sandbox_entered())
		return 0; /* recording stopped: the shared tables stay as they are */
	if (h) {
		/* What the copy missed, read now: the parent's threads
		 * took no more of it than this before the fork. */
		late = used_now(h);
		if (keep_snap && mremap(keep_snap, keep_snap_len, keep_snap_len,
					MREMAP_MAYMOVE | MREMAP_FIXED, h) != MAP_FAILED) {
			have = keep_snap_len;
		} else {
			/* No copy as at the fork: the child makes one now, so
			 * that it never counts into its parent's tables, and
			 * records nothing (they may be half-changed). */
			if (keep_snap)
				munmap(keep_snap, keep_snap_len);
			rc = -1;
		}
		if (late > have) {
			c = mmap(NULL, late - have, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
			/* Readable here too: a parent's thread may have made
			 * it accessible only in the parent (keep_map). */
			if (c != MAP_FAILED &&
			    (mprotect((char *)h + have, late - have, PROT_READ) < 0 ||
			     copy_data(c, (const char *)h + have, have, late - have) < 0 ||
			     mremap(c, late - have, late - have, MREMAP_MAYMOVE | MREMAP_FIXED,
				    (char *)h + have) == MAP_FAILED))
				munmap(c, late - have);
			else if (c != MAP_FAILED)
				have = late;
			if (have < late)
				rc = -1; /* the tables lost pages: the child records nothing */
		}
		zero_over((char *)h + have, keep_size - have);
		keep_snap = NULL;
		/* Only if it still is the memfd: the number may be the
		 * program's now. */
		if (fd_ours())
			fds_close(keep_fd);
		keep_fd = -1;
		if (keep_snap_fd >= 0 && rc == 0 &&
		    child_keep(h, keep_snap_fd, keep_snap_len, have) == 0) {
			keep_snap_fd = -1;
			fork_unmask();
			errno = e;
			return 0;
		}
		if (keep_snap_fd >= 0 && rc != 0)
			fds_close(keep_snap_fd);
		keep_snap_fd = -1;
		fork_unmask();
		__atomic_store_n(&keep_h, NULL, __ATOMIC_RELEASE);
		keep_str = keep_str_end = NULL;
	}
	/* Only if it still is the memfd: the number may be the program's now. */
	if (fd_ours())
		fds_close(keep_fd);
	keep_fd = -1;
	errno = e;
	return rc;
}
