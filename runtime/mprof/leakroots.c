/*
 * leakroots.c - owns finding the roots of the leak scan (leakroots_*):
 * the process's mappings (/proc/self/maps), its modules' segments
 * (dl_iterate_phdr, which does not allocate) and its threads
 * (/proc/self/task), taken once at exit into tables from mmap, then handed
 * to the scan as ranges of words and single values (leakroots.h).
 *
 * Another thread's stack pointer comes from the kernel, which reports it
 * for a thread blocked in a system call (proc(5), /proc/PID/syscall); a
 * thread running in user space has none to report, and the scan is then
 * skipped: its stack cannot be bounded and its registers are unknown.
 */
#include "exitlist.h"
#include "leakroots.h"
#include "tasks.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <unwind.h>

#include "arena.h"
#include "bounds.h"

/* glibc's thread descriptor is some 2.3 KiB at the thread pointer. */
#define TCB_BYTES 4096
/* Below a blocked thread's stack pointer, the red zone (x86-64 psABI). */
#define RED_ZONE 128

enum { SEG_X = 1, SEG_W = 2 };

struct span {
	uintptr_t lo, hi;
	int flags;
};

struct thread {
	uintptr_t sp, args[6];
};

/* A table in memory from mmap, doubled when full. */
struct vec {
	void *p;
	size_t n, cap;
};

static struct {
	struct vec maps;    /* struct span: readable mappings, in address order */
	struct vec segs;    /* struct span: modules' PT_LOAD segments, sorted */
	struct vec roots;   /* struct span: modules' data, this thread's TLS */
	struct vec blocks;  /* uintptr_t: this thread's TLS blocks' addresses */
	struct vec threads; /* struct thread: the others */
	uintptr_t self, alloc;
	int failed; /* a table could not grow */
	int running; /* a thread was found running */
	/* Where the program called exit: its caller's stack pointer and
	 * callee-saved registers (found: 1). */
	int at_exit;
	uintptr_t exit_sp, exit_regs[6];
} lr;

/* Room for one more element of size sz in v; NULL (and lr.failed) if none. */
static void *vec_add(struct vec *v, size_t sz)
{
	if (v->n == v->cap) {
		size_t cap = v->cap ? 2 * v->cap : 4096 / sz;
		void *p = arena_map(cap * sz);

		if (!p) {
			lr.failed = 1;
			return NULL;
		}
		if (v->p) {
			memcpy(p, v->p, v->n * sz);
			arena_unmap(v->p, v->cap * sz);
		}
		v->p = p;
		v->cap = cap;
	}
	return (char *)v->p + v->n++ * sz;
}

static void vec_free(struct vec *v, size_t sz)
{
	if (v->p)
		arena_unmap(v->p, v->cap * sz);
	memset(v, 0, sizeof *v);
}

static void span_add(struct vec *v, uintptr_t lo, uintptr_t hi, int flags)
{
	struct span *s;

	if (lo < hi && (s = vec_add(v, sizeof *s)))
		*s = (struct span){ lo, hi, flags };
}

/* The span of v (sorted, disjoint) holding a, or NULL. */
static const struct span *span_find(const struct vec *v, uintptr_t a)
{
	const struct span *s = v->p;
	size_t lo = 0, hi = v->n;

	while (lo < hi) {
		size_t m = lo + (hi - lo) / 2;
		if (a < s[m].lo)
			hi = m;
		else if (a >= s[m].hi)
			lo = m + 1;
		else
			return &s[m];
	}
	return NULL;
}

/* ---- /proc/self/maps ---- */

static int hexdigit(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* One line's start ("lo-hi perms"): its readable range into maps. */
static void maps_line(const char *l, size_t n)
{
	uintptr_t x[2] = { 0, 0 };
	size_t i = 0;
	int d;

	for (int k = 0; k < 2; k++, i++)
		for (; i < n && (d = hexdigit(l[i])) >= 0; i++)
			x[k] = x[k] << 4 | (uintptr_t)d;
	if (i < n && l[i] == 'r')
		span_add(&lr.maps, x[0], x[1], 0);
}

/* The maps, through this thread's view first (/proc/self/maps reads as
 * empty once the main thread has exited); 0 or -1. */
static int maps_read(void)
{
	static const char *const path[] = { "/proc/thread-self/maps", "/proc/self/maps" };
	char buf[4096], line[64];
	size_t ln = 0;

	for (int k = 0; k < 2 && !lr.maps.n; k++) {
		long fd = syscall(SYS_openat, AT_FDCWD, path[k], O_RDONLY | O_CLOEXEC), n;

		if (fd < 0)
			continue;
		while ((n = syscall(SYS_read, (int)fd, buf, sizeof buf)) != 0) {
			if (n < 0) {
				if (errno == EINTR)
					continue;
				break;
			}
			for (long i = 0; i < n; i++) {
				if (buf[i] == '\n') {
					maps_line(line, ln);
					ln = 0;
				} else if (ln < sizeof line) {
					line[ln++] = buf[i];
				}
			}
		}
		syscall(SYS_close, (int)fd);
	}
	return lr.maps.n && !lr.failed ? 0 : -1;
}

/* ---- modules ---- */

/* [lo, hi) less [xlo, xhi) into the roots, of kind k. */
static void root_less(uintptr_t lo, uintptr_t hi, uintptr_t xlo, uintptr_t xhi, int k)
{
	if (xlo >= xhi || xhi <= lo || xlo >= hi) {
		span_add(&lr.roots, lo, hi, k);
		return;
	}
	span_add(&lr.roots, lo, xlo, k);
	span_add(&lr.roots, xhi, hi, k);
}

static int module_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	uintptr_t base = info->dlpi_addr, rlo = 0, rhi = 0, page = (uintptr_t)getpagesize();
	int *nth = arg, mine = 0, kind = LEAKROOTS_PLAIN;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = base + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && lr.self >= lo && lr.self - lo < ph->p_memsz)
			mine = 1;
		if (ph->p_type == PT_LOAD && lr.alloc >= lo && lr.alloc - lo < ph->p_memsz)
			kind = LEAKROOTS_ALLOC;
		if (ph->p_type == PT_GNU_RELRO) {
			rlo = lo & ~(page - 1);
			rhi = (lo + ph->p_memsz) & ~(page - 1); /* mprotect rounds down */
		}
	}
	/* The monitor's own library holds no pointer of the program's; linked
	 * into the executable (the first module) it cannot be told apart. */
	mine &= *nth > 0;
	(*nth)++;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = base + ph->p_vaddr, hi = lo + ph->p_memsz;

		if (ph->p_type == PT_LOAD) {
			span_add(&lr.segs, lo, hi,
				 (ph->p_flags & PF_X ? SEG_X : 0) | (ph->p_flags & PF_W ? SEG_W : 0));
			if ((ph->p_flags & PF_W) && !mine)
				root_less(lo & ~(uintptr_t)7, (hi + page - 1) & ~(page - 1), rlo, rhi,
					  kind);
		} else if (ph->p_type == PT_TLS && info->dlpi_tls_data && !mine) {
			uintptr_t *b = vec_add(&lr.blocks, sizeof *b);
			lo = (uintptr_t)info->dlpi_tls_data;
			span_add(&lr.roots, lo, lo + ph->p_memsz, kind);
			if (b)
				*b = lo;
		}
	}
	return 0;
}

/*
 * The loader's record of every module (struct link_map), reached from
 * _r_debug: it keeps those of the modules dlopen loaded (glibc's own
 * too: the NSS module that getpwuid loads for a user not in /etc/passwd)
 * in memory malloc gave it, linked from the records of the first modules,
 * which it made itself with mmap (no root here).  Without: `id 1026`'s
 * libnss_systemd record was definitely lost, 1,244 bytes, and its names
 * and scopes indirectly, 3,982, where memcheck (which scans all mapped
 * memory) finds them reachable.  The base namespace's only.
 */
static void loader_maps(void)
{
	const struct link_map *m = _r_debug.r_map;

	for (int n = 0; m && n < 65536; m = m->l_next, n++) {
		uintptr_t *b = vec_add(&lr.blocks, sizeof *b);

		if (b)
			*b = (uintptr_t)m;
	}
}

/* Sort spans by their start (few: insertion). */
static void spans_sort(struct vec *v)
{
	struct span *s = v->p, t;

	for (size_t i = 1; i < v->n; i++) {
		size_t j = i;
		t = s[i];
		for (; j > 0 && s[j - 1].lo > t.lo; j--)
			s[j] = s[j - 1];
		s[j] = t;
	}
}

/* ---- threads ---- */

/* Parse "NR a1 .. a6 sp pc" or "-1 sp pc" (numbers in decimal or 0x hex);
 * 0 with the stack pointer and arguments, or -1 ("running", anything
 * else). */
static int syscall_line(const char *s, long n, struct thread *t)
{
	uintptr_t v[9] = { 0 };
	int k = 0, neg = 0;
	long i = 0;

	while (i < n && k < 9) {
		uintptr_t x = 0;
		int base = 10, digits = 0, d;

		while (i < n && s[i] == ' ')
			i++;
		if (i < n && s[i] == '-' && k == 0)
			neg = 1, i++;
		if (i + 1 < n && s[i] == '0' && s[i + 1] == 'x')
			base = 16, i += 2;
		for (; i < n && (d = hexdigit(s[i])) >= 0 && d < base; i++, digits++)
			x = x * (uintptr_t)base + (uintptr_t)d;
		if (!digits)
			break;
		v[k++] = x;
	}
	memset(t, 0, sizeof *t);
	if (neg && k >= 3) { /* blocked, not in a system call */
		t->sp = v[1];
		return 0;
	}
	if (neg || k < 9)
		return -1;
	memcpy(t->args, v + 1, sizeof t->args);
	t->sp = v[7];
	return 0;
}

static int open_task_file(long tid, const char *file)
{
	char path[64] = "/proc/self/task/", num[24];
	size_t n = strlen(path), k = 0;

	do
		num[k++] = (char)('0' + tid % 10);
	while ((tid /= 10) > 0 && k < sizeof num);
	while (k)
		path[n++] = num[--k];
	path[n++] = '/';
	memcpy(path + n, file, strlen(file) + 1);
	return (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
}

/* One other thread: 0, 1 when it is gone, -1 when it runs (lr.running
 * set) or cannot be read. */
static int thread_add(long tid)
{
	char buf[256];
	struct thread t, *p;
	long n;
	int fd = open_task_file(tid, "syscall");

	if (fd < 0)
		return errno == ENOENT || errno == ESRCH ? 1 : -1;
	do
		n = syscall(SYS_read, fd, buf, sizeof buf);
	while (n < 0 && errno == EINTR);
	syscall(SYS_close, fd);
	if (n <= 0)
		return -1;
	if (syscall_line(buf, n, &t) < 0) {
		lr.running = n >= 7 && !memcmp(buf, "running", 7);
		return -1;
	}
	if ((p = vec_add(&lr.threads, sizeof *p)))
		*p = t;
	return 0;
}

static int thread_other(long tid, void *arg)
{
	return tid != *(const long *)arg && thread_add(tid) < 0 ? -2 : 0;
}

/* The other threads into lr.threads: 0, or -1 with *why. */
static int threads_read(const char **why)
{
	long me = syscall(SYS_gettid);
	int rc = tasks_each(thread_other, &me);

	if (rc == -1)
		*why = "/proc/self/task cannot be read";
	else if (rc)
		*why = "another thread was running";
	return rc ? -1 : 0;
}

/*
 * The mappings, then every other thread blocked: a pass that found one
 * running is made again from the start a millisecond later, for up to
 * THREAD_WAIT_NS in all, so that a worker about to wait is scanned (xz
 * -T2's, at exit, was caught running in 4 runs of 10, and the scan
 * skipped).  From the start: meanwhile a thread may have started, on a
 * stack the maps read before did not have (its pointers were not
 * scanned, and what only it held was definitely lost), or one read as
 * blocked may have run.
 */
#define THREAD_WAIT_NS 100000000L
static int maps_threads_read(const char **why)
{
	struct timespec t0, t, ms = { 0, 1000000 };

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		lr.maps.n = lr.threads.n = 0;
		lr.running = 0;
		if (maps_read() < 0) {
			*why = lr.failed ? "out of memory" : "/proc/self/maps cannot be read";
			return -1;
		}
		if (threads_read(why) == 0)
			return 0;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (!lr.running || lr.failed ||
		    (t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) >= THREAD_WAIT_NS)
			return -1;
		syscall(SYS_nanosleep, &ms, NULL);
	}
}

/* ---- where the program called exit ---- */

/*
 * The frames below the call to exit (exit itself, libc's exit handlers,
 * ld.so's destructor loop, the monitor's destructor) hold none of the
 * program's pointers but in the registers they saved, and they reuse the
 * stack the program's returned calls left: a dead frame's pointer, in a
 * slot they never write, would keep alive what memcheck (which ignores
 * words never written since) finds lost.  So the program's part of the
 * stack starts at the caller of exit, with the registers it had then,
 * which libgcc's unwinder restores frame by frame from the CFI.
 */
struct exit_walk {
	int frames, in_exit;
};

static _Unwind_Reason_Code exit_step(struct _Unwind_Context *ctx, void *arg)
{
	static const int dwarf[6] = { 3, 6, 12, 13, 14, 15 }; /* rbx rbp r12-r15 */
	struct exit_walk *w = arg;
	uintptr_t ip = _Unwind_GetIP(ctx);
	Dl_info di;

	if (!ip || ++w->frames > 256)
		return _URC_END_OF_STACK;
	if (w->in_exit) {
		/* The caller of exit, as it was at the call. */
		for (int k = 0; k < 6; k++)
			lr.exit_regs[k] = _Unwind_GetGR(ctx, dwarf[k]);
		lr.at_exit = 1;
		return _URC_END_OF_STACK;
	}
	if (dladdr((void *)(ip - 1), &di) && di.dli_saddr &&
	    (di.dli_saddr == (void *)&exit || (di.dli_sname && !strcmp(di.dli_sname, "exit")))) {
		lr.exit_sp = _Unwind_GetCFA(ctx);
		w->in_exit = 1;
	}
	return _URC_NO_REASON;
}

static void exit_find(void)
{
	struct exit_walk w = { 0, 0 };

	_Unwind_Backtrace(exit_step, &w);
}

/* ---- the API ---- */

int leakroots_open(const void *self, const void *alloc, int *others, const char **why)
{
	int nth = 0;

	memset(&lr, 0, sizeof lr);
	lr.self = (uintptr_t)self;
	lr.alloc = (uintptr_t)alloc;
	*others = 0;
	if (maps_threads_read(why) < 0)
		return -1;
	dl_iterate_phdr(module_cb, &nth);
	loader_maps();
	spans_sort(&lr.segs);
	exit_find();
	if (lr.failed) {
		*why = "out of memory";
		return -1;
	}
	*others = (int)lr.threads.n;
	return 0;
}

void leakroots_each(const struct leakroots_regs *regs, const struct leakroots_sink *s)
{
	const struct span *r = lr.roots.p, *m;
	const struct thread *t = lr.threads.p;
	const uintptr_t *b = lr.blocks.p;
	uintptr_t sp = regs->r[LEAKROOTS_NREGS - 1], lo, hi, tp;

	for (size_t i = 0; i < lr.roots.n; i++)
		s->range(s->ctx, r[i].lo, r[i].hi, r[i].flags);
	for (size_t i = 0; i < lr.blocks.n; i++)
		s->block(s->ctx, b[i]);
	/* The blocks of exit functions recorded freed (exitlist.c): still
	 * the list glibc runs after the save, their arguments reached
	 * through them. */
	for (int i = 0;; i++) {
		uintptr_t p = 0, n = 0;

		if (exitlist_block(i, &p, &n) < 0)
			break;
		if (p && leakroots_readable(p, p + n))
			s->range(s->ctx, p, p + n, LEAKROOTS_PLAIN);
	}
	/* This thread: registers, stack, descriptor; from the call to exit
	 * if it was found. */
	for (int i = 0; i < LEAKROOTS_NREGS - 1; i++)
		s->value(s->ctx, lr.at_exit ? lr.exit_regs[i] : regs->r[i]);
	if (lr.at_exit && lr.exit_sp > sp)
		sp = lr.exit_sp;
	if (bounds_thread(sp, &lo, &hi) == 0 && sp >= lo && sp < hi)
		s->range(s->ctx, sp, hi, LEAKROOTS_PLAIN);
	else if ((m = span_find(&lr.maps, sp)))
		s->range(s->ctx, sp, m->hi, LEAKROOTS_PLAIN);
	tp = (uintptr_t)__builtin_thread_pointer();
	if ((m = span_find(&lr.maps, tp)))
		s->range(s->ctx, tp, m->hi - tp < TCB_BYTES ? m->hi : tp + TCB_BYTES,
			 LEAKROOTS_PLAIN);
	/* The others, blocked in the kernel: from the red zone up. */
	for (size_t i = 0; i < lr.threads.n; i++) {
		for (int k = 0; k < 6; k++)
			s->value(s->ctx, t[i].args[k]);
		if (!(m = span_find(&lr.maps, t[i].sp)))
			continue;
		lo = t[i].sp - m->lo > RED_ZONE ? t[i].sp - RED_ZONE : m->lo;
		s->range(s->ctx, lo, m->hi, LEAKROOTS_OTHER);
	}
}

int leakroots_readable(uintptr_t lo, uintptr_t hi)
{
	while (lo < hi) {
		const struct span *m = span_find(&lr.maps, lo);
		if (!m)
			return 0;
		lo = m->hi;
	}
	return 1;
}

int leakroots_in_module(uintptr_t v, uintptr_t *seg_end)
{
	const struct span *s = span_find(&lr.segs, v);

	if (s && seg_end)
		*seg_end = s->hi;
	return s != NULL;
}

int leakroots_in_code(uintptr_t v)
{
	const struct span *s = span_find(&lr.segs, v);

	return s && (s->flags & SEG_X);
}

void leakroots_close(void)
{
	vec_free(&lr.maps, sizeof(struct span));
	vec_free(&lr.segs, sizeof(struct span));
	vec_free(&lr.roots, sizeof(struct span));
	vec_free(&lr.blocks, sizeof(uintptr_t));
	vec_free(&lr.threads, sizeof(struct thread));
}
