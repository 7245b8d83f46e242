/*
 * fds.c - owns the collectors' marks on their own descriptors (fds_*) and
 * the program's close, close_range and closefrom, which leave the marked
 * ones open (fds.h says why).
 *
 * A bit a descriptor below FDS_MAX (128 KiB of bits, touched only where
 * a mark falls), set and cleared atomically; with none set, each call
 * only tests a count and goes on to the next definition (libc's, or
 * another preload's: dlsym(RTLD_NEXT), looked up at load, as a forked
 * child or a signal handler must not).  Ranges are closed around the
 * marked numbers, one call a stretch.
 *
 * The same through syscall() (sandbox.c: a daemon's
 * syscall(SYS_close_range, 3, ~0U, 0)).  Not covered: dup2 and dup3 onto
 * a marked number (a program names a number that high only on purpose),
 * the close system call made by the instruction itself, and descriptors
 * at FDS_MAX and above.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fds.h"
#include "sandbox.h"

#define VIS __attribute__((visibility("default")))

static uint64_t fds_bits[FDS_MAX / 64];
static int fds_n;   /* marked now */
static int fds_top; /* no mark at or above (a high-water mark) */

typedef int close_fn(int);
typedef int close_range_fn(unsigned int, unsigned int, int);
typedef void closefrom_fn(int);
static close_fn *next_close;
static close_range_fn *next_close_range;
static closefrom_fn *next_closefrom;

__attribute__((constructor)) void fds_init(void)
{
	if (next_close)
		return;
	next_close = (close_fn *)dlsym(RTLD_NEXT, "close");
	next_close_range = (close_range_fn *)dlsym(RTLD_NEXT, "close_range");
	next_closefrom = (closefrom_fn *)dlsym(RTLD_NEXT, "closefrom");
}

static int marked(unsigned int fd)
{
	return fd < FDS_MAX &&
	       (__atomic_load_n(&fds_bits[fd / 64], __ATOMIC_RELAXED) >> (fd % 64) & 1);
}

void fds_own(int fd)
{
	int top;

	if (fd < 0 || fd >= FDS_MAX || marked((unsigned)fd))
		return;
	__atomic_fetch_or(&fds_bits[fd / 64], 1ull << (fd % 64), __ATOMIC_RELAXED);
	__atomic_fetch_add(&fds_n, 1, __ATOMIC_RELEASE);
	top = __atomic_load_n(&fds_top, __ATOMIC_RELAXED);
	while (fd >= top && !__atomic_compare_exchange_n(&fds_top, &top, fd + 1, 0, __ATOMIC_RELEASE,
							 __ATOMIC_RELAXED))
		;
}

void fds_close(int fd)
{
	if (fd < 0)
		return;
	if (marked((unsigned)fd)) {
		__atomic_fetch_and(&fds_bits[fd / 64], ~(1ull << (fd % 64)), __ATOMIC_RELAXED);
		__atomic_fetch_sub(&fds_n, 1, __ATOMIC_RELEASE);
	}
	sandbox_syscall(SYS_close, fd, 0, 0);
}

int fds_budget(long *limit)
{
	struct rlimit r;
	long l = getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur < (1u << 30) ? (long)r.rlim_cur
									     : 1l << 30;

	if (limit)
		*limit = l;
	return l / 8 < 8 ? 8 : l / 8 > FDS_MAX ? FDS_MAX : (int)(l / 8);
}

int fds_spare(int n, int brief)
{
	return __atomic_load_n(&fds_n, __ATOMIC_ACQUIRE) + n + (brief ? 0 : FDS_BRIEF) <=
	       fds_budget(NULL);
}

int fds_half(void)
{
	struct rlimit r;

	return getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur < 1024 ? (int)r.rlim_cur / 2 : 512;
}

int fds_keep(int fd)
{
	int hi = fds_half(), up;

	if (fd < hi && (up = fcntl(fd, F_DUPFD_CLOEXEC, hi)) >= 0) {
		sandbox_syscall(SYS_close, fd, 0, 0);
		fd = up;
	}
	fds_own(fd);
	return fd;
}

int fds_up(int fd, int from)
{
	int up = fcntl(fd, F_DUPFD_CLOEXEC, from);

	sandbox_syscall(SYS_close, fd, 0, 0);
	if (up >= 0)
		fds_own(up);
	return up;
}

/* ---- the program's ---- */

int fds_refused(int fd)
{
	if (__atomic_load_n(&fds_n, __ATOMIC_ACQUIRE) && fd >= 0 && marked((unsigned)fd)) {
		errno = EBADF;
		return 1;
	}
	return 0;
}

VIS int close(int fd)
{
	if (fds_refused(fd))
		return -1;
	if (next_close)
		return next_close(fd);
	return (int)sandbox_syscall(SYS_close, fd, 0, 0);
}

/* One call: the next close_range, or (sys, the program's system call
 * through syscall(); or none found) the system call itself.  Not the next
 * close_range for a syscall(): a library's close_range that makes it by
 * syscall() came back here, and around again, until the stack ran out. */
static int range(unsigned int first, unsigned int last, int flags, int sys)
{
	if (next_close_range && !sys)
		return next_close_range(first, last, flags);
	return (int)sandbox_syscall(SYS_close_range, first, last, flags);
}

/* [first, last] but the marked: one call a stretch between them. */
static int around(unsigned int first, unsigned int last, int flags, int sys)
{
	unsigned int top, fd = first, end;
	int rc = 0;

	if (first > last || !__atomic_load_n(&fds_n, __ATOMIC_ACQUIRE))
		return range(first, last, flags, sys);
	top = (unsigned int)__atomic_load_n(&fds_top, __ATOMIC_ACQUIRE);
	for (;;) {
		if (fd < top && marked(fd)) {
			if (fd == last)
				return rc;
			fd++;
			continue;
		}
		end = fd;
		while (end < last && end + 1 < top && !marked(end + 1))
			end++;
		if (end + 1 >= top)
			end = last; /* nothing is marked from top on */
		if (range(fd, end, flags, sys) < 0)
			rc = -1;
		if (end == last)
			return rc;
		fd = end + 1;
	}
}

VIS int close_range(unsigned int first, unsigned int last, int flags)
{
	return fds_prog_close_range(first, last, flags, 0);
}

int fds_prog_close_range(unsigned int first, unsigned int last, int flags, int sys)
{
	int e = errno, rc;

	/* Flags the kernel does not know are refused as they would be. */
	if (flags & ~(int)(CLOSE_RANGE_UNSHARE | CLOSE_RANGE_CLOEXEC))
		return range(first, last, flags, sys);
	rc = around(first, last, flags, sys);
	if (rc == 0)
		errno = e;
	return rc;
}

VIS void closefrom(int lowfd)
{
	int e = errno;

	if (lowfd < 0)
		lowfd = 0;
	if (!__atomic_load_n(&fds_n, __ATOMIC_ACQUIRE) && next_closefrom) {
		next_closefrom(lowfd);
		return;
	}
	if (around((unsigned int)lowfd, ~0u, 0, 0) < 0) {
		/* As glibc's: close one by one where the call is missing. */
		unsigned int top = (unsigned int)__atomic_load_n(&fds_top, __ATOMIC_ACQUIRE);
		long max = sysconf(_SC_OPEN_MAX);

		for (long fd = lowfd; fd < max || fd < (long)top; fd++)
			if (!marked((unsigned int)fd))
				sandbox_syscall(SYS_close, fd, 0, 0);
	}
	errno = e;
}
