/*
 * sample_reuse.c - blocks the sampled monitor meets again and again at one
 * address (tests/e2e/97-sample.t).
 *
 *   reuse N SIZE  N times: a block of SIZE bytes, touched, freed at once
 *                 (glibc gives the same address back each time); every
 *                 one a temporary
 *   apart N       N times: 100 blocks of 32 bytes, a block of 1 MiB, the
 *                 100 freed, then the big one: no temporary at all
 *   fail N        N times: a block of 100 bytes, freed, then a malloc of
 *                 2^46 bytes, which fails
 */
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	int n = argc > 2 ? atoi(argv[2]) : 0;

	if (argc > 3 && !strcmp(argv[1], "reuse")) {
		size_t size = strtoul(argv[3], NULL, 10);

		for (int i = 0; i < n; i++) {
			char *p = malloc(size);
			p[0] = 1;
			free(p);
		}
	} else if (argc > 2 && !strcmp(argv[1], "apart")) {
		void *small[100];

		for (int r = 0; r < n; r++) {
			for (int i = 0; i < 100; i++)
				small[i] = malloc(32);
			char *big = malloc(1 << 20);
			big[0] = 1;
			for (int i = 0; i < 100; i++)
				free(small[i]);
			free(big);
		}
	} else if (argc > 2 && !strcmp(argv[1], "fail")) {
		for (int i = 0; i < n; i++) {
			char *volatile p = malloc(100);
			free(p);
			p = malloc((size_t)1 << 46);
			if (p)
				return 3; /* this machine has it: not the test's case */
		}
	} else {
		return 2;
	}
	return 0;
}
