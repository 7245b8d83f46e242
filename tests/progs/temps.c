/*
 * temps.c - temporary allocations (heaptrack's: freed by the thread that
 * made them as its very next event, a realloc's free of its old block
 * too), for issue 24: loop makes 1000 of 24 bytes; pairs makes two objects
 * and frees the first (not temporary: the second came between), then the
 * second (not temporary either: the first's free came between); grow
 * mallocs 10 bytes, reallocs them to 100, then 1000, and frees them (three
 * temporaries: 10, 100 and 1000 bytes); kept is never freed.  In all:
 * 1003 temporary allocations of 25,110 bytes.
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

__attribute__((noinline)) static void grow(void)
{
	char *p = malloc(10), *q;

	__asm__ volatile("" : "+r"(p) : : "memory");
	q = realloc(p, 100);
	__asm__ volatile("" : "+r"(q) : : "memory");
	p = realloc(q, 1000);
	__asm__ volatile("" : "+r"(p) : : "memory");
	free(p);
}

int main(void)
{
	char *kept = make(50);

	loop();
	pairs();
	grow();
	kept[0] = 1;
	return kept[0] == 1 ? 0 : 1;
}
