/*
 * limits.c - owns the collectors' setrlimit, setrlimit64, prlimit and
 * prlimit64.  A program that lowers its address-space limit (RLIMIT_AS)
 * while it runs would find the keep's reservation (keep.c: up to 64 GiB
 * of address space, none of it memory) counted against the new limit,
 * and its next mmap failing: Python's resource.setrlimit(RLIMIT_AS, 16
 * GiB) then raised MemoryError under mprof run and cpprof record.  The
 * keep is cut to a quarter of the new limit first (keep_fit), as it is
 * sized at start; then the system call, as glibc's functions make it
 * (prlimit64).  A limit set before the program starts (ulimit -v) is
 * keep.c's own.
 */
#include <errno.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "keep.h"

#define VIS __attribute__((visibility("default")))

/* Before a change of this process's resource to r. */
static void fit(int resource, const struct rlimit *r)
{
	if (resource == RLIMIT_AS && r && r->rlim_cur != RLIM_INFINITY)
		keep_fit((uint64_t)r->rlim_cur);
}

static int prlimit_call(pid_t pid, int resource, const struct rlimit *r, struct rlimit *old)
{
	if (pid == 0 || pid == getpid())
		fit(resource, r);
	return (int)syscall(SYS_prlimit64, pid, resource, r, old);
}

VIS int setrlimit(__rlimit_resource_t resource, const struct rlimit *r)
{
	return prlimit_call(0, (int)resource, r, NULL);
}

VIS int setrlimit64(__rlimit_resource_t resource, const struct rlimit64 *r)
{
	return prlimit_call(0, (int)resource, (const struct rlimit *)r, NULL);
}

VIS int prlimit(pid_t pid, __rlimit_resource_t resource, const struct rlimit *r,
		struct rlimit *old)
{
	return prlimit_call(pid, (int)resource, r, old);
}

VIS int prlimit64(pid_t pid, __rlimit_resource_t resource, const struct rlimit64 *r,
		  struct rlimit64 *old)
{
	return prlimit_call(pid, (int)resource, (const struct rlimit *)r, (struct rlimit *)old);
}
