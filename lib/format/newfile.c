/*
 * newfile.c - owns creating a file where another user may write
 * (newfile_*; newfile.h): the temporary a data file, an export or a
 * merge is written to before it is renamed over its target.
 *
 * Why not FILE.tmp.PID: a profile is often written as root into a
 * directory every user may write to (/tmp, a shared build tree).  A
 * predictable name there, opened with O_CREAT|O_TRUNC, follows a
 * symbolic link another user planted at it and truncates whatever file
 * the link names.  O_CREAT|O_EXCL never follows a link (the open fails
 * when the name exists in any form), O_NOFOLLOW says so twice, a random
 * name retried on EEXIST makes planting ahead useless, and rename(2)
 * replaces a link at the target rather than writing through it.  The
 * mode is 0666 so that the umask decides, as for any file a program
 * creates: mkstemp's 0600 would ignore it.
 *
 * Randomness from getrandom(2), which never blocks here (GRND_NONBLOCK);
 * where it fails (an old kernel, a seccomp filter), a mix of the pid,
 * the clock and a counter: unguessable enough, and O_EXCL keeps the
 * open safe whatever the name.
 */
#include "newfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Names tried before giving up: each collides only with a planted name. */
#define TRIES 64

/* Mode bits a file is made without, besides the umask of the moment. */
static mode_t newfile_mask;

void newfile_keep_umask(void)
{
	char buf[1024], *p;
	int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC), e = errno;
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
	mode_t m = 0;

	if (fd >= 0)
		close(fd);
	errno = e;
	if (n <= 0)
		return;
	buf[n] = 0;
	if (!(p = strstr(buf, "\nUmask:\t")))
		return;
	for (p += 8; *p >= '0' && *p <= '7'; p++)
		m = (mode_t)(m * 8 + (mode_t)(*p - '0'));
	newfile_mask = m & 0777;
}

static uint64_t mix(uint64_t x)
{
	/* splitmix64's finalizer */
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static uint64_t newfile_random(void)
{
	static uint64_t counter;
	struct timespec ts = { 0, 0 };
	uint64_t r;

	if (getrandom(&r, sizeof r, GRND_NONBLOCK) == (ssize_t)sizeof r)
		return r;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	r = (uint64_t)getpid() << 32 ^ (uint64_t)ts.tv_sec * 1000000000ull ^ (uint64_t)ts.tv_nsec;
	return mix(r ^ mix(__atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED) ^ (uintptr_t)&r));
}

int newfile_open(const char *path, char *tmp, size_t cap)
{
	static const char hex[] = "0123456789abcdef";
	size_t n = strlen(path);
	struct stat st;
	int e = errno, fd = -1, rc = -EEXIST;

	if (n + NEWFILE_SUFFIX_LEN + 1 > cap)
		return -ENAMETOOLONG;
	/* What the target is, through a link too: the rename would replace
	 * a device, a FIFO or a link to one (as root, /dev/null or
	 * /dev/stdout), and fail on a directory only once all is written.
	 * A link to a regular file is replaced, never written through. */
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
		return S_ISDIR(st.st_mode) ? -EISDIR : -EEXIST;
	memcpy(tmp, path, n);
	memcpy(tmp + n, ".tmp.", 5);
	for (int t = 0; t < TRIES && fd < 0 && rc == -EEXIST; t++) {
		uint64_t r = newfile_random();

		for (int k = 0; k < 16; k++, r >>= 4)
			tmp[n + 5 + k] = hex[r & 15];
		tmp[n + NEWFILE_SUFFIX_LEN] = 0;
		fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			  0666 & ~newfile_mask);
		if (fd < 0)
			rc = -errno;
	}
	errno = e;
	return fd >= 0 ? fd : rc;
}

const char *newfile_strerror(int rc)
{
	return rc == -EEXIST ? "it exists and is not a regular file" : strerror(-rc);
}
