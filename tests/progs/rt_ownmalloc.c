/*
 * rt_ownmalloc.c - a program with an allocator of its own linked in, as
 * rustup's rustc links jemalloc: its malloc takes every call, libc's too,
 * and the preloaded monitor sees none (96-keep.t).  A bump allocator
 * over a static arena, enough for libc's start and a few calls.
 */
#include <stdio.h>
#include <string.h>

static unsigned char arena[1 << 20] __attribute__((aligned(16)));
static size_t used;

void *malloc(size_t n)
{
	void *p;

	n = (n + 15) & ~(size_t)15;
	if (n > sizeof arena - used)
		return NULL;
	p = arena + used;
	used += n;
	return p;
}

void free(void *p)
{
	(void)p;
}

void *calloc(size_t k, size_t n)
{
	void *p = n && k > (size_t)-1 / n ? NULL : malloc(k * n);

	if (p)
		memset(p, 0, k * n);
	return p;
}

void *realloc(void *old, size_t n)
{
	void *p = malloc(n);

	/* old's block lies below p's, and is at most as long as the gap. */
	if (p && old)
		memmove(p, old, (size_t)((unsigned char *)p - (unsigned char *)old) < n
					? (size_t)((unsigned char *)p - (unsigned char *)old)
					: n);
	return p;
}

int main(void)
{
	char *s = malloc(32);

	strcpy(s, "its own malloc");
	printf("%s\n", s);
	return 3;
}
