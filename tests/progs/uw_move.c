/*
 * uw_move.c - a recursion that stays where it was on the stack while the
 * chain outside it gains a frame (test 20, check mode): the unwinder takes
 * the recursion's frames from its previous walk, but they now sit one place
 * further from the outermost frame, so its record must move them.
 *
 * Odd rounds: main -> hop (alloca E1) -> chain...; even rounds: main ->
 * hop2 -> hop (alloca E2) -> chain..., with E2 = E1 - hop2's frame, found
 * by measuring, so the chain's frames have the same addresses either way
 * (the program says so, or exits 1 when it cannot line them up).  hop's
 * CFA is on rbp (alloca), so its rbp differs between the two and the walk
 * that reaches it through the chain must walk it again.  Allocations at the
 * chain's bottom and every 5 levels.
 *
 * Usage: uw_move [rounds]
 */
#include <alloca.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static unsigned long sink;
static uintptr_t chain_top; /* a local's address in the chain's top frame */
static int measure;

__attribute__((noinline)) static unsigned long chain(int n, int top, unsigned long r)
{
	volatile char mark = (char)n;
	unsigned long s;
	char *p = NULL;

	if (n == top && measure)
		chain_top = (uintptr_t)&mark;
	if (n == 0) {
		if (!(p = malloc(40 + r % 50)))
			abort();
		p[0] = mark;
		s = (unsigned char)p[0];
		free(p);
		return s;
	}
	if (n % 5 == 0 && !(p = malloc(24 + (unsigned)n % 16)))
		abort();
	s = chain(n - 1, top, r) + mark;
	free(p);
	__asm__ volatile("" ::: "memory"); /* no tail call */
	return s;
}

__attribute__((noinline)) static unsigned long hop(int n, size_t extra, unsigned long r)
{
	volatile char *pad = alloca(extra);
	unsigned long s;

	pad[0] = 1;
	s = chain(n, n, r);
	__asm__ volatile("" : : "r"(pad) : "memory");
	return s + pad[0];
}

__attribute__((noinline)) static unsigned long hop2(int n, size_t extra, unsigned long r)
{
	unsigned long s = hop(n, extra, r);

	__asm__ volatile("" ::: "memory");
	return s + 1;
}

int main(int argc, char **argv)
{
	unsigned long rounds = argc > 1 ? strtoul(argv[1], NULL, 10) : 400;
	size_t e1 = 512, e2;
	uintptr_t a, b;

	measure = 1;
	hop(3, e1, 0);
	a = chain_top;
	hop2(3, e1, 0);
	b = chain_top;
	e2 = e1 - (a - b);
	hop2(3, e2, 0);
	measure = 0;
	if (a <= b || a - b >= e1 || chain_top != a) {
		fprintf(stderr, "uw_move: cannot line the chains up (%#lx %#lx %#lx)\n",
			(unsigned long)a, (unsigned long)b, (unsigned long)chain_top);
		return 1;
	}
	for (unsigned long r = 0; r < rounds; r++)
		sink += r % 2 ? hop(20 + (int)(r % 13), e1, r) : hop2(20 + (int)(r % 13), e2, r);
	printf("%lu\n", sink);
	return 0;
}
