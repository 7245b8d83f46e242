/* rt_realloc.c - calloc, realloc and reallocarray with exact figures:
 * realloc is the free of the old block plus the allocation of the new one.
 *   allocs: calloc 80, realloc(NULL) 50, realloc 500, reallocarray(NULL) 100,
 *           reallocarray 200, malloc 10              -> 6 allocs, 940 bytes
 *   frees:  50 (moved), 500 (realloc to 0), 100 (moved), 200, 80, 10
 *                                                    -> 6 frees, 940 bytes
 * Overflowing calloc/reallocarray and a failed realloc record nothing. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* volatile: the compiler must not see (and warn about) the overflow. */
static volatile size_t huge = SIZE_MAX / 2;

int main(void)
{
	int bad = 0;
	char *c = calloc(10, 8);
	char *p = realloc(NULL, 50);
	char *q, *r, *s;

	if (!c || !p || c[79])
		return 1;
	memset(p, 1, 50);
	p = realloc(p, 500);
	if (!p || p[49] != 1)
		return 2;
	if (realloc(p, 0) != NULL) /* glibc: frees p */
		return 3;
	q = reallocarray(NULL, 4, 25);
	q = reallocarray(q, 8, 25);
	if (!q)
		return 4;
	errno = 0;
	if (calloc(huge, 4) || errno != ENOMEM)
		bad = 5;
	errno = 0;
	if (reallocarray(q, huge, 4) || errno != ENOMEM)
		bad = 6;
	r = malloc(10);
	errno = 0;
	s = realloc(r, huge / 2); /* fails: r is untouched */
	if (s || errno != ENOMEM)
		bad = 7;
	free(q);
	free(c);
	free(r);
	return bad;
}
