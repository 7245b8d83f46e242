/*
 * cf_coro.c - instrumented functions on coroutine stacks (makecontext /
 * swapcontext): a generator yields N values from its own stack, main's
 * consumer takes them, switching stacks 2N times.  Every function counts
 * its own calls and the program prints them.  The logical stack cannot
 * follow a switch of stacks exactly (the hooks see no swap); the counts
 * must stay exact and the program must not notice.
 *
 *   cf_coro [N]
 */
#include <stdio.h>
#include <stdlib.h>
#include <ucontext.h>

static ucontext_t main_ctx, gen_ctx;
static long value, n_produce, n_consume, n_step, n_generator;
static int done;

__attribute__((noinline)) long step(long x)
{
	n_step++;
	return x * 3 + 1;
}

__attribute__((noinline)) void produce(long i)
{
	n_produce++;
	value = step(i);
	swapcontext(&gen_ctx, &main_ctx); /* yield */
}

__attribute__((noinline)) void generator(void)
{
	long n = value;

	n_generator++;
	for (long i = 0; i < n; i++)
		produce(i);
	done = 1;
}

__attribute__((noinline)) long consume(long v)
{
	n_consume++;
	return v & 7;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000, sum = 0;
	size_t size = 256 << 10;
	char *stack = malloc(size);

	getcontext(&gen_ctx);
	gen_ctx.uc_stack.ss_sp = stack;
	gen_ctx.uc_stack.ss_size = size;
	gen_ctx.uc_link = &main_ctx;
	makecontext(&gen_ctx, generator, 0);
	value = n;
	while (!done) {
		swapcontext(&main_ctx, &gen_ctx);
		if (!done)
			sum += consume(value);
	}
	printf("generator %ld\nproduce %ld\nstep %ld\nconsume %ld\nsum %ld\n", n_generator, n_produce,
	       n_step, n_consume, sum);
	free(stack);
	return 0;
}
