/*
 * io.c - owns the interposed I/O calls (io_*): the read family credits
 * read-bytes, the write family write-bytes, and all of them (with fsync
 * and fdatasync) io-time, the wall time spent inside the call, blocked or
 * not.  Each byte actually transferred (the return value) is a gtick; a
 * call that crosses k sample boundaries credits k hits to the caller's
 * stack (paper 5.1: "reading 10240 bytes will result in 10 hits").
 *
 * Only calls that go through libc's dynamic symbols are seen: stdio's own
 * reads and writes are internal to libc and are not; fread, fwrite, fgets,
 * getline, fputs, puts and the printf family are counted as calls of their
 * own (the bytes they take or hand over, a memory stream's not), getc and
 * putc not.  The real functions come
 * from dlsym(RTLD_NEXT).  These wrappers may run in the program's signal
 * handlers (read and write are async-signal-safe): they use the
 * signal-safe unwinder and the lock-free table, and a wrapper that finds
 * its thread already inside one (busy) only passes the call through.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#include "format.h"
#include "io.h"
#include "kcpu.h"
#include "pyframes.h"
#include "state.h"
#include "sink.h"
#include "unwind.h"

/* Macros in <stdio.h> when optimizing; the functions are what we wrap. */
#undef fread_unlocked
#undef fwrite_unlocked
#undef fgets_unlocked
#undef fputs_unlocked

static inline uint64_t io_start(void)
{
	if (cp.col[RES_IO_TIME] < 0 || !cp_self.ready)
		return 0;
	return cp_now(CLOCK_MONOTONIC);
}

__attribute__((noinline)) static void io_done(uint64_t t0, int r, int64_t bytes, uint64_t ret)
{
	struct cp_thread *t = &cp_self;
	uint64_t hits = 0, thits = 0;
	uint32_t flags;
	int e = errno, n;

	if (!t->ready || t->busy || !__atomic_load_n(&cp.on, __ATOMIC_RELAXED))
		return;
	t->busy = 1;
	if (r >= 0 && cp.col[r] >= 0 && bytes > 0)
		hits = cp_credit(t, r, t->r[r].consumed + (uint64_t)bytes);
	if (t0)
		thits = cp_credit(t, RES_IO_TIME,
				  t->r[RES_IO_TIME].consumed + (cp_now(CLOCK_MONOTONIC) - t0));
	if ((hits || thits) && cp_sink.here) {
		if (hits)
			cp_sink.here(0, cp.col[r], hits, 0);
		if (thits)
			cp_sink.here(0, cp.col[RES_IO_TIME], thits, 0);
	} else if (hits || thits) {
		n = unwind_capture_here(t->cframes, CP_MAX_DEPTH, ret, &flags);
		/* A Python program: its frames, as the handler's (sampler.c),
		 * in scratch of the calls' own; the reads' system calls are the
		 * sampler's (one instruction: a handler cannot split it). */
		if (cp.py && t->ioframes) {
			uint64_t before = py_safe_syscalls;

			n = py_rewrite_signal(t->cframes, n, CP_MAX_DEPTH, t->ioframes, &flags,
					      (uint8_t *)(t->ioframes + CP_MAX_DEPTH));
			__atomic_fetch_add(&t->nsys, py_safe_syscalls - before, __ATOMIC_RELAXED);
		}
		if (hits)
			cp_sink.stack(t->cframes, n, flags, (uint32_t)t->tid, cp.col[r], hits);
		if (thits)
			cp_sink.stack(t->cframes, n, flags, (uint32_t)t->tid, cp.col[RES_IO_TIME],
				      thits);
	}
	t->busy = 0;
	errno = e;
}

#define RET_ADDR ((uint64_t)(uintptr_t)__builtin_return_address(0))

/* The thread's kernel-mode rings (kcpu.h): 1 if they are to be drained
 * after the call (io_kend); a Python program's from here on are the
 * call's. */
static inline int io_kbegin(void)
{
	if (!cp_self.kc || cp_self.busy)
		return 0;
	if (!cp.py)
		return 1;
	/* (No frame pointer here for the wrapper's place: a thread blocked
	 * in the call is walked from its stack pointer alone, without perf.)
	 * kc_call_begin takes it. */
	kc_call_begin(&cp_self);
	return 2; /* io_kend ends it (kc_call_out) */
}

/* After the real call at pc, made from ret: the rings' records, at their
 * own stacks; a Python program's at the call's stack with the Python
 * frames of its caller, the call's own leaf. */
static inline __attribute__((always_inline)) void io_kend_drain(uint64_t pc, uint64_t ret)
{
	struct cp_thread *t = &cp_self;
	uint32_t flags = 0;
	int e = errno, n;

	if (!t->ready || t->busy || !__atomic_load_n(&cp.on, __ATOMIC_RELAXED))
		return;
	if (!cp.py) {
		t->busy = 1;
		kc_call_drain(t);
		t->busy = 0;
		errno = e;
		return;
	}
	if (!t->ioframes || !kc_call_waiting(t))
		return;
	t->busy = 1;
	n = unwind_capture_here(t->cframes + 1, CP_MAX_DEPTH - 1, ret, &flags);
	t->cframes[0] = pc;
	n = (n > 0 ? n : 0) + 1;
	flags |= FORMAT_STACK_PC_FIRST;
	{
		uint64_t before = py_safe_syscalls;

		n = py_rewrite_signal(t->cframes, n, CP_MAX_DEPTH, t->ioframes, &flags,
				      (uint8_t *)(t->ioframes + CP_MAX_DEPTH));
		__atomic_fetch_add(&t->nsys, py_safe_syscalls - before, __ATOMIC_RELAXED);
	}
	kc_call_end(t, t->cframes, n, flags);
	t->busy = 0;
	errno = e;
}

__attribute__((noinline)) static void io_kend(uint64_t pc, uint64_t ret, int kc)
{
	io_kend_drain(pc, ret);
	if (kc == 2)
		kc_call_out(&cp_self);
}

/*
 * A wrapper: time the real function, credit its bytes.  The real
 * functions are looked up in the constructor (io_init), not at their first
 * call: dlsym takes the loader's lock, which another thread may hold while
 * it waits for this one (a library's constructor, inside dlopen, joining a
 * thread that writes), and is no call for a signal handler.  A call made
 * before the constructor ran (another library's constructor) looks its
 * function up then.
 */
#define WRAP(type, name, r, params, args, bytes) WRAP_K(type, name, r, params, args, bytes, (type)-1, 1)
#define WRAP_F(type, name, r, params, args, bytes, fail) WRAP_K(type, name, r, params, args, bytes, fail, 0)
/* kernel: the call's kernel time drained at its return (io_kbegin); not
 * for stdio's, whose calls mostly make no system call (a drain a call
 * cost fprintf 6 ns), and whose kernel time is the next sample's. */
#define WRAP_K(type, name, r, params, args, bytes, fail, kernel)                     \
	static type(*real_##name) params;                                            \
	CP_VIS type name params                                                      \
	{                                                                            \
		type(*real) params = real_##name;                                    \
		uint64_t t0;                                                         \
		int kc;                                                              \
		type rc;                                                             \
		if (!real)                                                           \
			real = real_##name = (type(*) params)dlsym(RTLD_NEXT, #name); \
		if (!real) {                                                         \
			errno = ENOSYS;                                              \
			return fail;                                                 \
		}                                                                    \
		t0 = io_start();                                                     \
		kc = kernel ? io_kbegin() : 0;                                       \
		rc = real args;                                                      \
		if (kc)                                                              \
			io_kend((uint64_t)(uintptr_t)real, RET_ADDR, kc);            \
		if (t0 || (r >= 0 && cp.col[r] >= 0 && (int64_t)(bytes) > 0))       \
			io_done(t0, r, (int64_t)(bytes), RET_ADDR);                  \
		return rc;                                                           \
	}

static size_t io_len(const char *s)
{
	return s ? strlen(s) : 0;
}

/* n bytes through stream f, or 0 when f is no file's: open_memstream's,
 * fmemopen's, fopencookie's (no byte of theirs reaches a file here: the
 * program's write of the buffer, or the cookie's, is the one counted). */
static int64_t io_filed(FILE *f, int64_t n)
{
	int e;

	if (n <= 0)
		return 0;
	e = errno;
	if (!f || fileno_unlocked(f) < 0)
		n = 0;
	errno = e;
	return n;
}

#define RB RES_READ_BYTES
#define WB RES_WRITE_BYTES
/* Every wrapped call: X(type, name, resource, params, args, bytes). */
#define IO_CALLS(X) \
	X(ssize_t, read, RB, (int fd, void *b, size_t n), (fd, b, n), rc) \
	X(ssize_t, __read_chk, RB, (int fd, void *b, size_t n, size_t bl), (fd, b, n, bl), rc) \
	X(ssize_t, pread, RB, (int fd, void *b, size_t n, off_t o), (fd, b, n, o), rc) \
	X(ssize_t, pread64, RB, (int fd, void *b, size_t n, off64_t o), (fd, b, n, o), rc) \
	X(ssize_t, __pread_chk, RB, (int fd, void *b, size_t n, off_t o, size_t bl), (fd, b, n, o, bl), rc) \
	X(ssize_t, __pread64_chk, RB, (int fd, void *b, size_t n, off64_t o, size_t bl), (fd, b, n, o, bl), rc) \
	X(ssize_t, readv, RB, (int fd, const struct iovec *v, int c), (fd, v, c), rc) \
	X(ssize_t, preadv, RB, (int fd, const struct iovec *v, int c, off_t o), (fd, v, c, o), rc) \
	X(ssize_t, preadv64, RB, (int fd, const struct iovec *v, int c, off64_t o), (fd, v, c, o), rc) \
	X(ssize_t, preadv2, RB, (int fd, const struct iovec *v, int c, off_t o, int f), (fd, v, c, o, f), rc) \
	X(ssize_t, preadv64v2, RB, (int fd, const struct iovec *v, int c, off64_t o, int f), (fd, v, c, o, f), rc) \
	X(ssize_t, recv, RB, (int fd, void *b, size_t n, int f), (fd, b, n, f), rc) \
	X(ssize_t, __recv_chk, RB, (int fd, void *b, size_t n, size_t bl, int f), (fd, b, n, bl, f), rc) \
	X(ssize_t, recvfrom, RB, (int fd, void *b, size_t n, int f, struct sockaddr *a, socklen_t *l), (fd, b, n, f, a, l), rc) \
	X(ssize_t, __recvfrom_chk, RB, (int fd, void *b, size_t n, size_t bl, int f, struct sockaddr *a, socklen_t *l), (fd, b, n, bl, f, a, l), rc) \
	X(ssize_t, recvmsg, RB, (int fd, struct msghdr *m, int f), (fd, m, f), rc) \
	X(size_t, fread, RB, (void *p, size_t s, size_t n, FILE *f), (p, s, n, f), io_filed(f, (int64_t)(rc * s))) \
	X(size_t, fread_unlocked, RB, (void *p, size_t s, size_t n, FILE *f), (p, s, n, f), io_filed(f, (int64_t)(rc * s))) \
	X(size_t, __fread_chk, RB, (void *p, size_t pl, size_t s, size_t n, FILE *f), (p, pl, s, n, f), io_filed(f, (int64_t)(rc * s))) \
	X(size_t, __fread_unlocked_chk, RB, (void *p, size_t pl, size_t s, size_t n, FILE *f), (p, pl, s, n, f), io_filed(f, (int64_t)(rc * s))) \
	X(ssize_t, write, WB, (int fd, const void *b, size_t n), (fd, b, n), rc) \
	X(ssize_t, pwrite, WB, (int fd, const void *b, size_t n, off_t o), (fd, b, n, o), rc) \
	X(ssize_t, pwrite64, WB, (int fd, const void *b, size_t n, off64_t o), (fd, b, n, o), rc) \
	X(ssize_t, writev, WB, (int fd, const struct iovec *v, int c), (fd, v, c), rc) \
	X(ssize_t, pwritev, WB, (int fd, const struct iovec *v, int c, off_t o), (fd, v, c, o), rc) \
	X(ssize_t, pwritev64, WB, (int fd, const struct iovec *v, int c, off64_t o), (fd, v, c, o), rc) \
	X(ssize_t, pwritev2, WB, (int fd, const struct iovec *v, int c, off_t o, int f), (fd, v, c, o, f), rc) \
	X(ssize_t, pwritev64v2, WB, (int fd, const struct iovec *v, int c, off64_t o, int f), (fd, v, c, o, f), rc) \
	X(ssize_t, send, WB, (int fd, const void *b, size_t n, int f), (fd, b, n, f), rc) \
	X(ssize_t, sendto, WB, (int fd, const void *b, size_t n, int f, const struct sockaddr *a, socklen_t l), (fd, b, n, f, a, l), rc) \
	X(ssize_t, sendmsg, WB, (int fd, const struct msghdr *m, int f), (fd, m, f), rc) \
	X(size_t, fwrite, WB, (const void *p, size_t s, size_t n, FILE *f), (p, s, n, f), io_filed(f, (int64_t)(rc * s))) \
	X(size_t, fwrite_unlocked, WB, (const void *p, size_t s, size_t n, FILE *f), (p, s, n, f), io_filed(f, (int64_t)(rc * s))) \
	X(int, fsync, -1, (int fd), (fd), 0) \
	X(int, fdatasync, -1, (int fd), (fd), 0)

IO_CALLS(WRAP)

/*
 * stdio's lines and formatted output, the bytes they hand over or take:
 * X(type, name, resource, params, args, bytes, what a failure returns).
 * stdio's own reads and writes under them are libc's internal calls, not
 * the wrapped read and write, so nothing is counted twice (as fread and
 * fwrite).  getc, putc and their kin, a call a byte, are not wrapped.
 */
#define IO_STDIO_CALLS(X) \
	X(char *, fgets, RB, (char *s, int n, FILE *f), (s, n, f), io_filed(f, (int64_t)io_len(rc)), NULL) \
	X(char *, fgets_unlocked, RB, (char *s, int n, FILE *f), (s, n, f), io_filed(f, (int64_t)io_len(rc)), NULL) \
	X(char *, __fgets_chk, RB, (char *s, size_t sl, int n, FILE *f), (s, sl, n, f), io_filed(f, (int64_t)io_len(rc)), NULL) \
	X(char *, __fgets_unlocked_chk, RB, (char *s, size_t sl, int n, FILE *f), (s, sl, n, f), io_filed(f, (int64_t)io_len(rc)), NULL) \
	X(ssize_t, getline, RB, (char **l, size_t *n, FILE *f), (l, n, f), io_filed(f, rc), -1) \
	X(ssize_t, getdelim, RB, (char **l, size_t *n, int d, FILE *f), (l, n, d, f), io_filed(f, rc), -1) \
	X(ssize_t, __getdelim, RB, (char **l, size_t *n, int d, FILE *f), (l, n, d, f), io_filed(f, rc), -1) \
	X(int, fputs, WB, (const char *s, FILE *f), (s, f), rc >= 0 ? io_filed(f, (int64_t)io_len(s)) : 0, EOF) \
	X(int, fputs_unlocked, WB, (const char *s, FILE *f), (s, f), rc >= 0 ? io_filed(f, (int64_t)io_len(s)) : 0, EOF) \
	X(int, puts, WB, (const char *s), (s), rc >= 0 ? io_filed(stdout, (int64_t)io_len(s) + 1) : 0, EOF) \
	X(int, vfprintf, WB, (FILE *f, const char *fmt, va_list ap), (f, fmt, ap), io_filed(f, rc), -1) \
	X(int, vprintf, WB, (const char *fmt, va_list ap), (fmt, ap), io_filed(stdout, rc), -1) \
	X(int, __vfprintf_chk, WB, (FILE *f, int fl, const char *fmt, va_list ap), (f, fl, fmt, ap), io_filed(f, rc), -1) \
	X(int, __vprintf_chk, WB, (int fl, const char *fmt, va_list ap), (fl, fmt, ap), io_filed(stdout, rc), -1) \
	X(int, vdprintf, WB, (int fd, const char *fmt, va_list ap), (fd, fmt, ap), rc, -1) \
	X(int, __vdprintf_chk, WB, (int fd, int fl, const char *fmt, va_list ap), (fd, fl, fmt, ap), rc, -1)

IO_STDIO_CALLS(WRAP_F)

/* A printf's bytes: to stream f (NULL: to a descriptor, dprintf). */
static int64_t io_printed(FILE *f, int64_t n)
{
	return f ? io_filed(f, n) : n;
}

/* The variadic ones, as their v-forms, counted at their own callers;
 * stream: the FILE written (NULL: a descriptor). */
#define WRAP_PRINTF(name, vname, params, vargs, last, stream)                        \
	CP_VIS int name params                                                       \
	{                                                                            \
		va_list ap;                                                          \
		uint64_t t0;                                                         \
		int64_t n;                                                           \
		int rc;                                                              \
		if (!real_##vname)                                                   \
			real_##vname = (__typeof__(real_##vname))dlsym(RTLD_NEXT, #vname); \
		if (!real_##vname) {                                                 \
			errno = ENOSYS;                                              \
			return -1;                                                   \
		}                                                                    \
		t0 = io_start(); /* no kernel drain, as WRAP_F's */                  \
		va_start(ap, last);                                                  \
		rc = real_##vname vargs;                                             \
		va_end(ap);                                                          \
		if (t0 || (cp.col[WB] >= 0 && rc > 0)) {                             \
			n = io_printed(stream, rc);                                  \
			io_done(t0, WB, n, RET_ADDR);                                \
		}                                                                    \
		return rc;                                                           \
	}
WRAP_PRINTF(printf, vprintf, (const char *fmt, ...), (fmt, ap), fmt, stdout)
WRAP_PRINTF(fprintf, vfprintf, (FILE *f, const char *fmt, ...), (f, fmt, ap), fmt, f)
WRAP_PRINTF(__printf_chk, __vprintf_chk, (int fl, const char *fmt, ...), (fl, fmt, ap), fmt, stdout)
WRAP_PRINTF(__fprintf_chk, __vfprintf_chk, (FILE *f, int fl, const char *fmt, ...), (f, fl, fmt, ap), fmt, f)
WRAP_PRINTF(dprintf, vdprintf, (int fd, const char *fmt, ...), (fd, fmt, ap), fmt, (FILE *)NULL)
WRAP_PRINTF(__dprintf_chk, __vdprintf_chk, (int fd, int fl, const char *fmt, ...), (fd, fl, fmt, ap), fmt, (FILE *)NULL)

#define RESOLVE(type, name, r, params, args, bytes) \
	if (!real_##name)                           \
		real_##name = (type(*) params)dlsym(RTLD_NEXT, #name);
#define RESOLVE_F(type, name, r, params, args, bytes, fail) RESOLVE(type, name, r, params, args, bytes)

void io_init(void)
{
	IO_CALLS(RESOLVE)
	IO_STDIO_CALLS(RESOLVE_F)
}
