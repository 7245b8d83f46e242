/* cp_gprof: built with gcc -pg, whose start-up (__monstartup) has glibc's
 * profil set SIGPROF's action by its own internal sigaction; a() and b()
 * then spin the same number of rounds (argument: rounds, default 100),
 * about half the CPU time each, for gprof's histogram and for cpprof. */
#include <stdio.h>
#include <stdlib.h>

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
	return 0;
}
