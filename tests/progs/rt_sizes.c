/*
 * rt_sizes.c - the address map keeps every object's exact size and stack,
 * whatever the size and however close objects lie.
 *
 *   sizes: one object of each size in a list that crosses the map's
 *          encodings (below 255 bytes in the slot; 255 and up in the next
 *          slots, up to beyond 2^32), frees all but three, and reallocs
 *          one through several sizes.
 *   dense: 20000 objects of 9..48 bytes (adjacent in memory: 16 or 32
 *          bytes apart), freed in an interleaved order, 1 in 10 kept;
 *          says on stderr how many were allocated 16 bytes after or
 *          before the one allocated just before.
 *   tiny:  the same with 20000 objects of 1..8 bytes, which allocators
 *          other than glibc's put 8 bytes apart (tcmalloc, jemalloc: at
 *          addresses 8 past a multiple of 16); says on stderr how many
 *          are 8 past a multiple of 16.
 *
 * Prints what the profile must say: "allocs frees bytes freed".
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t allocs, frees, bytes, freed;

static void *get(size_t n)
{
	void *p = malloc(n);

	if (!p) {
		fprintf(stderr, "malloc(%zu) failed\n", n);
		exit(1);
	}
	allocs++;
	bytes += n;
	return p;
}

static void put(void *p, size_t n)
{
	free(p);
	frees++;
	freed += n;
}

static void sizes(void)
{
	static const uint64_t s[] = {
		0, 1, 15, 16, 17, 31, 32, 33, 47, 48, 200, 253, 254, 255, 256, 257, 511, 4095,
		4096, 65535, 131072, 1 << 20, (1ull << 31) - 1, (1ull << 31) + 7, (1ull << 32) + 3,
	};
	enum { N = sizeof s / sizeof s[0] };
	void *p[N];
	size_t sz, old;
	char *r;
	int i;

	for (i = 0; i < N; i++)
		p[i] = get(s[i]);
	/* Keep 254, 255 and 2^32 + 3 (never touched: only mapped). */
	for (i = N - 1; i >= 0; i--)
		if (s[i] != 254 && s[i] != 255 && s[i] != (1ull << 32) + 3)
			put(p[i], s[i]);
	/* realloc = a free of the old size, an allocation of the new. */
	r = get(100);
	memset(r, 1, 100);
	for (old = 100, sz = 300; sz <= 300000; old = sz, sz *= 10) {
		char *q = realloc(r, sz);
		if (!q)
			exit(1);
		frees++, freed += old;
		allocs++, bytes += sz;
		r = q;
	}
	put(r, old);
}

/* Free p[0..count) (sizes n) in an interleaved order: the odd ones, and
 * the even ones but 1 in 10 (kept). */
static void put_most(void **p, const size_t *n, int count)
{
	int i;

	for (i = 0; i < count; i += 2)
		if (i % 10)
			put(p[i], n[i]);
	for (i = 1; i < count; i += 2)
		put(p[i], n[i]);
}

static void dense(void)
{
	enum { N = 20000 };
	static void *p[N];
	static size_t n[N];
	int i;

	int close = 0;

	for (i = 0; i < N; i++) {
		n[i] = 9 + (size_t)(i * 7) % 40; /* 9..48 */
		p[i] = get(n[i]);
		memset(p[i], 0, n[i]);
		if (i && ((char *)p[i] - (char *)p[i - 1] == 16 || (char *)p[i - 1] - (char *)p[i] == 16))
			close++;
	}
	fprintf(stderr, "objects 16 bytes apart: %d\n", close);
	put_most(p, n, N);
}

static void tiny(void)
{
	enum { N = 20000 };
	static void *p[N];
	static size_t n[N];
	int i, odd = 0;

	for (i = 0; i < N; i++) {
		n[i] = 1 + (size_t)(i * 3) % 8; /* 1..8 */
		p[i] = get(n[i]);
		memset(p[i], 0, n[i]);
		odd += ((uintptr_t)p[i] & 15) == 8;
	}
	fprintf(stderr, "objects 8 past a multiple of 16: %d\n", odd);
	put_most(p, n, N);
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "sizes"))
		sizes();
	else if (argc > 1 && !strcmp(argv[1], "dense"))
		dense();
	else if (argc > 1 && !strcmp(argv[1], "tiny"))
		tiny();
	else
		return 2;
	/* Unbuffered: stdio's buffer would be one allocation more. */
	setvbuf(stdout, NULL, _IONBF, 0);
	printf("%llu %llu %llu %llu\n", (unsigned long long)allocs, (unsigned long long)frees,
	       (unsigned long long)bytes, (unsigned long long)freed);
	return 0;
}
