/* report.c - allocations of a known shape for the HTML report's test
 * (tests/e2e/84-report.t): main -> big_alloc keeps 3 x 1000 bytes;
 * main -> branch makes 7 x 10 bytes it frees and calls leaf_alloc, which
 * keeps 5 x 200 bytes.  Kept: 4000 bytes; allocations: 15. */
#include <stdlib.h>

static void *keep[8];
static int nkeep;

void leaf_alloc(void)
{
	for (int i = 0; i < 5; i++)
		keep[nkeep++] = malloc(200);
}

void branch(void)
{
	for (int i = 0; i < 7; i++)
		free(malloc(10));
	leaf_alloc();
}

void big_alloc(void)
{
	for (int i = 0; i < 3; i++)
		keep[nkeep++] = malloc(1000);
}

int main(void)
{
	big_alloc();
	branch();
	return keep[0] == NULL;
}
