/* rt_exit.c - the monitor changes neither output nor exit status: prints
 * lines to stdout and stderr, allocates, and exits with status argv[1]
 * (default 3), after changing directory to argv[2] if given (the profile
 * still goes to the directory the program started in). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	for (int i = 0; i < 5; i++) {
		char *s = malloc(32);
		snprintf(s, 32, "line %d", i);
		puts(s);
		free(s);
	}
	fprintf(stderr, "to stderr\n");
	if (argc > 2 && chdir(argv[2]) != 0)
		return 99;
	exit(argc > 1 ? atoi(argv[1]) : 3);
}
