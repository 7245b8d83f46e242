/* leakscan.c - memory of every leak class at exit, for
 * tests/e2e/91-leak-scan.t, which compares mprof's classes (MPROF_LEAKS=scan)
 * with valgrind memcheck's:
 *
 *   definitely lost   100 (lose_direct) + 48 (the head of lose_list) + 32
 *                     (the lower of a cycle of two, lose_cycle) + 0 (a
 *                     malloc(0), lose_zero) = 180 bytes in 4 objects
 *   indirectly lost   3 x 48 (lose_list's other nodes) + 32 (the cycle's
 *                     other) = 176 bytes in 4
 *   possibly lost     200 (only p + 8 kept, keep_interior) + 24 (pointed to
 *                     from the start by it, keep_interior) = 224 in 2
 *   still reachable   500 (a global, keep_global) + 64 + 2 x 16 (a tree
 *                     under a global, keep_tree) + 40 (only p + 8 kept, but
 *                     its first word is the length of the rest: memcheck's
 *                     length64 heuristic, keep_length64) + 72 (a
 *                     thread-local pointer, keep_tls) = 708 in 6
 *
 * With "deep", exit() is called three calls down from main with a local
 * pointing to one more object of 300 bytes: a live frame, so reachable.
 * With "thread", a thread blocked in pause() holds one of 400 (reachable
 * through its stack only) and the program prints nothing (no stdout
 * buffer: with a thread alive, libc's buffers are not released).
 * With "big N", N objects more in a reachable list and N in a lost one.
 * With "spin", a thread is running at exit: the scan is skipped.
 * With "settle", a thread holding one of 400 is still running at exit, for
 * 20 ms, then waits in pause(), as a worker that finished its part: the
 * scan waits for it, and it is scanned as "thread"'s.
 * With "late", main's object of 777 (mkx) is handed, 20 ms after exit
 * began, to a thread started then on a fresh stack, its only holder:
 * the scan, which waits for the first, reads the maps again and finds
 * it reachable (a first version read them once, and lost it).
 * With "pool", a malloc'd chunk of 320 bytes kept in a global holds ten
 * objects of 32 reported with mprof_alloc: the first (a pointer to the
 * chunk is one to it) and the second (a global) are reachable, the third
 * is lost and the fourth only it points to (indirect), the six others are
 * lost: 7 x 32 = 224 lost, 32 indirect, 64 + 320 reachable.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <mprof.h>

struct node {
	struct node *next;
	char pad[40];
};
struct tree {
	struct tree *kid[2];
	char pad[48];
};

void *global, *interior, *tree_root, *length64, *pool_chunk, *pool_kept;
static volatile int spinning = 1;
static __thread void *tls;

static __attribute__((noinline)) void lose_direct(void)
{
	memset(malloc(100), 1, 100);
}

static __attribute__((noinline)) void lose_list(void)
{
	struct node *h = NULL;

	for (int i = 0; i < 4; i++) {
		struct node *n = calloc(1, sizeof *n);
		n->next = h;
		h = n;
	}
}

static __attribute__((noinline)) void lose_cycle(void)
{
	void **a = calloc(1, 32), **b = calloc(1, 32);

	a[0] = b;
	b[0] = a;
}

static __attribute__((noinline)) void lose_zero(void)
{
	void *volatile p = malloc(0);
	(void)p;
}

static __attribute__((noinline)) void keep_global(void)
{
	global = malloc(500);
	memset(global, 2, 500);
}

/* Only p + 8 is kept; the block's first word is 0, so no heuristic
 * takes it for a start pointer, and it points at another block. */
static __attribute__((noinline)) void keep_interior(void)
{
	char *p = calloc(1, 200);

	*(void **)(p + 16) = calloc(1, 24);
	interior = p + 8;
}

static __attribute__((noinline)) void keep_tree(void)
{
	struct tree *r = calloc(1, sizeof *r);

	r->kid[0] = calloc(1, 16);
	r->kid[1] = calloc(1, 16);
	tree_root = r;
}

static __attribute__((noinline)) void keep_length64(void)
{
	uint64_t *p = calloc(1, 40);

	p[0] = 40 - 8;
	length64 = p + 1;
}

static __attribute__((noinline)) void keep_tls(void)
{
	tls = calloc(1, 72);
}

static __attribute__((noinline)) void big(long n)
{
	struct node *kept = NULL, *lost = NULL;

	for (long i = 0; i < n; i++) {
		struct node *a = calloc(1, sizeof *a), *b = calloc(1, sizeof *b);
		a->next = kept;
		kept = a;
		b->next = lost;
		lost = b;
	}
	global = kept; /* the 500 bytes become lost */
}

static __attribute__((noinline)) void deep3(void)
{
	void *volatile mine = calloc(1, 300);
	(void)mine;
	exit(0);
}

static __attribute__((noinline)) void deep2(void)
{
	deep3();
}

static __attribute__((noinline)) void deep1(void)
{
	deep2();
}

static __attribute__((noinline)) void pool(void)
{
	char *chunk = calloc(10, 32);
	int cat = mprof_category("slot");

	for (int i = 0; i < 10; i++)
		mprof_alloc(chunk + 32 * i, 32, cat);
	*(void **)(chunk + 64) = chunk + 96;
	pool_chunk = chunk;
	pool_kept = chunk + 32;
}

static void *spinner(void *arg)
{
	while (spinning)
		;
	return arg;
}

static volatile int settled;

/* Holds its object, then runs 20 ms (of wall time) before it waits. */
static void *settler(void *arg)
{
	void *volatile mine = calloc(1, 400);
	struct timespec t0, t;

	(void)mine;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	settled = 1;
	do
		clock_gettime(CLOCK_MONOTONIC, &t);
	while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < 20000000L);
	for (;;)
		pause();
	return arg;
}

static void *volatile handed;

static void *holder(void *arg)
{
	void *volatile mine = arg;

	(void)mine;
	for (;;)
		pause();
	return NULL;
}

/* Runs 20 ms, then hands `handed` to a thread on a stack of its own. */
static void *hander(void *arg)
{
	struct timespec t0, t;
	pthread_attr_t a;
	pthread_t c;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	settled = 1;
	do
		clock_gettime(CLOCK_MONOTONIC, &t);
	while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < 20000000L);
	pthread_attr_init(&a);
	pthread_attr_setstacksize(&a, 1 << 20);
	if (pthread_create(&c, &a, holder, handed) == 0)
		handed = NULL;
	for (;;)
		pause();
	return arg;
}

static __attribute__((noinline)) void mkx(void)
{
	handed = calloc(1, 777);
}

static void *sleeper(void *arg)
{
	void *volatile mine = calloc(1, 400);

	(void)mine;
	for (;;)
		pause();
	return arg;
}

/* Start fn's thread, and exit once it has begun (settled). */
static int exit_as_it_runs(void *(*fn)(void *))
{
	pthread_t t;

	if (pthread_create(&t, NULL, fn, NULL) != 0)
		return 1;
	while (!settled)
		usleep(100);
	return 0;
}

int main(int argc, char **argv)
{
	pthread_t t;

	lose_direct();
	lose_list();
	lose_cycle();
	lose_zero();
	keep_global();
	keep_interior();
	keep_tree();
	keep_length64();
	keep_tls();
	free(malloc(77));
	if (argc > 2 && !strcmp(argv[1], "big"))
		big(atol(argv[2]));
	if (argc > 1 && !strcmp(argv[1], "deep"))
		deep1();
	if (argc > 1 && !strcmp(argv[1], "pool"))
		pool();
	if (argc > 1 && !strcmp(argv[1], "spin"))
		return pthread_create(&t, NULL, spinner, NULL) != 0;
	if (argc > 1 && !strcmp(argv[1], "late")) {
		mkx();
		return exit_as_it_runs(hander);
	}
	if (argc > 1 && !strcmp(argv[1], "settle"))
		return exit_as_it_runs(settler);
	if (argc > 1 && !strcmp(argv[1], "thread")) {
		if (pthread_create(&t, NULL, sleeper, NULL) != 0)
			return 1;
		usleep(200000); /* until it holds its object and sleeps */
		return 0;
	}
	write(1, "done\n", 5);
	return 0;
}
