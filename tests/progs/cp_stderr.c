/*
 * System calls under a large stack frame, for cpprof's kernel-mode rings
 * (tests/e2e/53-cp-perf.t): log_stderr writes lines with fprintf to an
 * unbuffered stderr, each a write under stdio's 8 KiB buffer on the stack
 * (buffered_vfprintf); small_write makes as many writes from a small
 * frame.  Most of the time of both is the kernel's.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

__attribute__((noinline)) static void log_stderr(int n)
{
	for (int i = 0; i < n; i++)
		fprintf(stderr, "line %d\n", i);
}

__attribute__((noinline)) static void small_write(int n)
{
	char b[64];

	memset(b, 'y', sizeof b);
	for (int i = 0; i < n; i++)
		if (write(2, b, sizeof b) < 0)
			return;
}

int main(void)
{
	log_stderr(300000);
	small_write(300000);
	return 0;
}
