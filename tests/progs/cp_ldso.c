/* cp_ldso PLUGIN: dlopen the plugin (tests/progs/cp_ldso_plug.c), call it,
 * dlclose it, five times; prints "done".  For 50-cp-cpu.t, built without
 * PIE and run as the loader's program (ld.so ./cp_ldso): the plugin,
 * linked at a fixed address, then has a base of 0, as AT_BASE does, and
 * was taken for the loader, a module no dlclose unloads. */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	for (int i = 0; i < 5; i++) {
		void *h = dlopen(argc > 1 ? argv[1] : "", RTLD_NOW);
		int (*f)(int);

		if (!h) {
			fprintf(stderr, "%s\n", dlerror());
			return 1;
		}
		f = (int (*)(int))dlsym(h, "plug");
		if (!f || f(1) != 4)
			return 3;
		dlclose(h);
	}
	puts("done");
	return 0;
}
