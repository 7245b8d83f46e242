/*
 * arena.c - owns the monitor's memory (arena_*): anonymous mappings and a
 * chunked bump allocator over them.  Nothing here calls malloc.
 */
#include <errno.h>
#include <stdint.h>
#include <sys/mman.h>

#include "arena.h"

#define ARENA_CHUNK (1u << 20)

struct arena_chunk {
	struct arena_chunk *next;
	size_t size; /* of the whole mapping */
};

void *arena_map(size_t n)
{
	void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

static int arena_no_populate; /* the kernel said EINVAL once */

void arena_populate(void *p, size_t n)
{
	if (!__atomic_load_n(&arena_no_populate, __ATOMIC_RELAXED) &&
	    madvise(p, n, MADV_POPULATE_WRITE) < 0 && errno == EINVAL)
		__atomic_store_n(&arena_no_populate, 1, __ATOMIC_RELAXED);
}

void arena_discard(void *p, size_t n)
{
	madvise(p, n, MADV_DONTNEED);
}

void arena_unmap(void *p, size_t n)
{
	if (p)
		munmap(p, n);
}

#define HUGE_PAGE (2u << 20)

void *arena_map_big(size_t n)
{
	char *p, *q;
	size_t lead;

	if (n < HUGE_PAGE || n % HUGE_PAGE)
		return arena_map(n);
	/* Over-map by one huge page and trim, for an aligned range. */
	p = arena_map(n + HUGE_PAGE);
	if (!p)
		return NULL;
	q = (char *)(((uintptr_t)p + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1));
	lead = (size_t)(q - p);
	if (lead)
		munmap(p, lead);
	munmap(q + n, HUGE_PAGE - lead);
	madvise(q, n, MADV_HUGEPAGE); /* a hint: fine if refused */
	return q;
}

void *arena_alloc(struct arena *a, size_t n)
{
	struct arena_chunk *c;
	size_t size;
	void *p;

	n = (n + 15) & ~(size_t)15;
	if (a->head && (size_t)(a->end - a->cur) >= n) {
		p = a->cur;
		a->cur += n;
		return p;
	}
	size = ARENA_CHUNK;
	if (n + 64 > size)
		size = (n + 64 + 4095) & ~(size_t)4095;
	c = a->map ? a->map(size) : arena_map(size);
	if (!c)
		return NULL;
	c->size = size;
	c->next = a->head;
	a->head = c;
	a->cur = (char *)c + 64; /* header, rounded to a cache line */
	a->end = (char *)c + size;
	p = a->cur;
	a->cur += n;
	return p;
}

void arena_release(struct arena *a)
{
	struct arena_chunk *c = a->head, *next;

	while (c) {
		next = c->next;
		if (a->unmap)
			a->unmap(c, c->size);
		else
			munmap(c, c->size);
		c = next;
	}
	a->head = NULL;
	a->cur = a->end = NULL;
}
