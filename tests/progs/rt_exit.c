/* rt_exit.c - the monitor changes neither output nor exit status: prints
 * lines to stdout and stderr, allocates, and exits with status 3. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	for (int i = 0; i < 5; i++) {
		char *s = malloc(32);
		snprintf(s, 32, "line %d", i);
		puts(s);
		free(s);
	}
	fprintf(stderr, "to stderr\n");
	exit(argc > 1 ? atoi(argv[1]) : 3);
}
