/*
 * rt_nopie_sig.c - allocations in a signal handler (the fast unwinder
 * leaves signal frames to libgcc), in a program built without PIE and
 * linked with libmprof.a: there the runtime, compiled with the program
 * (LTO), reaches _Unwind_Backtrace through a PLT entry of the executable,
 * whose address once passed for libgcc's, so that every such capture
 * inside the program was cut to its return address (issue 12 review).
 * 10 blocks of 33 bytes allocated in leaf(), called by the handler.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

static void *volatile sink;

static __attribute__((noinline)) void leaf(void)
{
	sink = malloc(33);
}

static __attribute__((noinline)) void handler(int sig)
{
	(void)sig;
	leaf();
}

int main(void)
{
	signal(SIGUSR1, handler);
	for (int i = 0; i < 10; i++)
		raise(SIGUSR1);
	puts("ok");
	return 0;
}
