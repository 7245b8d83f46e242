/*
 * temps.c - temporary allocations (heaptrack's: freed by the thread that
 * made them with no other allocation of that thread between), for issue
 * 24: loop makes 1000 of 24 bytes; pairs makes two objects and frees the
 * first (not temporary: the second came between), then the second (the
 * last made: temporary); kept is never freed.  In all: 1001 temporary
 * allocations of 24,040 bytes.
 */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) static char *make(size_t n)
{
	char *p = malloc(n);

	__asm__ volatile("" : "+r"(p) : : "memory");
	return p;
}

__attribute__((noinline)) static void loop(void)
{
	for (int i = 0; i < 1000; i++) {
		char *p = malloc(24);

		__asm__ volatile("" : "+r"(p) : : "memory");
		p[0] = 1;
		free(p);
	}
}

__attribute__((noinline)) static void pairs(void)
{
	char *a = make(30), *b = make(40);

	free(a);
	free(b);
}

int main(void)
{
	char *kept = make(50);

	loop();
	pairs();
	kept[0] = 1;
	return kept[0] == 1 ? 0 : 1;
}
