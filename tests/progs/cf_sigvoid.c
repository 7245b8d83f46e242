/* A void signal handler that keeps this_fn in a callee-saved register:
 * gcc and clang pop it and jump to the exit hook, whose frame address is
 * then the handler's own CFA, not the one the enter hook saw. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
static volatile long n_work, n_deep;
static volatile unsigned long sink;
__attribute__((noinline)) void work(void) { n_work++; }
void on_usr1(int sig) { (void)sig; work(); work(); }
__attribute__((noinline)) void deep(int d)
{
	n_deep++;
	if (d) {
		deep(d - 1);
		return;
	}
	raise(SIGUSR1);
	for (unsigned long i = 0; i < 300000000ul; i++)
		sink = sink * 31 + i;
}
int main(void)
{
	signal(SIGUSR1, on_usr1);
	deep(2000);
	printf("deep %ld\nwork %ld\n", n_deep, n_work);
	return 0;
}
