/*
 * cf_jump.c - non-local exits skip the exit hooks: deep recurses 1000
 * frames and, at the bottom, longjmps straight back to main, or raises
 * SIGUSR1 whose handler (on_usr1, instrumented too) siglongjmps back to
 * main, 3 times each, so 6 x 1000 frames (and 3 handler frames) are left
 * without __cyg_profile_func_exit.  Then main calls `after` a million times.  A
 * profiler that does not resynchronize its logical stack would charge
 * those calls to deep (deep > after), or grow its stack by 1000 frames
 * per jump.  The program counts everything itself and prints "name count"
 * (tests/e2e/70-cf-calls.t):
 *
 *   deep            calls of deep in all (6 x 1000)
 *   deep_from_main  calls of deep from main (6)
 *   after           calls of after, all from main (1000000)
 *   on_usr1         calls of the signal handler (3)
 *   jumps           longjmps and siglongjmps taken (6)
 *   sum             a checksum of after's work
 */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>

#define DEPTH 1000
#define JUMPS 3
#define AFTER 1000000

static jmp_buf env;
static sigjmp_buf senv;
static long n_deep, n_deep_from_main, n_after, n_jumps;
static volatile sig_atomic_t n_usr1;
static volatile long sum;

__attribute__((noinline)) static void deep(int depth, int use_sig)
{
	n_deep++;
	if (depth > 1)
		deep(depth - 1, use_sig);
	else if (use_sig)
		raise(SIGUSR1);
	else
		longjmp(env, 1);
	__asm__ volatile("" ::: "memory"); /* not reached */
}

static void on_usr1(int sig)
{
	(void)sig;
	n_usr1++;
	siglongjmp(senv, 1);
}

__attribute__((noinline)) static void after(long i)
{
	n_after++;
	sum += i & 7;
}

int main(void)
{
	signal(SIGUSR1, on_usr1);
	for (int j = 0; j < JUMPS; j++) {
		if (setjmp(env) == 0) {
			n_deep_from_main++;
			deep(DEPTH, 0);
		} else {
			n_jumps++;
		}
		if (sigsetjmp(senv, 1) == 0) {
			n_deep_from_main++;
			deep(DEPTH, 1);
		} else {
			n_jumps++;
		}
	}
	for (long i = 0; i < AFTER; i++)
		after(i);
	printf("deep %ld\ndeep_from_main %ld\nafter %ld\non_usr1 %d\njumps %ld\nsum %ld\n", n_deep,
	       n_deep_from_main, n_after, (int)n_usr1, n_jumps, sum);
	return 0;
}
