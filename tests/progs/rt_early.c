/* rt_early.c - allocations before main (a constructor) and after it (an
 * atexit handler, a destructor) are counted:
 *   bin 11: 3 allocs (constructor), 1 free (atexit handler)
 *   bin 13: 2 allocs (atexit handler)
 *   bin 17: 1 alloc (main) */
#include <stdlib.h>

static void *early[3];
static void *volatile sink;

__attribute__((constructor)) static void before_main(void)
{
	for (int i = 0; i < 3; i++)
		early[i] = malloc(11);
}

static void at_exit(void)
{
	free(early[0]);
	sink = malloc(13);
	sink = malloc(13);
}

int main(void)
{
	atexit(at_exit);
	return malloc(17) ? 0 : 1;
}
