/* sample_frees.c - 4M objects of 32 bytes, 9 in 10 freed at once, the
 * tenth kept: 97-sample.t checks the sampled header's estimate of the
 * frees against the exact count (3,600,000). */
#include <stdlib.h>

int main(void)
{
	static void *keep[400000];
	size_t k = 0;

	for (int i = 0; i < 4000000; i++) {
		void *p = malloc(32);

		if (i % 10 == 0)
			keep[k++] = p;
		else
			free(p);
	}
	return keep[0] == NULL;
}
