/* cp_gprof: built with gcc -pg, whose start-up (__monstartup) has glibc's
 * profil set SIGPROF's action by its own internal sigaction; a() and b()
 * then spin the same number of rounds (argument: rounds, default 100),
 * about half the CPU time each, for gprof's histogram and for cpprof.
 * With a second argument "off": then moncontrol(0), which puts back the
 * action profil found; prints SIGPROF's action as the program reads it,
 * and raises SIGPROF, whose default ends the program. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern void moncontrol(int mode);

__attribute__((noinline)) static double a(long n)
{
	volatile double x = 0;
	for (long i = 0; i < n; i++)
		x += i * 0.5;
	return x;
}

__attribute__((noinline)) static double b(long n)
{
	volatile double x = 0;
	for (long i = 0; i < n; i++)
		x += i * 0.25;
	return x;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 100;
	double s = 0;

	for (int i = 0; i < rounds; i++)
		s += a(1000000);
	for (int i = 0; i < rounds; i++)
		s += b(1000000);
	printf("%g\n", s);
	if (argc > 2 && !strcmp(argv[2], "off")) {
		struct sigaction o;

		moncontrol(0);
		sigaction(SIGPROF, NULL, &o);
		printf("SIGPROF: %s\n", o.sa_handler == SIG_DFL ? "default" : "other");
		fflush(stdout);
		raise(SIGPROF);
		printf("survived\n");
	}
	return 0;
}
