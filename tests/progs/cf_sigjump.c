/*
 * cf_sigjump.c - a timer signal every 300 us whose handler siglongjmps
 * back to main, 1000 times, while main's loop calls 16 functions through
 * a table at random, 7 deep: most calls make a new path, so most signals
 * land in a hook's slow path, which the jump leaves for good.  Then main
 * calls after 1000 times.  Prints the calls each function counted (the
 * hooks may count a few more: an entry hook a jump left before the body
 * ran) (tests/e2e/75-cf-signals.t).  With the argument "alt" the handler
 * runs on an alternate signal stack:
 *
 *   after 1000  f N  jumps 1000
 */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <sys/time.h>

typedef void fn_t(int);
static sigjmp_buf jb;
static volatile long n_after, n_f, n_jumps, sink;
static unsigned long rnd = 1;
static fn_t *tab[16];

#define F(i)                                                                               \
	__attribute__((noinline)) void f##i(int d)                                         \
	{                                                                                  \
		n_f++;                                                                     \
		sink += i;                                                                 \
		if (d) {                                                                   \
			rnd = rnd * 6364136223846793005ul + 1;                             \
			tab[(rnd >> 33) & 15](d - 1);                                      \
		}                                                                          \
	}
F(0) F(1) F(2) F(3) F(4) F(5) F(6) F(7) F(8) F(9) F(10) F(11) F(12) F(13) F(14) F(15)
static fn_t *tab[16] = { f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15 };

__attribute__((noinline)) void after(int i)
{
	n_after++;
	sink += i;
}

__attribute__((noinline)) void on_alrm(int s)
{
	(void)s;
	/* A signal after the thousandth jump (before the timer is off)
	 * returns: jumping back would count a jump more. */
	if (n_jumps >= 1000)
		return;
	n_jumps++;
	siglongjmp(jb, 1);
}

int main(int argc, char **argv)
{
	struct sigaction sa = { 0 };
	struct itimerval it = { { 0, 300 }, { 0, 300 } }, off = { { 0, 0 }, { 0, 0 } };
	static char alt[1 << 16];
	stack_t ss = { alt, 0, sizeof alt };

	sa.sa_handler = on_alrm;
	/* "alt": the handler runs on an alternate signal stack, so that each
	 * jump leaves a frame of another stack than its target's. */
	if (argc > 1 && argv[1][0] == 'a') {
		sigaltstack(&ss, NULL);
		sa.sa_flags = SA_ONSTACK;
	}
	sigaction(SIGALRM, &sa, NULL);
	sigsetjmp(jb, 1);
	if (n_jumps == 0)
		setitimer(ITIMER_REAL, &it, NULL);
	while (n_jumps < 1000)
		f0(6);
	setitimer(ITIMER_REAL, &off, NULL);
	for (int i = 0; i < 1000; i++)
		after(i);
	printf("after %ld\nf %ld\njumps %ld\n", n_after, n_f, n_jumps);
	return 0;
}
