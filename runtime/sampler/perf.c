/*
 * perf.c - owns perf_event_open for the sampler (pf_*): per-thread events
 * that signal their own thread on overflow, and ring-buffer events.
 *
 * Signals: O_ASYNC with F_SETSIG(CP_SIG) and F_SETOWN_EX(F_OWNER_TID): the
 * kernel sends CP_SIG to the thread that owns the event, with si_fd naming
 * it, at each overflow, and only at overflows in user mode.  Ring buffers are for events whose overflow happens
 * when a signal would do harm: a context switch happens as the thread goes
 * to sleep, and a signal then would wake it and make nanosleep, poll,
 * select, epoll_wait or sem_wait fail with EINTR (measured: 500 sleeps out
 * of 500).  There the kernel records the user registers and a copy of the
 * user stack instead, and nobody is interrupted.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fds.h"
#include "perf.h"
#include "state.h"

/*
 * An event's descriptor, moved up out of the program's way: from half
 * its limit on (512 under the usual 1024), below the keep's (keep.c and
 * lib/run/keeper.c take the top ones).  A program counts on its lowest
 * numbers being its own (Python's subprocess tests list a child's
 * descriptors; a daemon closes 3 and up): a thread's event at 3 showed.
 */
static long perf_open(struct perf_event_attr *a, int tid)
{
	long fd = syscall(SYS_perf_event_open, a, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);

	if (fd < 0)
		return -errno;
	return fds_keep((int)fd); /* up, and not the program's to close (fds.h) */
}

int pf_open_signal(uint32_t type, uint64_t config, uint64_t period)
{
	struct perf_event_attr a;
	struct f_owner_ex o;
	long fd;

	memset(&a, 0, sizeof a);
	a.size = sizeof a;
	a.type = type;
	a.config = config;
	a.sample_period = period;
	a.disabled = 1;
	a.exclude_hv = 1;
	/* Overflow only in user mode.  An overflow in the kernel (the task
	 * clock's timer firing in a syscall's entry, a fault in copy_to_user)
	 * may signal a thread that is about to sleep, and the signal then
	 * fails its nanosleep or poll with EINTR (measured: one nap in a few
	 * hundred at 1 kHz).  Kernel-mode gticks are still counted, and
	 * credited at the next overflow in user mode: to the stack the
	 * thread returned to.  Not for the syscall tracepoint, which fires in
	 * the kernel by nature, at sys_exit, when the call is over. */
	a.exclude_kernel = type != PERF_TYPE_TRACEPOINT;
	/* Gone at a successful exec, before its last system call ends: the
	 * descriptor's close-on-exec releases the event only after that, and
	 * the syscall tracepoint's overflow at execve's own sys_exit signalled
	 * the new image, whose CP_SIG is the default again: one child in a
	 * hundred died by SIGPROF under -e syscalls (find -exec, xargs,
	 * bash).  A kernel older than 5.13 refuses the flag: without it there. */
	a.remove_on_exec = 1;
	fd = perf_open(&a, 0);
	if (fd == -EINVAL) {
		a.remove_on_exec = 0;
		fd = perf_open(&a, 0);
	}
	if (fd < 0)
		return (int)fd;
	o.type = F_OWNER_TID;
	o.pid = (pid_t)syscall(SYS_gettid);
	if (fcntl((int)fd, F_SETFL, O_ASYNC) < 0 || fcntl((int)fd, F_SETSIG, CP_SIG) < 0 ||
	    fcntl((int)fd, F_SETOWN_EX, &o) < 0 || ioctl((int)fd, PERF_EVENT_IOC_ENABLE, 0) < 0) {
		int e = errno;
		fds_close((int)fd);
		return -e;
	}
	return (int)fd;
}

uint64_t pf_read(int fd)
{
	uint64_t v = 0;

	if (read(fd, &v, sizeof v) != (ssize_t)sizeof v)
		return 0;
	return v;
}

void pf_set_period(int fd, uint64_t period)
{
	ioctl(fd, PERF_EVENT_IOC_PERIOD, &period);
}

#define RING_PAGES 16 /* data pages: 64 KiB, three stack copies and more */
/* A kernel-mode ring (kcpu.c) is drained only at its thread's CPU-clock
 * signals, which a thread in the kernel does not get: 256 KiB, fifteen
 * copies of 16 KiB, 15 ms of kernel time at 1 ms.  At 64 KiB (three of
 * 16) a thread that read /dev/zero 5 ms at a time lost a third of them. */
#define RING_PAGES_KERNEL 64

int pf_open_ring(struct pf_ring *r, int tid, uint32_t type, uint64_t config, uint64_t period,
		 uint32_t stack, int kernel_only)
{
	struct perf_event_attr a;
	long fd;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	memset(&a, 0, sizeof a);
	a.size = sizeof a;
	a.type = type;
	a.config = config;
	a.sample_period = period;
	a.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_READ | PERF_SAMPLE_REGS_USER |
			(stack ? PERF_SAMPLE_STACK_USER : 0);
	a.sample_regs_user = 1ull << 8 | 1ull << 7 | 1ull << 6; /* ip, sp, bp */
	a.sample_stack_user = stack;
	a.disabled = 1;
	a.exclude_hv = 1;
	a.exclude_user = kernel_only != 0;
	a.watermark = 1;
	a.wakeup_watermark = (uint32_t)((kernel_only ? RING_PAGES_KERNEL : RING_PAGES) * page / 2);
	fd = perf_open(&a, tid);
	if (fd < 0)
		return (int)fd;
	r->map_len = (1 + (kernel_only ? RING_PAGES_KERNEL : RING_PAGES)) * page;
	r->map = mmap(NULL, r->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, (int)fd, 0);
	if (r->map == MAP_FAILED) {
		int e = errno;
		fds_close((int)fd);
		r->map = NULL;
		return -e;
	}
	r->fd = (int)fd;
	r->stack = stack;
	if (ioctl(r->fd, PERF_EVENT_IOC_ENABLE, 0) < 0) {
		int e = errno;
		pf_close_ring(r);
		return -e;
	}
	return 0;
}

void pf_disable(int fd)
{
	if (fd >= 0)
		ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
}

void pf_close_ring(struct pf_ring *r)
{
	if (r->map)
		munmap(r->map, r->map_len);
	if (r->fd >= 0)
		fds_close(r->fd);
	r->map = NULL;
	r->fd = -1;
}

/* Copy n bytes at ring offset off (wrapping) into out. */
static void ring_copy(const uint8_t *data, uint64_t size, uint64_t off, void *out, size_t n)
{
	uint64_t at = off % size;
	size_t first = n < size - at ? n : (size_t)(size - at);

	memcpy(out, data + at, first);
	if (n > first)
		memcpy((uint8_t *)out + first, data, n - first);
}

uint64_t pf_waiting(const struct pf_ring *r)
{
	const struct perf_event_mmap_page *meta = r->map;

	return meta ? __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE) - meta->data_tail : 0;
}

uint64_t pf_room(const struct pf_ring *r)
{
	const struct perf_event_mmap_page *meta = r->map;

	return meta ? meta->data_size : 0;
}

uint64_t pf_head(const struct pf_ring *r)
{
	const struct perf_event_mmap_page *meta = r->map;

	return meta ? __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE) : 0;
}

int pf_drain(struct pf_ring *r, uint8_t *rec, uint64_t from, uint64_t to, pf_sample_fn *fn,
	     void *arg)
{
	struct perf_event_mmap_page *meta = r->map;
	const uint8_t *data;
	uint64_t head, tail, size;
	int n = 0;

	if (!meta)
		return 0;
	data = (const uint8_t *)r->map + meta->data_offset;
	size = meta->data_size;
	head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
	tail = meta->data_tail;
	while (tail + sizeof(struct perf_event_header) <= head) {
		struct perf_event_header h;

		ring_copy(data, size, tail, &h, sizeof h);
		if (h.size < sizeof h || tail + h.size > head)
			break;
		if (h.type == PERF_RECORD_SAMPLE && h.size <= PF_REC_MAX && tail >= from && tail < to) {
			const uint64_t *q;
			uint64_t abi, stack_size, dyn;
			uint32_t tid;
			const uint8_t *stack;

			ring_copy(data, size, tail, rec, h.size);
			q = (const uint64_t *)(rec + sizeof h);
			/* PERF_SAMPLE_TID: u32 pid, tid; READ: u64 value;
			 * REGS_USER: u64 abi, regs (bp, sp, ip by bit order);
			 * STACK_USER: u64 size, data[size], u64 dyn_size. */
			tid = (uint32_t)(q[0] >> 32);
			uint64_t count = q[1];
			abi = q[2];
			if (abi != PERF_SAMPLE_REGS_ABI_NONE && !r->stack) {
				fn(arg, tid, count, q[5], q[4], q[3], NULL, 0);
			} else if (abi != PERF_SAMPLE_REGS_ABI_NONE) {
				uint64_t bp = q[3], sp = q[4], ip = q[5];
				stack_size = q[6];
				stack = (const uint8_t *)&q[7];
				if ((size_t)(stack - rec) + stack_size + 8 <= h.size) {
					memcpy(&dyn, stack + stack_size, 8);
					if (dyn > stack_size)
						dyn = stack_size;
					fn(arg, tid, count, ip, sp, bp, stack, (size_t)dyn);
				}
			}
			n++;
		}
		tail += h.size;
	}
	__atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
	return n;
}
