/*
 * sig_coro.c - a ucontext coroutine on a 4 KiB stack in the middle of a
 * canary-filled block, for what a profiler must never do: write below a
 * stack that is not its own.  The coroutine works about 3 KiB deep into
 * its stack (a frame holding a 2.5 KiB buffer), where no signal frame
 * fits (the kernel's own is up to AT_MINSIGSTKSZ, 11952 bytes on a CPU
 * with AVX-512 and AMX): CPU-bound rounds and first touches of fresh
 * pages (page faults), then it yields to main.  A handler that runs on
 * the interrupted stack writes into the canaries below it.  At the end
 * the program counts the block's bytes outside the 4 KiB stack that
 * changed: 0 in a bare run, and 0 it must stay under any profiler.
 *
 * stdout: rounds, a checksum of the work, the changed canary bytes.
 * stderr: how deep into its stack the coroutine went (its high-water
 * mark, from the canaries inside the stack).
 *
 *   sig_coro [ROUNDS]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <ucontext.h>

#define BELOW		(48 << 10) /* canaries below the stack: where handlers write */
#define STACK		4096
#define ABOVE		(12 << 10)
#define PAGES_PER_ROUND 16

static unsigned char block[BELOW + STACK + ABOVE] __attribute__((aligned(4096)));
static ucontext_t main_ctx, co_ctx;
static unsigned char *fresh; /* pages the coroutine touches first */
static long rounds, round_no;
static uint64_t result;

static unsigned char canary(size_t i)
{
	return (unsigned char)(i * 167 + 13);
}

__attribute__((noinline)) static uint64_t crunch(uint64_t x, int n)
{
	for (int i = 0; i < n; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	return x;
}

/* The coroutine's deep frame: its buffer puts the work ~3 KiB down. */
__attribute__((noinline)) static uint64_t deep(long r)
{
	volatile unsigned char pad[2560];
	uint64_t x = (uint64_t)r;

	pad[0] = (unsigned char)r;
	pad[sizeof pad - 1] = (unsigned char)(r >> 8);
	for (int k = 0; k < 40; k++)
		x = crunch(x ^ pad[0] ^ pad[sizeof pad - 1], 2000);
	for (int p = 0; p < PAGES_PER_ROUND; p++)
		fresh[((size_t)r * PAGES_PER_ROUND + (size_t)p) * 4096] = (unsigned char)x;
	return x;
}

static void coroutine(void)
{
	for (;;) {
		result ^= deep(round_no);
		swapcontext(&co_ctx, &main_ctx);
	}
}

int main(int argc, char **argv)
{
	unsigned char *stack = block + BELOW;
	size_t changed = 0, used = 0;
	uint64_t sum = 0;

	rounds = argc > 1 ? atol(argv[1]) : 1500;
	fresh = mmap(NULL, (size_t)rounds * PAGES_PER_ROUND * 4096, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (fresh == MAP_FAILED)
		return 1;
	for (size_t i = 0; i < sizeof block; i++)
		block[i] = canary(i);
	getcontext(&co_ctx);
	co_ctx.uc_stack.ss_sp = stack;
	co_ctx.uc_stack.ss_size = STACK;
	co_ctx.uc_link = &main_ctx;
	makecontext(&co_ctx, coroutine, 0);
	for (round_no = 0; round_no < rounds; round_no++) {
		swapcontext(&main_ctx, &co_ctx);
		sum += crunch(result, 1000) >> 32;
	}
	for (size_t i = 0; i < sizeof block; i++)
		if (block[i] != canary(i)) {
			if (i < BELOW || i >= BELOW + STACK)
				changed++;
			else if (!used)
				used = BELOW + STACK - i;
		}
	printf("rounds %ld\nsum %llu\ncanary %zu\n", rounds, (unsigned long long)sum, changed);
	fprintf(stderr, "sig_coro: %zu bytes of the coroutine's stack used\n", used);
	return 0;
}
