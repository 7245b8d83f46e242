/*
 * phases.c - a heap in three phases, for the timeline (issue 24): 10 MiB
 * live (phase_one, ten blocks of 1 MiB), then 30 MiB (phase_two adds
 * twenty), then 5 MiB (all but five of phase_one's freed); between the
 * phases, 200 ms of churn (pairs of 100 bytes, churn) and sleep, so that
 * the plateaus last.  Peak: 30 MiB and one churn block, 31,457,380 bytes.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MB (1024 * 1024)

static void *held[32];

static void nap(void)
{
	struct timespec ts = { 0, 50000000 };

	nanosleep(&ts, NULL);
}

__attribute__((noinline)) static void *phase_one(void)
{
	void *p = malloc(MB);

	memset(p, 1, MB);
	return p;
}

__attribute__((noinline)) static void *phase_two(void)
{
	void *p = malloc(MB);

	memset(p, 2, MB);
	return p;
}

__attribute__((noinline)) static void churn(void)
{
	for (int i = 0; i < 2000; i++) {
		char *p = malloc(100);

		__asm__ volatile("" : "+r"(p) : : "memory");
		free(p);
	}
}

static void hold(void)
{
	for (int k = 0; k < 4; k++) {
		churn();
		nap();
	}
}

int main(void)
{
	int n = 0;

	for (int i = 0; i < 10; i++)
		held[n++] = phase_one();
	hold();
	for (int i = 0; i < 20; i++)
		held[n++] = phase_two();
	hold();
	for (int i = 5; i < n; i++)
		free(held[i]);
	hold();
	return 0;
}
