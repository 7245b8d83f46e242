/* tests/e2e/61-corpus-more.t: a setuid-root program run by an
 * unprivileged user.  The loader runs it in secure-execution mode and
 * ignores LD_PRELOAD, so no collector enters it: it must run as it does
 * bare.  It says whose it runs as, so the test can see the setuid bit
 * took effect. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(void)
{
	long sum = 0;

	for (int i = 0; i < 1000; i++) {
		int *p = malloc(64 + (size_t)i);
		if (!p)
			return 1;
		p[0] = i;
		sum += p[0];
		free(p);
	}
	printf("euid %d ruid %d sum %ld\n", (int)geteuid(), (int)getuid(), sum);
	return 0;
}
