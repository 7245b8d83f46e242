/*
 * cf_plugins.c - dlopen ./cf_plug1.so, call it, dlclose; then the same
 * with ./cf_plug2.so (another library, usually mapped where the first
 * was).  Both are tests/progs/cf_plug.c (-DPLUG=1, 2).  Prints
 * "name count", and "same_address 0|1" on stderr.
 */
#include <dlfcn.h>
#include <stdio.h>

int main(void)
{
	const char *libs[] = { "./cf_plug1.so", "./cf_plug2.so" };
	const char *entry[] = { "plug1_entry", "plug2_entry" };
	void *at[2];

	for (int i = 0; i < 2; i++) {
		void *h = dlopen(libs[i], RTLD_NOW);
		long (*e)(int);
		if (!h) {
			printf("%s\n", dlerror());
			return 1;
		}
		e = (long (*)(int))dlsym(h, entry[i]);
		at[i] = (void *)e;
		printf("%s %ld\n", entry[i], e(100000));
		dlclose(h);
	}
	/* On stderr: where the loader puts them is not the program's output. */
	fprintf(stderr, "same_address %d\n", at[0] == at[1]);
	return 0;
}
