/* cp_dl PLUGIN: dlopen the plugin, burn 0.2 s in it, dlclose it, twice
 * over, while a second thread keeps burning CPU (so samples land while the
 * plugin is unloaded). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

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
	return dlclose(h);
}

int main(int argc, char **argv)
{
	pthread_t t;
	int rc = 0;

	pthread_create(&t, NULL, spin, NULL);
	for (int i = 0; i < 2 && rc == 0; i++)
		rc = call_plugin(argv[1]);
	stop = 1;
	pthread_join(t, NULL);
	printf("%s\n", rc ? dlerror() : "ok");
	return rc ? 1 : 0;
}
