/*
 * sample_entries.c - every allocating entry point, with sizes of 40 bytes
 * and more, for the sampled monitor (tests/e2e/97-sample.t): sampled
 * every byte (MPROF_SAMPLE=1) such objects are sampled every time with
 * weight 1 (1 / (1 - e^-40) is 1 to 4e-18), so its profile must be the
 * exact monitor's.  No stdio: the exit status says whether every check
 * held.
 */
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

static void *v[64];

__attribute__((noinline)) static void with_malloc(void)
{
	for (int i = 0; i < 8; i++)
		v[i] = malloc(40 + 8 * (size_t)i);
}

__attribute__((noinline)) static void with_calloc(void)
{
	for (int i = 8; i < 16; i++)
		v[i] = calloc(5, 16 + (size_t)i);
}

__attribute__((noinline)) static void with_realloc(void)
{
	for (int i = 0; i < 8; i++)
		v[i] = realloc(v[i], 300 + (size_t)i); /* moved or grown: a free and an allocation */
	v[16] = realloc(NULL, 77);                      /* a malloc */
	v[17] = reallocarray(NULL, 9, 11);              /* 99 bytes */
	v[17] = reallocarray(v[17], 9, 13);             /* 117 */
}

__attribute__((noinline)) static void with_aligned(void)
{
	v[18] = memalign(64, 100);
	v[19] = valloc(200);
	v[20] = pvalloc(300);
	v[21] = aligned_alloc(128, 256);
	if (posix_memalign(&v[22], 32, 48))
		v[22] = NULL;
}

int main(void)
{
	int bad = 0;

	with_malloc();
	with_calloc();
	with_realloc();
	with_aligned();
	for (int i = 0; i < 23; i++)
		bad |= !v[i];
	for (int i = 0; i < 23; i += 2) { /* the even ones freed, the odd kept */
		free(v[i]);
		v[i] = NULL;
	}
	v[1] = realloc(v[1], 0); /* a free */
	free(NULL);
	return bad;
}
