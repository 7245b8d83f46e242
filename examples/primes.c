/*
 * primes.c - the Appel, Duba & MacQueen paper's example program (Figure 1)
 * in C, the call-heavy workload of bench/run's primes section:
 *
 *   fun subset pred = let fun f nil = nil
 *                           | f (a::r) = if pred a then a::f(r) else f(r)
 *                     in f end
 *   fun isPrime x = let fun test i = i>=x orelse (x mod i <> 0 andalso test(i+1))
 *                   in test 2 end
 *   val primes = subset isPrime
 *
 * applied to natlist = [1..N], built recursively too.  Every function of
 * the figure is a C function with the same recursion (f over the list, not
 * a loop; test recursive): with N = 35700 (the default) the run makes
 * about 64 million calls, 63.9 million of them to test, as the issue's
 * figure for the paper's program.  (With N = 1000 it makes the paper's
 * profile: test 78191 calls, isPrime 1000, f 1001, natlist 1001.)
 *
 * Every function is noinline, and the program must be built with
 * -fno-optimize-sibling-calls when it is not built with
 * -finstrument-functions (whose exit hooks already forbid tail calls):
 * otherwise gcc inlines test into isPrime and into itself, and turns its
 * tail recursion and f's into loops, and a gcc -pg build (gprof) makes a
 * fraction of the calls the instrumented one makes.  The recursion is
 * as deep as N (test) plus N (f): about 71000 frames, 3 MB of stack.
 *
 * Prints "primes P" (Figure 1's isPrime counts 1 as prime), "calls C",
 * the calls the program made (main included), and "test T", test's share
 * of them, counted by the program itself.
 *
 *   primes [N]
 */
#include <stdio.h>
#include <stdlib.h>

struct cell {
	long head;
	struct cell *tail;
};

typedef int (*pred_fn)(long);

static long calls, tests; /* tests: test's calls; calls: the others' */
static pred_fn pred;	  /* subset's argument: the closure f sees */

/* fun natlist i = if i > n then nil else i :: natlist (i + 1) */
__attribute__((noinline)) struct cell *natlist(long i, long n)
{
	struct cell *c;

	calls++;
	if (i > n)
		return NULL;
	c = malloc(sizeof(*c));
	if (!c)
		abort();
	c->head = i;
	c->tail = natlist(i + 1, n);
	return c;
}

/* fun f nil = nil | f (a::r) = if pred a then a::f(r) else f(r) */
__attribute__((noinline)) struct cell *f(struct cell *l)
{
	struct cell *c;

	calls++;
	if (!l)
		return NULL;
	if (!pred(l->head))
		return f(l->tail);
	c = malloc(sizeof(*c));
	if (!c)
		abort();
	c->head = l->head;
	c->tail = f(l->tail);
	return c;
}

/* fun subset pred = f */
__attribute__((noinline)) struct cell *subset(pred_fn p, struct cell *l)
{
	calls++;
	pred = p;
	return f(l);
}

/* fun test i = i>=x orelse (x mod i <> 0 andalso test(i+1)) */
__attribute__((noinline)) int test(long x, long i)
{
	tests++;
	return i >= x || (x % i != 0 && test(x, i + 1));
}

/* fun isPrime x = test 2 */
__attribute__((noinline)) int isPrime(long x)
{
	calls++;
	return test(x, 2);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 35700, count = 0;
	struct cell *primes;

	primes = subset(isPrime, natlist(1, n));
	for (struct cell *c = primes; c; c = c->tail)
		count++;
	printf("primes %ld\ncalls %ld\ntest %ld\n", count, calls + tests + 1, tests);
	return 0;
}
