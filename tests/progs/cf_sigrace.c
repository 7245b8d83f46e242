/* A timer signal every 10 us whose handler runs instrumented code, while
 * the main path recurses 1000 deep: handlers land inside the entry hook's
 * stores often.  Prints the recursion's own call count. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>
static volatile long n_rec, n_leaf;
__attribute__((noinline)) void leaf(int i) { n_leaf++; __asm__ volatile("" ::"r"(i)); }
__attribute__((noinline)) void hwork(int d)
{
	if (d)
		hwork(d - 1);
	else
		leaf(d);
}
void on_alrm(int sig) { (void)sig; hwork(3); }
__attribute__((noinline)) long rec(int d)
{
	n_rec++;
	if (d == 0) {
		long s = 0;
		for (int i = 0; i < 50; i++) {
			leaf(i);
			s += i;
		}
		return s;
	}
	long r = rec(d - 1) + 1;
	__asm__ volatile("" ::"r"(r));
	return r;
}
int main(int argc, char **argv)
{
	int k = argc > 1 ? atoi(argv[1]) : 1000, d = argc > 2 ? atoi(argv[2]) : 1000;
	struct sigaction sa = { 0 };
	struct itimerval it = { { 0, 10 }, { 0, 10 } }, off = { { 0, 0 }, { 0, 0 } };
	long t = 0;
	sa.sa_handler = on_alrm;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	for (int i = 0; i < k; i++)
		t += rec(d);
	setitimer(ITIMER_REAL, &off, NULL);
	printf("sum %ld\nrec %ld\n", t, n_rec);
	return 0;
}
