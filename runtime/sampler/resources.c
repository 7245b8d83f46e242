/*
 * resources.c - owns the resource catalogue (res_*): names, units, default
 * intervals, how each is counted, parsing of intervals, and the probe that
 * says whether this machine can sample a resource and, if not, why.
 *
 * Linked into libcpprof.so and into the cpprof command.  Nothing here runs
 * in signal context.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "resources.h"

#define MS 1000000ull

const struct res_info res_table[RES_N] = {
	[RES_CPU] = { "cpu", "ns", 1 * MS, RES_HOW_CLOCK, PERF_TYPE_SOFTWARE,
		      PERF_COUNT_SW_TASK_CLOCK, "thread CPU time" },
	[RES_REAL] = { "real", "ns", 1 * MS, RES_HOW_REAL, PERF_TYPE_SOFTWARE,
		       PERF_COUNT_SW_TASK_CLOCK, "wall-clock time, blocked threads too" },
	[RES_PAGE_FAULTS] = { "page-faults", "faults", 100, RES_HOW_PERF, PERF_TYPE_SOFTWARE,
			      PERF_COUNT_SW_PAGE_FAULTS, "page faults, minor and major" },
	[RES_MINOR_FAULTS] = { "minor-faults", "faults", 100, RES_HOW_PERF, PERF_TYPE_SOFTWARE,
			       PERF_COUNT_SW_PAGE_FAULTS_MIN, "page faults served without I/O" },
	[RES_MAJOR_FAULTS] = { "major-faults", "faults", 1, RES_HOW_PERF, PERF_TYPE_SOFTWARE,
			       PERF_COUNT_SW_PAGE_FAULTS_MAJ, "page faults that waited for I/O" },
	[RES_CONTEXT_SWITCHES] = { "context-switches", "switches", 10, RES_HOW_RING,
				   PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES,
				   "times a thread left the CPU" },
	[RES_SYSCALLS] = { "syscalls", "calls", 100, RES_HOW_PERF, PERF_TYPE_TRACEPOINT, 0,
			   "system calls (raw_syscalls:sys_exit)" },
	[RES_READ_BYTES] = { "read-bytes", "bytes", 4096, RES_HOW_CALLS, 0, 0,
			     "bytes returned by read, pread, readv, recv..., fread" },
	[RES_WRITE_BYTES] = { "write-bytes", "bytes", 4096, RES_HOW_CALLS, 0, 0,
			      "bytes taken by write, pwrite, writev, send..., fwrite" },
	[RES_IO_TIME] = { "io-time", "ns", 100000, RES_HOW_CALLS, 0, 0,
			  "wall time inside those calls and fsync" },
};

int res_find(const char *name)
{
	for (int r = 0; r < RES_N; r++)
		if (strcmp(res_table[r].name, name) == 0)
			return r;
	return -1;
}

static int is_time(int r)
{
	return !strcmp(res_table[r].unit, "ns");
}

int res_parse_interval(int r, const char *s, uint64_t *out)
{
	uint64_t v = 0, mul = 1;
	const char *p = s;

	if (*p < '0' || *p > '9')
		return -1;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (v > (UINT64_MAX - 9) / 10)
			return -1;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	if (*p) {
		if (is_time(r) && !strcmp(p, "ns"))
			mul = 1;
		else if (is_time(r) && !strcmp(p, "us"))
			mul = 1000;
		else if (is_time(r) && !strcmp(p, "ms"))
			mul = 1000000;
		else if (is_time(r) && !strcmp(p, "s"))
			mul = 1000000000;
		else if (!strcmp(res_table[r].unit, "bytes") && (!strcmp(p, "k") || !strcmp(p, "K")))
			mul = 1024;
		else if (!strcmp(res_table[r].unit, "bytes") && (!strcmp(p, "m") || !strcmp(p, "M")))
			mul = 1024 * 1024;
		else
			return -1;
	}
	if (v == 0 || v > UINT64_MAX / mul || v * mul > (1ull << 62))
		return -1;
	*out = v * mul;
	return 0;
}

int64_t res_tracepoint_id(const char *event, char *why, size_t whylen)
{
	static const char *const roots[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	char path[256], buf[32];
	int64_t id = -1;
	int denied = 0;

	for (size_t i = 0; i < 2 && id < 0; i++) {
		int fd;
		ssize_t n;

		snprintf(path, sizeof path, "%s/events/%s/id", roots[i], event);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			denied |= errno == EACCES || errno == EPERM;
			continue;
		}
		n = read(fd, buf, sizeof buf - 1);
		close(fd);
		if (n > 0) {
			buf[n] = 0;
			id = 0;
			for (char *p = buf; *p >= '0' && *p <= '9'; p++)
				id = id * 10 + (*p - '0');
		}
	}
	/* Mounted, but root's alone (mode 0700, as Debian mounts it): the
	 * way is not to mount it (a user of postgres's was told to). */
	if (id < 0 && denied)
		snprintf(why, whylen,
			 "tracefs: %s/id not readable under /sys/kernel/tracing by this user "
			 "(it is root's: run as root, or make the events readable)",
			 event);
	else if (id < 0)
		snprintf(why, whylen,
			 "no tracefs: %s/id not found under /sys/kernel/tracing "
			 "(mount -t tracefs nodev /sys/kernel/tracing)",
			 event);
	return id;
}

static void paranoid(char *buf, size_t len)
{
	int fd = open("/proc/sys/kernel/perf_event_paranoid", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, len - 1);

	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = 0;
	if (n > 0 && buf[n - 1] == '\n')
		buf[n - 1] = 0;
	if (!buf[0])
		snprintf(buf, len, "?");
}

/* Try to open (and close) an event on this thread; 0 or -errno. */
static int try_event(uint32_t type, uint64_t config, int ring)
{
	struct perf_event_attr a;
	int fd;

	memset(&a, 0, sizeof a);
	a.size = sizeof a;
	a.type = type;
	a.config = config;
	a.sample_period = 1000000;
	a.disabled = 1;
	a.exclude_hv = 1;
	/* As the sampler opens them (perf.c): overflow signals in user mode
	 * only, but for the syscall tracepoint; ring samples of context
	 * switches, which happen in the kernel. */
	a.exclude_kernel = !ring && type != PERF_TYPE_TRACEPOINT;
	if (ring) {
		a.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_READ | PERF_SAMPLE_REGS_USER |
				PERF_SAMPLE_STACK_USER;
		a.sample_regs_user = 1ull << 8 | 1ull << 7 | 1ull << 6; /* ip, sp, bp */
		a.sample_stack_user = 8192;
	}
	fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

static void perf_why(int err, char *why, size_t whylen)
{
	char p[16];

	if (err == -EACCES || err == -EPERM) {
		paranoid(p, sizeof p);
		snprintf(why, whylen,
			 "perf_event_open not permitted (%s; kernel.perf_event_paranoid = %s)",
			 strerror(-err), p);
	} else if (err == -ENOSYS) {
		snprintf(why, whylen, "perf_event_open not available (no perf events in this kernel, or blocked by seccomp)");
	} else {
		snprintf(why, whylen, "perf_event_open failed: %s", strerror(-err));
	}
}

int res_probe(int r, const char *no_perf, char *how, size_t howlen, char *why, size_t whylen)
{
	const struct res_info *ri = &res_table[r];
	char tmp[256];
	int err;

	how[0] = why[0] = 0;
	switch (ri->how) {
	case RES_HOW_CLOCK:
	case RES_HOW_REAL:
		err = no_perf ? -EPERM : try_event(ri->perf_type, ri->perf_config, 0);
		if (err == 0) {
			snprintf(tmp, sizeof tmp, "perf task-clock");
		} else {
			if (no_perf)
				snprintf(why, whylen, "perf_event_open disabled by %s", no_perf);
			else
				perf_why(err, why, whylen);
			snprintf(tmp, sizeof tmp, "POSIX CPU-time timer, fires at scheduler ticks (%s)", why);
			why[0] = 0;
		}
		if (ri->how == RES_HOW_REAL) {
			char path[64];
			snprintf(path, sizeof path, "/proc/self/task/%ld/syscall", (long)syscall(SYS_gettid));
			if (access(path, R_OK) == 0)
				snprintf(how, howlen, "on CPU: %s; blocked: /proc/TID/syscall and a stack copy", tmp);
			else
				snprintf(how, howlen, "on CPU: %s; blocked threads not told apart (%s: %s)", tmp,
					 path, strerror(errno));
		} else {
			snprintf(how, howlen, "%s", tmp);
		}
		return 0;
	case RES_HOW_PERF:
	case RES_HOW_RING: {
		uint64_t config = ri->perf_config;
		if (no_perf) {
			snprintf(why, whylen, "perf_event_open disabled by %s", no_perf);
			return -1;
		}
		if (r == RES_SYSCALLS) {
			int64_t id = res_tracepoint_id("raw_syscalls/sys_exit", why, whylen);
			if (id < 0)
				return -1;
			config = (uint64_t)id;
		}
		err = try_event(ri->perf_type, config, ri->how == RES_HOW_RING);
		if (err) {
			perf_why(err, why, whylen);
			return -1;
		}
		if (ri->how == RES_HOW_RING)
			snprintf(how, howlen, "perf software event; the kernel copies registers and stack to a ring buffer");
		else if (r == RES_SYSCALLS)
			snprintf(how, howlen, "perf tracepoint raw_syscalls:sys_exit, overflow signal");
		else
			snprintf(how, howlen, "perf software event, overflow signal");
		return 0;
	}
	case RES_HOW_CALLS:
		snprintf(how, howlen, "interposed calls (through libc's dynamic symbols)");
		return 0;
	}
	return -1;
}
