/* rt_deep.c - allocations under deep recursion: at depth 300 (all frames
 * kept) and at depth 3000 (the innermost kept, the stack flagged
 * truncated).  Sizes: 3001 at depth 300, 3002 at depth 3000. */
#include <stdlib.h>

static void *keep;

__attribute__((noinline)) static int down(int n, size_t size)
{
	if (n == 0) {
		keep = malloc(size);
		return keep != NULL;
	}
	int r = down(n - 1, size);
	__asm__ volatile("" ::: "memory"); /* no tail call */
	return r;
}

int main(void)
{
	return down(300, 3001) && down(3000, 3002) ? 0 : 1;
}
