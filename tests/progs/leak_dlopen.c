/* leak_dlopen LIB: loads LIB with dlopen and forgets the handle, as a
 * program loading a plugin for its constructors does: the loader's
 * record of it (malloc'd by ld.so) is reachable only through the loader's
 * list of modules.  memcheck: still reachable, nothing lost. */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	void *volatile h;

	if (argc < 2)
		return 2;
	h = dlopen(argv[1], RTLD_NOW);
	if (!h) {
		fprintf(stderr, "%s\n", dlerror());
		return 1;
	}
	h = NULL;
	puts("loaded");
	return 0;
}
