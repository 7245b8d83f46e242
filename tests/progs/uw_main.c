/* uw_main.c - stacks for comparing the fast unwinder with the reference one
 * (MPROF_UNWIND_CHECK=1; tests/e2e/20-uw-check.t): libc callbacks (qsort,
 * bsearch), libc's own allocations (strdup, fopen, qsort's buffer), signal
 * handlers (raise, an asynchronous timer, an alternate signal stack), a
 * shared library reached through a lazy PLT and calling back, dlopen /
 * dlclose / dlopen of another library, alloca and a huge frame (CFA on rbp,
 * CFA offsets past the cache's range), a coroutine stack (makecontext),
 * deep recursion (300 and 3000 frames), threads with small stacks, and
 * every allocator entry point.  Built -O0 and -O2, with and without frame
 * pointers.  Usage: uw_main DIR (DIR holds plug1.so and plug2.so). */
#include <alloca.h>
#include <dlfcn.h>
#include <pthread.h>
#include <search.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <ucontext.h>

void *uwlib_alloc(size_t n);
void *uwlib_chain(int depth, size_t n);
void uwlib_callback(void (*fn)(int), int k);

#define KEEP(x) __asm__ volatile("" ::"r"(x) : "memory")
static volatile unsigned long sink;

__attribute__((noinline)) static void churn(size_t n)
{
	void *p = malloc(n), *q = calloc(1, n), *r;
	void *a = NULL;
	KEEP(p);
	r = realloc(p, n * 2);
	if (posix_memalign(&a, 64, n) == 0)
		free(a);
	free(aligned_alloc(32, 64));
	free(r);
	free(q);
}

/* ---- libc callbacks ---- */
static int cmp(const void *a, const void *b)
{
	churn(24);
	return *(const int *)a - *(const int *)b;
}

__attribute__((noinline)) static void callbacks(void)
{
	int v[40], key = 17;
	for (int i = 0; i < 40; i++)
		v[i] = (i * 7919) % 40;
	qsort(v, 40, sizeof v[0], cmp);
	KEEP(bsearch(&key, v, 40, sizeof v[0], cmp));
	void *root = NULL;
	for (int i = 0; i < 20; i++)
		tsearch(&v[i], &root, cmp); /* tsearch mallocs its nodes */
	char *s = strdup("libc allocates");
	free(s);
	FILE *f = fopen("/proc/self/stat", "r");
	if (f)
		fclose(f);
}

/* ---- signals ---- */
static volatile sig_atomic_t ticks;
static void on_signal(int sig)
{
	churn(40 + (size_t)sig);
	ticks++;
}

__attribute__((noinline)) static unsigned long spin(int n)
{
	unsigned long r = (unsigned long)n;
	if (n > 0)
		r += spin(n - 1) * 31;
	KEEP(r);
	return r;
}

__attribute__((noinline)) static void signals(void)
{
	struct sigaction sa;
	struct itimerval it = { { 0, 200 }, { 0, 200 } };
	stack_t ss;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGALRM, &sa, NULL);
	raise(SIGUSR1);
	/* An asynchronous signal lands anywhere in spin(): prologues,
	 * epilogues; the handler allocates (spin itself never does). */
	setitimer(ITIMER_REAL, &it, NULL);
	while (ticks < 30)
		sink += spin(50);
	memset(&it, 0, sizeof it);
	setitimer(ITIMER_REAL, &it, NULL);
	/* On an alternate stack: outside the thread's stack bounds. */
	ss.ss_sp = malloc(1 << 16);
	ss.ss_size = 1 << 16;
	ss.ss_flags = 0;
	sigaltstack(&ss, NULL);
	sa.sa_flags = SA_ONSTACK;
	sigaction(SIGUSR2, &sa, NULL);
	raise(SIGUSR2);
	ss.ss_flags = SS_DISABLE;
	sigaltstack(&ss, NULL);
}

/* ---- shared libraries ---- */
static void back(int k)
{
	churn(56 + (size_t)k);
}

__attribute__((noinline)) static void shared(const char *dir)
{
	char path[4096];
	void *(*chain)(int, size_t);

	free(uwlib_alloc(72)); /* first call: through the lazy PLT */
	free(uwlib_chain(5, 80));
	uwlib_callback(back, 1);
	for (int k = 1; k <= 2; k++) {
		snprintf(path, sizeof path, "%s/plug%d.so", dir, k);
		void *h = dlopen(path, RTLD_NOW);
		if (!h) {
			fprintf(stderr, "%s\n", dlerror());
			exit(3);
		}
		*(void **)&chain = dlsym(h, "uwlib_chain");
		for (int i = 0; i < 3; i++)
			free(chain(4 + i, 88));
		dlclose(h);
	}
}

/* ---- frames the fast path may or may not take ---- */
__attribute__((noinline)) static void with_alloca(size_t n)
{
	char *b = alloca(n);
	memset(b, 1, n);
	churn(n);
	KEEP(b);
}

__attribute__((noinline)) static void huge_frame(int k)
{
	volatile char big[200000];
	big[k] = 1;
	churn(96);
	big[k + 1] = 2;
	KEEP(big[k]);
}

static ucontext_t uc_main, uc_co;
static void coroutine(void)
{
	with_alloca(100);
	churn(104);
}

__attribute__((noinline)) static void frames(void)
{
	with_alloca(64);
	with_alloca(5000);
	huge_frame(7);
	void *stk = malloc(1 << 18);
	getcontext(&uc_co);
	uc_co.uc_stack.ss_sp = stk;
	uc_co.uc_stack.ss_size = 1 << 18;
	uc_co.uc_link = &uc_main;
	makecontext(&uc_co, coroutine, 0);
	swapcontext(&uc_main, &uc_co);
	free(stk);
}

/* ---- recursion ---- */
__attribute__((noinline)) static int down(int n, size_t size)
{
	if (n == 0) {
		churn(size);
		return 1;
	}
	int r = down(n - 1, size);
	KEEP(r);
	return r;
}

/* ---- threads ---- */
static void *worker(void *arg)
{
	int id = (int)(long)arg;
	for (int i = 0; i < 200; i++)
		down(i % 13, 120 + (size_t)id);
	callbacks();
	return NULL;
}

__attribute__((noinline)) static void threads(void)
{
	pthread_t t[4];
	pthread_attr_t a;

	pthread_attr_init(&a);
	pthread_attr_setstacksize(&a, 256 * 1024);
	for (long i = 0; i < 4; i++)
		pthread_create(&t[i], i & 1 ? &a : NULL, worker, (void *)i);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	pthread_attr_destroy(&a);
}

int main(int argc, char **argv)
{
	callbacks();
	signals();
	shared(argc > 1 ? argv[1] : ".");
	frames();
	down(300, 3001);
	down(3000, 3002);
	threads();
	for (int i = 0; i < 1000; i++)
		down(i % 40, 16);
	return 0;
}
