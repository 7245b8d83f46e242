/*
 * rt_shared.c - stacks that the monitor keeps as the outer frames of
 * others (runtime/mprof/stacks.h: a record's parent), then the end the
 * argument names: "kill" (SIGKILL, so the launcher salvages the keep) or
 * "exit" (the monitor saves).  Either way the profile must hold every
 * stack: tests/e2e/96-keep-shared.t.  Built -O2 (via()'s tail call).
 *
 * Each stack runs through outer() (6 frames), shape() and main:
 * - deep: down() 13 deep and leaf()'s malloc, 4 times (111 bytes).
 * - shallow: malloc from down()'s level 9, 3 times (222 bytes): a stack
 *   with fewer frames than the deep one it takes its outer frames from.
 * - via(): leaf()'s malloc under via(), twice (333 bytes), and via()'s
 *   tail call of malloc, 5 times (444 bytes): malloc returns into
 *   shape(), so that stack is the outer part of via()'s deep one, every
 *   frame of it shared.
 * Nothing is freed.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NOI __attribute__((noinline, noclone))

static void *volatile keep[32];
static int nkeep;

NOI static void *leaf(size_t n)
{
	void *p = malloc(n);

	__asm__ volatile("" ::: "memory");
	return p;
}

NOI static void *down(int k, int at, size_t n)
{
	void *p;

	if (k == at)
		p = malloc(n);
	else if (k == 0)
		p = leaf(n);
	else
		p = down(k - 1, at, n);
	__asm__ volatile("" ::: "memory"); /* no tail call */
	return p;
}

NOI void *via(size_t n, int deep)
{
	if (deep) {
		void *p = leaf(n);

		__asm__ volatile("" ::: "memory");
		return p;
	}
	return malloc(n); /* a tail call at -O2 */
}

/* One call site for each kind of stack, so that they share their outer
 * frames: the 5 of outer(), main's and libc's. */
NOI static void *shape(int s)
{
	void *p;

	if (s < 2)
		p = down(12, s ? 9 : -1, s ? 222 : 111);
	else
		p = via(s == 2 ? 333 : 444, s == 2);
	__asm__ volatile("" ::: "memory");
	return p;
}

NOI static void *outer(int k, int s)
{
	void *p = k ? outer(k - 1, s) : shape(s);

	__asm__ volatile("" ::: "memory");
	return p;
}

int main(int argc, char **argv)
{
	static const int order[] = { 0, 0, 0, 0, 1, 1, 1, 2, 3, 2, 3, 3, 3, 3 };

	for (unsigned i = 0; i < sizeof order / sizeof order[0]; i++)
		keep[nkeep++] = outer(5, order[i]);
	if (argc > 1 && !strcmp(argv[1], "kill"))
		kill(getpid(), SIGKILL);
	return 0;
}
