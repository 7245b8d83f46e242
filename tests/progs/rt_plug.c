/* rt_plug.c: a plugin for rt_reload.c: allocates in a function of its own. */
#include <stdlib.h>

__attribute__((noinline)) void *plug_alloc(size_t n)
{
	void *p = malloc(n);

	__asm__ volatile("" ::: "memory"); /* no tail call */
	return p;
}
