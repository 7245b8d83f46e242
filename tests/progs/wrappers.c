/*
 * Allocator wrappers, for mprof's -alloc-fn (tests/e2e/33-options.t):
 * parse() keeps 10 x (an array of 100 pointers, 800 bytes, and 100
 * xstrdup'd strings of 15 bytes), load() 10 x 5000 bytes, all through
 * xmalloc.  Built -O0: every call a call.
 */
#include <stdlib.h>
#include <string.h>

void *xmalloc(size_t n)
{
	void *p = malloc(n);

	if (!p)
		abort();
	return p;
}

char *xstrdup(const char *s)
{
	size_t n = strlen(s) + 1;

	return memcpy(xmalloc(n), s, n);
}

void *parse(int k)
{
	void **v = xmalloc((size_t)k * sizeof *v);

	for (int i = 0; i < k; i++)
		v[i] = xstrdup("some text here");
	return v;
}

void *load(int k)
{
	return xmalloc((size_t)k * 100);
}

int main(void)
{
	for (int i = 0; i < 10; i++) {
		parse(100);
		load(50);
	}
	return 0;
}
