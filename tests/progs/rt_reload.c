/*
 * rt_reload.c PLUGIN [squeeze]: dlopen the plugin, keep an object it
 * allocates (1000 bytes, then 1001), dlclose it, twice over.  squeeze:
 * after each dlclose, map the last page of the plugin's old place, so that
 * it comes back just below, over the rest of its old place, unless the
 * monitor holds that (squeeze.h).  Prints "ok".
 */
#define _GNU_SOURCE /* dl_iterate_phdr, MAP_FIXED_NOREPLACE */
#include <dlfcn.h>
#include <stdio.h>

#include "squeeze.h"

static void *kept[2];
int main(int argc, char **argv)
{
	for (int i = 0; i < 2; i++) {
		void *h = dlopen(argv[1], RTLD_NOW);
		void *(*f)(size_t);

		if (!h || !(f = (void *(*)(size_t))dlsym(h, "plug_alloc")))
			return 1;
		kept[i] = f(1000 + (size_t)i);
		squeeze_note(argv[1]);
		dlclose(h);
		if (argc > 2 && !strcmp(argv[2], "squeeze"))
			squeeze();
	}
	printf("ok\n");
	return 0;
}
