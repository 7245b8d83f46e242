/* cp_plugin.c: a plugin for cp_dl.c: burns CPU in a function of its own. */
#include <stdint.h>
#include <time.h>

static uint64_t cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + (uint64_t)ts.tv_nsec;
}

__attribute__((noinline)) uint64_t plugin_burn(uint64_t ns)
{
	uint64_t end = cpu_ns() + ns, x = 1;
	do
		for (int i = 0; i < 10000; i++)
			x = x * 6364136223846793005ull + 1;
	while (cpu_ns() < end);
	return x;
}
