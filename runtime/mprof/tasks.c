/*
 * tasks.c - owns the walk over the process's threads (tasks.h): the
 * entries of /proc/self/task, by getdents64 into a buffer on the stack.
 */
#include "tasks.h"

#include <fcntl.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

int tasks_each(int (*fn)(long tid, void *arg), void *arg)
{
	char buf[2048];
	long n, k;
	int rc = 0, fd = (int)syscall(SYS_openat, AT_FDCWD, "/proc/self/task",
				      O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	while (rc == 0 && (n = syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0) {
		for (k = 0; k < n && rc == 0;) {
			const struct {
				uint64_t ino;
				int64_t off;
				unsigned short reclen;
				unsigned char type;
				char name[];
			} *d = (const void *)(buf + k);
			long tid = 0;

			for (const char *c = d->name; *c >= '0' && *c <= '9'; c++)
				tid = tid * 10 + (*c - '0');
			k += d->reclen;
			if (tid > 0)
				rc = fn(tid, arg);
		}
	}
	if (rc == 0 && n < 0)
		rc = -1;
	syscall(SYS_close, fd);
	return rc;
}
