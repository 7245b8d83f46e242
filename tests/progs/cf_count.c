/*
 * cf_count.c - an independent count of calls, to check cfprof against on
 * programs nobody here wrote: -finstrument-functions hooks that only count
 * entries per function (no stack, so nothing a longjmp or a throw can
 * upset), preloaded instead of libcfprof.so.  At exit it writes
 * "OFFSET COUNT" per function to $CF_COUNT_OUT, OFFSET the function's
 * address less the main program's load bias (as `mprof dump` gives
 * addresses less the module's bias).  One thread's worth: the programs it
 * checks are single-threaded.
 */
#define _GNU_SOURCE
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define SLOTS (1 << 16)
#define NOINST __attribute__((no_instrument_function))

static uintptr_t key[SLOTS];
static unsigned long count[SLOTS];

NOINST void __cyg_profile_func_enter(void *fn, void *site)
{
	uintptr_t k = (uintptr_t)fn, i = (k >> 4) & (SLOTS - 1);

	(void)site;
	while (key[i] && key[i] != k)
		i = (i + 1) & (SLOTS - 1);
	key[i] = k;
	count[i]++;
}

NOINST void __cyg_profile_func_exit(void *fn, void *site)
{
	(void)fn;
	(void)site;
}

NOINST static int first(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	*(uintptr_t *)arg = info->dlpi_addr;
	return 1;
}

NOINST __attribute__((destructor)) static void report(void)
{
	const char *path = getenv("CF_COUNT_OUT");
	uintptr_t bias = 0;
	FILE *f;

	if (!path || !(f = fopen(path, "w")))
		return;
	dl_iterate_phdr(first, &bias);
	for (int i = 0; i < SLOTS; i++)
		if (key[i])
			fprintf(f, "%lx %lu\n", (unsigned long)(key[i] - bias), count[i]);
	fclose(f);
}
