/*
 * arena.h - memory for the monitor's own tables, straight from mmap(2).
 *
 * The monitor never takes memory from the allocator it wraps.  Page-sized
 * mappings come from arena_map(); small records from a bump arena that is
 * released all at once (mprof_restart).
 */
#ifndef ARENA_H
#define ARENA_H

#include <stddef.h>

/* Zeroed read-write pages, or NULL (errno set). */
void *arena_map(size_t n);
void arena_unmap(void *p, size_t n);
/*
 * Like arena_map, for a big table touched at random: a multiple of 2 MiB
 * gets an aligned range with transparent huge pages requested, so lookups
 * miss the TLB far less.  Release with arena_unmap.
 */
void *arena_map_big(size_t n);

/*
 * Page faults.  A page's first touch costs a fault (1.5 us on the bench's
 * VM); a read first maps the shared zero page and the first write then
 * copies it: two faults and a copy.  A table that will be written all over
 * is cheaper populated at once, and a record about to be read then written
 * is cheaper written first (python's start under the monitor: 390 fewer
 * faults, 7% less time).
 */
/* Fault [p, p + n) in for writing, in one call (MADV_POPULATE_WRITE;
 * nothing on a kernel without it, before Linux 5.14). */
void arena_populate(void *p, size_t n);
/* Give the memory of [p, p + n) back, leaving it mapped: it reads as
 * zeros from then on (MADV_DONTNEED), for a table a lock-free reader may
 * still be reading, to whom zeros mean "not there". */
void arena_discard(void *p, size_t n);

struct arena_chunk;
struct arena {
	struct arena_chunk *head; /* newest chunk first */
	char *cur, *end;          /* free space in head */
	/* Where chunks come from and go back: arena_map / arena_unmap when
	 * NULL (a table the keep must hold sets keep_map, keep_unmap). */
	void *(*map)(size_t n);
	void (*unmap)(void *p, size_t n);
};

/* n bytes, 16-aligned, zeroed, or NULL when mmap fails. */
void *arena_alloc(struct arena *a, size_t n);
/* Give every chunk back; the arena is empty and usable again. */
void arena_release(struct arena *a);

#endif
