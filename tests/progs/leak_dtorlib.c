/* A library that allocates in its constructor and frees all of it in its
 * destructor: nothing of it is kept at exit (memcheck: none in use).
 * The loader runs its destructor after a preloaded monitor's. */
#include <stdlib.h>

static void *held[100];

__attribute__((constructor)) static void dtorlib_init(void)
{
	for (int i = 0; i < 100; i++)
		held[i] = malloc(1000);
}

__attribute__((destructor)) static void dtorlib_fini(void)
{
	for (int i = 0; i < 100; i++)
		free(held[i]);
}

int dtorlib_count(void)
{
	return 100;
}
