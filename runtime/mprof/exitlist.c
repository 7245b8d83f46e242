/*
 * exitlist.c - owns __cxa_atexit and on_exit (exitlist.h): the blocks
 * glibc allocates for its list of exit functions, 32 functions to a block
 * (calloc, stdlib's __new_exitfn), freed by exit as it runs the functions
 * of each, the newest block first.
 *
 * The exit save runs in an exit function registered by the monitor's
 * destructor, itself run by the loader's _dl_fini, an exit function that
 * __libc_start_main registered: the blocks of the functions registered
 * before it, by the constructors of the libraries the program linked
 * (C++ libraries' static objects, __cxa_atexit), are still allocated
 * then, and freed after.  They were kept in the profile, still
 * reachable, where memcheck has them freed (a library whose constructor
 * registered 100 functions: 3,120 bytes kept; ffmpeg, 12 blocks of
 * 1,040 bytes).  Each registration here notes the block it allocated,
 * the thread's last allocation (the temporaries' last_p) if it made one,
 * and the exit save records as freed each noted block still allocated
 * with its size.  A block registered after _dl_fini's is freed before
 * the save, by free, as any object.
 */
#include <dlfcn.h>
#include <stdint.h>

#include "exitlist.h"
#include "monitor.h"

#define VIS __attribute__((visibility("default")))

/* glibc's struct exit_function_list (stdlib/exit.h): next, idx, and 32
 * functions of four words; what __new_exitfn allocates. */
#define EXITLIST_BLOCK (2 * sizeof(void *) + 32 * 4 * sizeof(void *))
/* Blocks noted at most (32 functions each: 32,768 functions). */
#define EXITLIST_MAX 1024

typedef int cxa_atexit_fn(void (*)(void *), void *, void *);
typedef int on_exit_fn(void (*)(int, void *), void *);

/* Each block noted, and the one before it in the list (its first word,
 * set as glibc made it the list's head, never changed after). */
static struct { uintptr_t p, next; int freed; } noted[EXITLIST_MAX];
static unsigned nnoted;
static uintptr_t want_next; /* still_block's, the block looked at */

static void *next(void **cache, const char *name)
{
	void *f = __atomic_load_n(cache, __ATOMIC_ACQUIRE);

	if (!f) { /* a library's constructor may run before ours */
		f = dlsym(RTLD_NEXT, name);
		__atomic_store_n(cache, f, __ATOMIC_RELEASE);
	}
	return f;
}

/* After a registration: the block it allocated, if any, noted; the
 * thread's last allocation as it would be without the swap (before, or
 * the block). */
static void note(uintptr_t before)
{
	uintptr_t got = mon_last_swap(0);

	mon_last_swap(got ? got : before);
	if (got) {
		unsigned i = __atomic_fetch_add(&nnoted, 1, __ATOMIC_RELAXED);

		if (i < EXITLIST_MAX) {
			noted[i].next = *(const uintptr_t *)got;
			__atomic_store_n(&noted[i].p, got, __ATOMIC_RELEASE);
		}
	}
}

VIS int __cxa_atexit(void (*fn)(void *), void *arg, void *dso)
{
	static void *real;
	cxa_atexit_fn *f = (cxa_atexit_fn *)next(&real, "__cxa_atexit");
	uintptr_t before = mon_last_swap(0);
	int rc = f ? f(fn, arg, dso) : -1;

	note(before);
	return rc;
}

VIS int on_exit(void (*fn)(int, void *), void *arg)
{
	static void *real;
	on_exit_fn *f = (on_exit_fn *)next(&real, "on_exit");
	uintptr_t before = mon_last_swap(0);
	int rc = f ? f(fn, arg) : -1;

	note(before);
	return rc;
}

/* Still the block noted: the same block before it, and its count of
 * functions at most 32 (a block freed before the save, its memory given
 * to another object of its size, is that object's). */
static int still_block(const void *p)
{
	const uintptr_t *w = p;

	return w[0] == want_next && w[1] <= 32;
}

int exitlist_freed(void)
{
	unsigned n = __atomic_load_n(&nnoted, __ATOMIC_ACQUIRE);
	int k = 0;

	if (n > EXITLIST_MAX)
		n = EXITLIST_MAX;
	for (unsigned i = 0; i < n; i++) {
		uintptr_t p = __atomic_load_n(&noted[i].p, __ATOMIC_ACQUIRE);

		want_next = noted[i].next;
		if (p && mon_free_sized((void *)p, EXITLIST_BLOCK, still_block)) {
			noted[i].freed = 1;
			k++;
		}
	}
	return k;
}

int exitlist_block(int i, uintptr_t *p, uintptr_t *n)
{
	unsigned have = __atomic_load_n(&nnoted, __ATOMIC_ACQUIRE);

	if (i < 0 || (unsigned)i >= have || i >= EXITLIST_MAX)
		return -1;
	*p = noted[i].freed ? noted[i].p : 0;
	*n = EXITLIST_BLOCK;
	return 0;
}
