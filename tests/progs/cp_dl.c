/* cp_dl PLUGIN [squeeze]: dlopen the plugin, burn 0.2 s in it, dlclose it,
 * twice over, while a second thread keeps burning CPU (so samples land
 * while the plugin is unloaded).  squeeze: after each dlclose, map the
 * last page of the plugin's old place, so that it comes back just below,
 * over the rest of its old place, unless the profiler holds that. */
#define _GNU_SOURCE /* dl_iterate_phdr, MAP_FIXED_NOREPLACE */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "squeeze.h"

static volatile int stop;
static volatile uint64_t sink;

__attribute__((noinline)) static void *spin(void *arg)
{
	uint64_t x = 1;
	while (!stop)
		for (int i = 0; i < 10000; i++)
			x = x * 6364136223846793005ull + 1;
	sink = x;
	return arg;
}

__attribute__((noinline)) static int call_plugin(const char *path)
{
	void *h = dlopen(path, RTLD_NOW);
	uint64_t (*burn)(uint64_t);

	if (!h)
		return -1;
	burn = (uint64_t(*)(uint64_t))dlsym(h, "plugin_burn");
	if (!burn)
		return -1;
	sink += burn(200000000);
	squeeze_note(path);
	return dlclose(h);
}

int main(int argc, char **argv)
{
	pthread_t t;
	int rc = 0;

	pthread_create(&t, NULL, spin, NULL);
	for (int i = 0; i < 2 && rc == 0; i++) {
		rc = call_plugin(argv[1]);
		if (argc > 2 && !strcmp(argv[2], "squeeze"))
			squeeze();
	}
	stop = 1;
	pthread_join(t, NULL);
	printf("%s\n", rc ? dlerror() : "ok");
	return rc ? 1 : 0;
}
