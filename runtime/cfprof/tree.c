/*
 * tree.c - owns cfprof's per-thread records (tree_*): the logical stack's
 * memory, the calling context tree's nodes, their caches of children and
 * the (parent, function) -> node table, the registry the save walks, and
 * what fork and thread exit do to them.
 *
 * Everything comes from mmap(2): a hook may run inside the program's own
 * allocator (an instrumented malloc), so nothing here calls it.  Memory
 * follows what the program does: nodes per distinct path (CF_MAX_TREE
 * deep at most), stack entries per logical depth (grown by mremap).
 */
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bounds.h"
#include "format.h"
#include "keep.h"
#include "resources.h"
#include "tree.h"

void __cyg_profile_func_enter(void *fn, void *site);

#define CF_CHUNK (256u << 10)
#define CF_POPULATE (64u << 10) /* node memory made ready at a time */
/* Logical depth: 1M entries, 24 MiB of address space a thread, touched as
 * used; deeper calls are counted on the deepest path held, not pushed
 * (tree.h: lost). */
#define CF_MAX_FRAMES (1u << 20)
#define CF_FRAMES_LEN ((size_t)CF_MAX_FRAMES * sizeof(struct cf_frame))
/* Entries made ready at a time (tree_frames_grow): a thread's first
 * ones, then more as its stack deepens. */
#define CF_FRAMES_FIRST 256
#define CF_FRAMES_MORE 4096

/* The stacks of exited threads, for new threads to reuse: a list linked
 * through base[0].node, taken and given under a spin flag held for a few
 * instructions (never across a call). */
static struct cf_frame *cf_spare;
static int cf_spare_lock;

static void spare_lock(void)
{
	while (__atomic_exchange_n(&cf_spare_lock, 1, __ATOMIC_ACQUIRE))
		;
}

static void spare_unlock(void)
{
	__atomic_store_n(&cf_spare_lock, 0, __ATOMIC_RELEASE);
}

static struct cf_frame *frames_get(void)
{
	struct cf_frame *f;

	spare_lock();
	f = cf_spare;
	if (f)
		cf_spare = (struct cf_frame *)f[0].node;
	spare_unlock();
	return f;
}

static void frames_put(struct cf_frame *f)
{
	/* The pages go back to the system; the range stays mapped (the
	 * watcher may still read a dead thread's stack: it reads zeros). */
	madvise(f, CF_FRAMES_LEN, MADV_DONTNEED);
	spare_lock();
	f[0].node = (struct cf_node *)cf_spare;
	cf_spare = f;
	spare_unlock();
}

int cf_on;
uint64_t cf_failed;
int cf_nres;
int cf_stride;
struct cf_thread *cf_threads;
__thread struct cf_thread *cf_me __attribute__((tls_model("initial-exec")));
struct cf_node cf_none;
/* Its exit hooks subtract from reps and put it back: they may race from
 * several threads, which only ever makes it negative for a moment (no
 * hook adds to it: cf_none has no selffn). */
struct cf_frame cf_idle = { .node = &cf_none };
struct cf_pair cf_no_pairs[CF_PAIRS];
__thread struct cf_tls cf_tls __attribute__((tls_model("initial-exec"))) = { &cf_idle, &cf_idle,
									      cf_no_pairs };
/* The record of a thread that hooks must leave alone: exited, out of
 * memory, or being set up. */
struct cf_thread cf_dead = { .state = CF_DEAD };

static struct cf_keep cf_keep_none, *cf_keep = &cf_keep_none;

/* Under a launcher (cfprof record), the trees go in its keep (keep.h):
 * taken here, before the first thread's record, by the first hook or the
 * collector's start (keep_attach is once a process image). */
static void tree_keep(void)
{
	struct cf_keep *k;

	keep_attach("CFPROF_KEEP", "CFPROF_ROOT_PID", FORMAT_KIND_CFPROF, CF_KEEP_LAYOUT);
	if (!keep_h || !(k = keep_map(sizeof *k)) || !keep_has(k))
		return;
	k->stride = cf_stride;
	cf_keep = k;
	keep_set_root(k);
}

void tree_keep_nres(int nres)
{
	cf_keep->nres = nres;
}

static uintptr_t cf_unprof[CF_MAX_UNPROFILED];
static int cf_nunprof;

static void *map(size_t n)
{
	void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		       -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

static int main_bias(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	*(uintptr_t *)arg = info->dlpi_addr;
	return 1; /* the first object is the main program */
}

/* CFPROF_UNPROFILED: hexadecimal link-time addresses of functions of the
 * main program (comma-separated) made unprofiled for this run. */
static void read_unprofiled(void)
{
	const char *s = getenv("CFPROF_UNPROFILED");
	uintptr_t bias = 0;
	int n = 0;

	if (!s || !*s)
		return;
	dl_iterate_phdr(main_bias, &bias);
	while (*s && n < CF_MAX_UNPROFILED) {
		char *end;
		unsigned long long a = strtoull(s, &end, 16);
		if (end == s)
			break;
		cf_unprof[n++] = (uintptr_t)a + bias;
		s = *end == ',' ? end + 1 : end;
	}
	/* Sorted, for the binary search at node creation. */
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && cf_unprof[j - 1] > cf_unprof[j]; j--) {
			uintptr_t x = cf_unprof[j];
			cf_unprof[j] = cf_unprof[j - 1];
			cf_unprof[j - 1] = x;
		}
	cf_nunprof = n;
}

/* The resources CFPROF_EVENTS asks for, at most: its comma-separated
 * items (the sampler counts one named twice once), cpu alone without it;
 * every resource before libc has set environ up (a hook in a
 * preinit_array function). */
static int events_asked(void)
{
	const char *s = getenv("CFPROF_EVENTS");
	int n = 1;

	if (!environ)
		return RES_N;
	if (!s || !*s)
		return 1;
	for (; *s; s++)
		n += *s == ',';
	return n < RES_N ? n : RES_N;
}

/* 0 before tree_prepare, 1 while it runs, 2 after. */
static int cf_prepared;

/*
 * Every profiled thread's release at its exit.  The sampler's own (its
 * key, thread.c) covers the threads made through the pthread_create it
 * interposes; glibc makes some with its internal one (SIGEV_THREAD
 * timers, mq_notify, AIO), and each of those kept its 24 MiB of frames,
 * its table and its pairs to the end: 20,000 timer threads held 540 MB
 * and 2,600 mappings.  Last round of the key's destructors, as the
 * sampler's: later destructors may still run instrumented code.  Releasing
 * twice is nothing (tree_thread_exit).
 */
static pthread_key_t tree_key;
static int tree_key_ok;

static void tree_key_exit(void *v)
{
	uintptr_t round = (uintptr_t)v;

	if (round < PTHREAD_DESTRUCTOR_ITERATIONS &&
	    pthread_setspecific(tree_key, (void *)(round + 1)) == 0)
		return;
	tree_thread_exit();
}

int tree_prepare(int wait)
{
	int idle = 0;

	while (!__atomic_compare_exchange_n(&cf_prepared, &idle, 1, 0, __ATOMIC_ACQUIRE,
					    __ATOMIC_ACQUIRE)) {
		if (idle == 2)
			return 0;
		if (!wait)
			return -1;
		idle = 0;
		sched_yield();
	}
	cf_stride = events_asked();
	tree_key_ok = pthread_key_create(&tree_key, tree_key_exit) == 0;
	tree_keep();
	read_unprofiled();
	__atomic_store_n(&cf_prepared, 2, __ATOMIC_RELEASE);
	__atomic_store_n(&cf_on, 1, __ATOMIC_RELEASE);
	return 0;
}

static int unprofiled(uintptr_t fn)
{
	int lo = 0, hi = cf_nunprof;

	while (lo < hi) {
		int mid = (lo + hi) / 2;
		if (cf_unprof[mid] == fn)
			return 1;
		if (cf_unprof[mid] < fn)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

static struct cf_node *node_new(struct cf_thread *t)
{
	uint64_t size = tree_node_size();
	struct cf_chunk *c = t->chunk;
	struct cf_node *n;

	if (!c || c->used + size > c->size) {
		struct cf_chunk *x = keep_reserve(CF_CHUNK);
		if (!x)
			return NULL;
		x->size = CF_CHUNK - offsetof(struct cf_chunk, mem);
		if (c)
			c->next = x;
		else
			t->chunks = x;
		t->chunk = c = x;
	}
	if (c->used + size > c->ready) {
		/* The pages ahead, in one call: a page fault for every 11
		 * nodes was a quarter of the time of a program that makes
		 * millions.  As many as the chunk has used, up to
		 * CF_POPULATE: a thread with few paths holds a page or two. */
		uint64_t hdr = offsetof(struct cf_chunk, mem), from = c->ready ? hdr + c->ready : 0;
		uint64_t ahead = c->used < 4096 ? 0 : c->used < CF_POPULATE ? c->used : CF_POPULATE;
		uint64_t end = (hdr + c->used + size + ahead + 4095) & ~(uint64_t)4095;

		if (end > CF_CHUNK)
			end = CF_CHUNK;
		madvise((char *)c + from, end - from, MADV_POPULATE_WRITE); /* a hint */
		c->ready = end - hdr;
	}
	n = (struct cf_node *)(c->mem + c->used);
	return n; /* zeroed by mmap; published by node_publish */
}

static void node_publish(struct cf_thread *t)
{
	struct cf_chunk *c = t->chunk;
	__atomic_store_n(&c->used, c->used + tree_node_size(), __ATOMIC_RELEASE);
}

static uint64_t hash(const struct cf_node *parent, uintptr_t fn)
{
	uint64_t h = ((uint64_t)(uintptr_t)parent ^ (uint64_t)fn * 0x9e3779b97f4a7c15ull) *
		     0xff51afd7ed558ccdull;
	return h ^ h >> 29;
}

/* A table of t->slot: the slots follow the header.  The tables a thread
 * outgrew stay mapped until it exits (a hook interrupted by a signal
 * handler that grew the table may be reading the old one: tree_find). */
struct cf_table {
	struct cf_table *prev; /* the one it replaced */
	uint64_t len;          /* bytes mapped */
	struct cf_node *slot[];
};

static struct cf_table *table_of(struct cf_node **slot)
{
	return (struct cf_table *)((char *)slot - offsetof(struct cf_table, slot));
}

static int table_grow(struct cf_thread *t)
{
	uint64_t n = t->slot ? 2 * (t->mask + 1) : 256;
	uint64_t len = offsetof(struct cf_table, slot) + n * sizeof(struct cf_node *);
	struct cf_table *tab = map(len);
	struct cf_node **s;

	if (!tab)
		return -1;
	tab->len = len;
	tab->prev = t->slot ? table_of(t->slot) : NULL;
	s = tab->slot;
	for (uint64_t i = 0; t->slot && i <= t->mask; i++) {
		struct cf_node *x = t->slot[i];
		uint64_t k;
		if (!x)
			continue;
		for (k = hash(x->parent, x->fn) & (n - 1); s[k]; k = (k + 1) & (n - 1))
			;
		s[k] = x;
	}
	/* The slots before the mask: a reader loads the mask first, so it
	 * never indexes a smaller table with a larger mask. */
	__atomic_store_n(&t->slot, s, __ATOMIC_RELEASE);
	__atomic_store_n(&t->mask, n - 1, __ATOMIC_RELEASE);
	return 0;
}

static void table_free(struct cf_thread *t)
{
	struct cf_table *tab = t->slot ? table_of(t->slot) : NULL;

	t->slot = NULL;
	while (tab) {
		struct cf_table *prev = tab->prev;
		munmap(tab, tab->len);
		tab = prev;
	}
}

/* The parent of fn's node called where cur is current: cur, but at the
 * depth limit the node beside cur (the path stops growing, the counts
 * stay exact). */
static const struct cf_node *parent_of(const struct cf_node *cur)
{
	return cur->depth >= CF_MAX_TREE - 1 && cur->parent ? cur->parent : cur;
}

/* parent's child for fn, or NULL: on its list, or in the table when it
 * has more than CF_NARROW (which were put there before nkids said so). */
static struct cf_node *kid_of(const struct cf_thread *t, const struct cf_node *parent,
			      uintptr_t fn)
{
	struct cf_node *n;

	if (__atomic_load_n(&parent->nkids, __ATOMIC_ACQUIRE) > CF_NARROW) {
		uint64_t mask = __atomic_load_n(&t->mask, __ATOMIC_ACQUIRE);
		struct cf_node **slot = __atomic_load_n(&t->slot, __ATOMIC_ACQUIRE);

		for (uint64_t k = hash(parent, fn) & mask;
		     (n = __atomic_load_n(&slot[k], __ATOMIC_ACQUIRE)); k = (k + 1) & mask)
			if (n->parent == parent && n->fn == fn)
				return n;
		return NULL;
	}
	for (n = __atomic_load_n(&parent->kids, __ATOMIC_ACQUIRE); n; n = n->sib)
		if (n->fn == fn)
			return n;
	return NULL;
}

struct cf_node *tree_find(const struct cf_thread *t, const struct cf_node *cur, uintptr_t fn)
{
	return kid_of(t, parent_of(cur), fn);
}

/* Put n in t's table, which has room. */
static void table_put(struct cf_thread *t, struct cf_node *n)
{
	uint64_t k;

	for (k = hash(n->parent, n->fn) & t->mask; t->slot[k]; k = (k + 1) & t->mask)
		;
	__atomic_store_n(&t->slot[k], n, __ATOMIC_RELEASE);
	t->used++;
}

typedef uint64_t cf_pair __attribute__((vector_size(16)));

void tree_remember(struct cf_node *x, uintptr_t fn, struct cf_node *c)
{
	volatile cf_pair *set = (volatile cf_pair *)&x->way[(fn & CF_SET_MASK) / 8];
	cf_pair v = { fn, (uint64_t)(uintptr_t)c };
	cf_pair p = { (uint64_t)(uintptr_t)x, (uint64_t)(uintptr_t)c };
	char *pairs = (char *)cf_tls.pairs;

	/* The newest first, the other goes.  One store each: a signal
	 * handler's hook sees an old entry or a new one, never the function
	 * of one with the node of the other. */
	set[1] = set[0];
	set[0] = v;
	if (pairs != (char *)cf_no_pairs)
		*(volatile cf_pair *)(pairs + (((uintptr_t)x ^ fn) & CF_L2_MASK)) = p;
}

struct cf_node *tree_child(struct cf_thread *t, struct cf_node *cur, uintptr_t fn)
{
	struct cf_node *parent = (struct cf_node *)parent_of(cur);
	struct cf_node *n = kid_of(t, parent, fn);
	uint32_t nk = parent->nkids;
	uint64_t more = nk < CF_NARROW ? 0 : nk == CF_NARROW ? CF_NARROW + 1 : 1;

	if (n)
		return n;
	/* Room in the table for the children it takes, at most half full. */
	while (more && 2 * (t->used + more) > (t->slot ? t->mask + 1 : 0))
		if (table_grow(t) < 0)
			return NULL;
	n = node_new(t);
	if (!n)
		return NULL;
	n->fn = fn;
	n->parent = parent;
	n->depth = parent->depth + 1;
	n->target = n;
	n->out = UINT32_MAX;
	if (unprofiled(fn)) {
		n->flags = CF_UNPROFILED;
		n->target = parent;
	} else {
		/* A recursive call: fn is on the path already. */
		for (struct cf_node *a = parent; a && a->parent; a = a->parent)
			if (a->fn == fn) {
				n->flags = a == parent ? CF_RECURSIVE | CF_SELF : CF_RECURSIVE;
				n->target = a;
				break;
			}
	}
	n->sib = parent->kids;
	node_publish(t);
	t->nodes++;
	if (nk == CF_NARROW)
		for (struct cf_node *k = parent->kids; k; k = k->sib)
			table_put(t, k);
	if (more)
		table_put(t, n);
	/* Found from here on (kid_of). */
	__atomic_store_n(&parent->kids, n, __ATOMIC_RELEASE);
	__atomic_store_n(&parent->nkids, nk + 1, __ATOMIC_RELEASE);
	return n;
}

int tree_frames_grow(struct cf_thread *t)
{
	struct cf_frame *end = t->base + CF_MAX_FRAMES - 1, *f = cf_tls.limit, *limit;

	if (f >= end)
		return -1;
	limit = end - f > CF_FRAMES_MORE ? f + CF_FRAMES_MORE : end;
	while (f < limit)
		(++f)->node = t->root;
	__atomic_store_n(&cf_tls.limit, limit, __ATOMIC_RELAXED);
	return 0;
}

struct cf_thread *tree_thread(uintptr_t sp)
{
	struct cf_thread *t;

	/* The first hook may come before the collector's start: counting
	 * begins there (tree.h). */
	if (!__atomic_load_n(&cf_on, __ATOMIC_ACQUIRE) && tree_prepare(0) < 0)
		return NULL;
	/* A signal handler's hooks meanwhile do nothing. */
	cf_me = &cf_dead;
	t = keep_reserve(sizeof(*t));
	if (t && !(t->base = frames_get()))
		t->base = map(CF_FRAMES_LEN);
	if (!t || !t->base || !(t->root = node_new(t))) {
		/* Out of memory: this thread is not profiled (the save says
		 * how many were not). */
		__atomic_store_n(&cf_keep->failed, __atomic_add_fetch(&cf_failed, 1, __ATOMIC_RELAXED),
				 __ATOMIC_RELAXED);
		return NULL;
	}
	t->root->out = UINT32_MAX;
	t->root->target = t->root;
	node_publish(t);
	t->hooks = tree_child(t, t->root, (uintptr_t)__cyg_profile_func_enter);
	t->base[0].sp = UINTPTR_MAX; /* the sentinel: never popped */
	t->base[0].node = t->root;   /* fn 0: no exit matches it */
	t->park.node = &t->park_node;
	t->tls = &cf_tls;
	t->pairs = map(CF_PAIRS * sizeof(struct cf_pair));
	t->tid = (uint32_t)syscall(SYS_gettid);
	if (bounds_thread(sp, &t->stack_lo, &t->stack_hi) < 0) {
		t->stack_lo = 0;
		t->stack_hi = UINTPTR_MAX;
	}
	t->next = __atomic_load_n(&cf_threads, __ATOMIC_RELAXED);
	while (!__atomic_compare_exchange_n(&cf_threads, &t->next, t, 1, __ATOMIC_RELEASE,
					    __ATOMIC_RELAXED))
		;
	/* The keep's copy of the head: whoever stores last stores the head
	 * (a store, then a check that it still is). */
	for (struct cf_thread *h = t;; h = __atomic_load_n(&cf_threads, __ATOMIC_ACQUIRE)) {
		__atomic_store_n(&cf_keep->threads, (uint64_t)(uintptr_t)h, __ATOMIC_RELEASE);
		if (__atomic_load_n(&cf_threads, __ATOMIC_ACQUIRE) == h)
			break;
	}
	t->state = CF_READY;
	for (int i = 1; i <= CF_FRAMES_FIRST; i++)
		t->base[i].node = t->root;
	cf_tls.limit = t->base + CF_FRAMES_FIRST;
	if (t->pairs)
		cf_tls.pairs = t->pairs;
	cf_me = t;
	if (tree_key_ok)
		pthread_setspecific(tree_key, (void *)1);
	/* Last: the hooks' fast paths start here. */
	__atomic_store_n(&cf_tls.top, t->base, __ATOMIC_RELEASE);
	return t;
}

struct cf_node *tree_current(struct cf_thread *t)
{
	const struct cf_frame *top;
	struct cf_node *n = NULL;
	struct cf_tls *tls;

	if (t == cf_me) {
		/* The thread itself (its signal handler, an interposed call). */
		top = __atomic_load_n(&cf_tls.top, __ATOMIC_RELAXED);
		n = __atomic_load_n(&top->node, __ATOMIC_RELAXED);
		return n ? n->target : NULL;
	}
	/* The watcher: the thread's TLS is freed after it exits, so its exit
	 * waits for this read to end (tree_thread_exit). */
	__atomic_store_n(&t->reading, 1, __ATOMIC_SEQ_CST);
	tls = __atomic_load_n(&t->tls, __ATOMIC_SEQ_CST);
	if (tls) {
		top = __atomic_load_n(&tls->top, __ATOMIC_RELAXED);
		n = __atomic_load_n(&top->node, __ATOMIC_RELAXED);
		n = n ? __atomic_load_n(&n->target, __ATOMIC_RELAXED) : NULL;
	}
	__atomic_store_n(&t->reading, 0, __ATOMIC_RELEASE);
	return n;
}

void tree_zero(void)
{
	uint64_t size = tree_node_size();

	/* The child's only thread: a flag another thread of the parent held
	 * at the fork is nobody's now. */
	__atomic_store_n(&cf_spare_lock, 0, __ATOMIC_RELEASE);

	for (struct cf_thread *t = cf_threads; t; t = t->next)
		for (struct cf_chunk *c = t->chunks; c; c = c->next)
			for (uint64_t off = 0; off + size <= c->used; off += size) {
				struct cf_node *n = (struct cf_node *)(c->mem + off);
				n->calls = 0;
				n->rcalls = 0;
				n->rsum = 0; /* a save of the parent's may have been under way */
				memset(n->hits, 0, (size_t)cf_nres * 8);
			}
}

void tree_thread_exit(void)
{
	struct cf_thread *t = cf_me;

	if (!t || t == &cf_dead)
		return;
	/* The hooks first: from here they do nothing. */
	__atomic_store_n(&cf_tls.top, &cf_idle, __ATOMIC_RELEASE);
	cf_tls.limit = &cf_idle;
	cf_tls.pairs = cf_no_pairs;
	cf_me = &cf_dead;
	t->state = CF_DEAD;
	__atomic_store_n(&t->tls, NULL, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&t->reading, __ATOMIC_SEQ_CST))
		sched_yield();
	/* The stack goes to the next thread; the tree stays for the save. */
	frames_put(t->base);
	t->base = NULL;
	table_free(t);
	if (t->pairs)
		munmap(t->pairs, CF_PAIRS * sizeof(struct cf_pair));
	t->pairs = NULL;
}

uint64_t tree_nodes(void)
{
	uint64_t n = 0;

	for (struct cf_thread *t = cf_threads; t; t = t->next)
		n += t->nodes + 1;
	return n;
}
