/*
 * cp_vdso.c - spends its time in clock_gettime, which runs in the vDSO (a
 * module with no file): cpprof must still name the function there.
 * Runs for about 0.3 s of CPU time.
 */
#include <stdio.h>
#include <time.h>

__attribute__((noinline)) static long spin(void)
{
	struct timespec t, end;
	long s = 0;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &end);
	end.tv_nsec += 300000000;
	if (end.tv_nsec >= 1000000000) {
		end.tv_sec++;
		end.tv_nsec -= 1000000000;
	}
	for (;;) {
		for (int i = 0; i < 100000; i++) {
			clock_gettime(CLOCK_MONOTONIC, &t);
			s += t.tv_nsec;
		}
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
		if (t.tv_sec > end.tv_sec || (t.tv_sec == end.tv_sec && t.tv_nsec >= end.tv_nsec))
			return s;
	}
}

int main(void)
{
	printf("%ld\n", spin() & 1);
	return 0;
}
