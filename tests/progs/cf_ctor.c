/*
 * cf_ctor.c - a program linked with cf_ctorlib.so (tests/e2e/94-cf-early.t):
 * it calls the library once more, then prints the library's own counts
 * of its calls, the constructor's included.
 */
#include <stdio.h>

extern int ctor_walk_calls, ctor_leaf_calls;
void ctor_walk(int n);

int main(void)
{
	ctor_walk(3);
	printf("ctor_walk %d\nctor_leaf %d\n", ctor_walk_calls, ctor_leaf_calls);
	return 0;
}
