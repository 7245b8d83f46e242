/* qsortcb.c - allocations made inside a qsort comparator: the stack runs
 * through libc (no frame pointers) back to main. */
#include <stdlib.h>

static int calls;
void *kept;

__attribute__((noinline)) static int cmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	if (calls++ < 7)
		free(malloc(48)); /* freed */
	if (calls == 8)
		kept = malloc(1000); /* kept */
	return (x > y) - (x < y);
}

int main(void)
{
	int v[64];
	for (int i = 0; i < 64; i++)
		v[i] = (i * 37) % 64;
	qsort(v, 64, sizeof(v[0]), cmp);
	return v[0];
}
