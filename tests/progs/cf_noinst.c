/*
 * cf_noinst.c - a plain program, built WITHOUT -finstrument-functions:
 * `cfprof record` must refuse it in one line (exit 2) that suggests
 * `cpprof record`, without running it (tests/e2e/73-cf-cli.t).  Run, it
 * prints "ran" and exits 0.
 */
#include <stdio.h>

int main(void)
{
	puts("ran");
	return 0;
}
