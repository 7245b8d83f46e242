/*
 * perf.h - perf_event_open for one thread: events whose overflow sends
 * CP_SIG to that thread (fasync, F_SETOWN_EX), and events whose samples
 * (registers and a copy of the user stack) the kernel writes to a ring
 * buffer, drained by the watcher.
 */
#ifndef CP_PERF_H
#define CP_PERF_H

#include <stddef.h>
#include <stdint.h>

/*
 * Open a counting event of (type, config) on the calling thread, first
 * overflow after `period`, overflow signal CP_SIG to this thread, overflows
 * in user mode only (kernel-mode events are counted, and credited at the
 * next overflow).  Enabled on return.  The fd, or -errno.
 */
int pf_open_signal(uint32_t type, uint64_t config, uint64_t period);

/* The event's count (read(2)); async-signal-safe.  0 on error. */
uint64_t pf_read(int fd);

/* Change the overflow period; async-signal-safe. */
void pf_set_period(int fd, uint64_t period);

struct pf_ring {
	int fd;
	void *map;       /* metadata page + data pages */
	size_t map_len;
	uint32_t stack;  /* bytes of user stack copied per sample, 0: none */
};

/* Stack bytes the kernel copies per ring sample. */
#define PF_STACK_COPY 16384
/* Stack bytes copied per sample by the kernel-mode rings (kcpu.c, the
 * fault rings): 16 KiB, so that a system call under stdio's 8 KiB buffer
 * (fprintf to stderr: buffered_vfprintf) reaches main (at 8 KiB, a third
 * of a program's time in such writes lost its callers); a 256 KiB ring
 * holds fifteen. */
#define PF_KSTACK_COPY 16384
/* A record's room, for pf_drain's buffer. */
#define PF_REC_MAX (PF_STACK_COPY + 256)

/* Open a ring-buffer event on thread tid, copying `stack` bytes of its
 * stack per sample (0: registers only), counted and sampled in kernel mode
 * only if kernel_only.  0 or -errno. */
int pf_open_ring(struct pf_ring *r, int tid, uint32_t type, uint64_t config, uint64_t period,
		 uint32_t stack, int kernel_only);
void pf_close_ring(struct pf_ring *r);
/* Stop an event counting (its records stay readable). */
void pf_disable(int fd);

/*
 * Each sample record waiting in the ring: fn(arg, tid, count, ip, sp, bp,
 * stack, stack_len) (stack NULL without a copy), each copied into rec
 * (PF_REC_MAX bytes) first; those written before offset `from`, or from
 * offset `to` on, are passed over.  Returns the records seen.  One consumer a
 * ring (the watcher, or for a thread's kernel-mode CPU samples the thread
 * itself), async-signal-safe.
 */
typedef void pf_sample_fn(void *arg, uint32_t tid, uint64_t count, uint64_t ip, uint64_t sp,
			  uint64_t bp, const void *stack, size_t len);
int pf_drain(struct pf_ring *r, uint8_t *rec, uint64_t from, uint64_t to, pf_sample_fn *fn,
	     void *arg);
/* Where the kernel writes r's next record: records from before it have
 * offsets below it (pf_drain's from). */
uint64_t pf_head(const struct pf_ring *r);
/* Bytes of records waiting in r, and r's size. */
uint64_t pf_waiting(const struct pf_ring *r);
uint64_t pf_room(const struct pf_ring *r);

#endif
