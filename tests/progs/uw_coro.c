/*
 * uw_coro.c - allocations on other stacks than the thread's own, between
 * allocations on it: a makecontext coroutine (100 bytes each) and a signal
 * handler on a sigaltstack (40 bytes each), alternating with main's own
 * 24-byte allocations from one call site.  Those stacks are walked by the
 * reference unwinder; none of them may be remembered as, or mistaken for,
 * main's stack.  Each site allocates one size, so a profile that mixes two
 * sizes in one stack is wrong.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>

static ucontext_t main_ctx, co_ctx;
static char *volatile keep;

__attribute__((noinline)) static void site(size_t n)
{
	keep = malloc(n);
	free(keep);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void main_site(void)
{
	site(24);
	__asm__ volatile("" ::: "memory");
}

static void coroutine(void)
{
	for (;;) {
		site(100);
		swapcontext(&co_ctx, &main_ctx);
	}
}

static void handler(int sig)
{
	(void)sig;
	site(40);
}

int main(void)
{
	static char co_stack[256 << 10], alt_stack[256 << 10];
	stack_t ss = { .ss_sp = alt_stack, .ss_size = sizeof alt_stack };
	struct sigaction sa;

	sigaltstack(&ss, NULL);
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = handler;
	sa.sa_flags = SA_ONSTACK;
	sigaction(SIGUSR1, &sa, NULL);
	getcontext(&co_ctx);
	co_ctx.uc_stack.ss_sp = co_stack;
	co_ctx.uc_stack.ss_size = sizeof co_stack;
	co_ctx.uc_link = &main_ctx;
	makecontext(&co_ctx, coroutine, 0);
	for (int i = 0; i < 1000; i++) {
		main_site();
		swapcontext(&main_ctx, &co_ctx);
		main_site(); /* the same frame 0 as before the switch */
		if (i % 10 == 0)
			raise(SIGUSR1);
	}
	return 0;
}
