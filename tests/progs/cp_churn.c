/* cp_churn N: makes N threads one after another (each joined before the
 * next starts), then prints its resident memory (VmRSS, kB), as a server
 * that makes a thread per request would run for a while. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile unsigned long sink;

static void *run(void *a)
{
	for (int i = 0; i < 1000; i++)
		sink += (unsigned long)i;
	return a;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1;
	char line[256];
	FILE *f;

	for (int i = 0; i < n; i++) {
		pthread_t t;
		if (pthread_create(&t, NULL, run, NULL) != 0)
			return 1;
		pthread_join(t, NULL);
	}
	if (!(f = fopen("/proc/self/status", "r")))
		return 1;
	while (fgets(line, sizeof line, f))
		if (!strncmp(line, "VmRSS:", 6))
			printf("%ld\n", atol(line + 6));
	fclose(f);
	return 0;
}
