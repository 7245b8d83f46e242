/*
 * rt_scribble.c - a program that wrecks its own keep (lib/format/keepfmt.h), as
 * a program's wild writes might, and then dies by SIGKILL: the launcher
 * that reads the keep must never crash or hang, and a file it writes must
 * be one the tools read or refuse in one line (tests/e2e/96-keep.t).
 *
 *   rt_scribble MODE SEED
 *     all     every byte of the tables (the keep after its header) random
 *     flip    4000 random words of the tables: half random values, half
 *             addresses inside the keep (pointers that follow, to the
 *             wrong place)
 *     header  the header random too
 *
 * Before that it allocates (mprof), spins (cpprof) and calls functions
 * (cfprof, built with -finstrument-functions), so that the tables have
 * something in them.
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "keepfmt.h"

static uint64_t rng;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

__attribute__((noinline)) static long work(int i)
{
	long s = 0;

	for (int k = 0; k < 20000; k++)
		s += (k ^ i) % 7;
	return s;
}

__attribute__((noinline)) static void *make(int i)
{
	return malloc(16 + (size_t)(i % 50) * 8);
}

/* The keep, from /proc/self/maps: the mapping of the launcher's memfd. */
static struct keep_head *find_keep(void)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");
	unsigned long lo = 0;

	if (!f)
		return NULL;
	while (fgets(line, sizeof line, f))
		if (strstr(line, "profile-keep") && sscanf(line, "%lx-", &lo) == 1)
			break;
		else
			lo = 0;
	fclose(f);
	return (struct keep_head *)lo;
}

int main(int argc, char **argv)
{
	struct keep_head *h;
	uint64_t used;
	unsigned char *b;
	long s = 0;

	if (argc < 3)
		return 2;
	rng = strtoull(argv[2], NULL, 10) * 2654435761u + 1;
	for (int i = 0; i < 3000; i++) {
		void *p = make(i);
		if (i % 3)
			free(p);
		s += work(i);
	}
	printf("worked %ld\n", s);
	fflush(stdout);
	if (!(h = find_keep())) {
		printf("no keep\n");
		return 1;
	}
	used = h->used;
	b = (unsigned char *)h;
	if (!strcmp(argv[1], "all") || !strcmp(argv[1], "header")) {
		uint64_t from = strcmp(argv[1], "header") ? KEEP_HEAD : 0;
		for (uint64_t i = from; i + 8 <= used; i += 8) {
			uint64_t v = next();
			memcpy(b + i, &v, 8);
		}
	} else {
		for (int k = 0; k < 4000; k++) {
			uint64_t at = KEEP_HEAD + next() % ((used - KEEP_HEAD) / 8) * 8;
			uint64_t v = k & 1 ? next() : (uint64_t)(uintptr_t)b + next() % used;
			memcpy(b + at, &v, 8);
		}
	}
	kill(getpid(), SIGKILL);
	return 3;
}
