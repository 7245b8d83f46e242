/* inl.c - built with -O2: the allocating helper is inlined into its caller,
 * and the stack must still name it, marked as inline. */
#include <stdlib.h>

void *keep[8];

static inline __attribute__((always_inline)) void *grab(size_t n)
{
	return malloc(n);
}

__attribute__((noinline)) void fill(void)
{
	for (int i = 0; i < 8; i++)
		keep[i] = grab(24);
	__asm__ volatile("" ::: "memory");
}

int main(void)
{
	fill();
	__asm__ volatile("" ::: "memory");
	return 0;
}
