/* rt_qsort.c - an allocation inside a qsort comparator (the only one of the
 * "x" size class: 3333 bytes): its stack must run from the comparator
 * through libc's qsort, which has no frame pointers, back to main. */
#include <stdlib.h>

static void *kept;

__attribute__((noinline)) static int cmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	if (!kept)
		kept = malloc(3333);
	return (x > y) - (x < y);
}

int main(void)
{
	int v[16];
	for (int i = 0; i < 16; i++)
		v[i] = (i * 7) % 16;
	qsort(v, 16, sizeof v[0], cmp);
	return kept ? 0 : 1;
}
