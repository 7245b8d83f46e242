/*
 * tests/e2e/95-exit-signal.t: a program that ends with _exit(7) while a
 * timer it set is about to fire (SIGALRM, whose default kills).  Bare,
 * it is gone long before; under a collector that saves at _exit, the
 * timer fires during the save, which must not end the process with
 * the signal (the status would be 142, not 7) nor leave the file
 * unwritten.  20000 allocations from 40 call depths give the monitor
 * something to write.
 */
#include <stdlib.h>
#include <sys/time.h>
#include <unistd.h>

static void *leaf(int d, int k)
{
	return d ? leaf(d - 1, k) : malloc(16 + (size_t)(k % 7));
}

int main(void)
{
	struct itimerval it = { { 0, 0 }, { 0, 200 } }; /* 200 us, once */

	for (int k = 0; k < 20000; k++)
		leaf(k % 40, k);
	setitimer(ITIMER_REAL, &it, NULL);
	_exit(7);
}
