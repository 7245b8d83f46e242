/*
 * leakscan.c - owns the leak scan at exit (leakscan_*): the table of live
 * objects, the marking from the roots, the classes and their counts by
 * stack (leakscan.h).
 *
 * The objects, from the address map (in address order) and the custom map
 * (sorted here), go in one array sorted by address; a custom object lying
 * inside a block malloc gave its pool is nested in it (parent).  A word
 * points to the innermost object that holds it; a pointer to an object's
 * first byte also points to every enclosing object starting there (a pool's
 * chunk and its first object).  An object's contents are scanned without
 * its nested objects, which are objects of their own.
 *
 * Marking as memcheck's leak check does it, from its description: a root
 * (or a reachable object) that holds a start pointer makes its target
 * reachable; an interior pointer, or any pointer held by a possibly lost
 * object, makes it possibly lost at most.  An object is rescanned when its
 * class rises, so the result is the fixed point whatever the order.  Then
 * the objects nothing reached are taken in address order: each one still
 * unreached is definitely lost, and every unreached object it reaches
 * (through any pointer) indirectly lost, even one that was definitely lost
 * before (the lost head of a list comes after its nodes).  The worklist is
 * an array in memory from mmap: an object is pushed at most twice while
 * marking, once after.
 *
 * Memory that may change or go away under the scan is read through a copy
 * (process_vm_readv on ourselves, or after checking /proc/self/maps):
 * every object when other threads are alive, custom objects always (a pool
 * may have unmapped them without saying so), and any object or root that
 * the maps read at the start do not show readable whole.
 */
#include "leakscan.h"
#include "lifetime.h"

#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "addrmap.h"
#include "arena.h"
#include "custom.h"
#include "leakroots.h"
#include "real.h"

/* An object's state: its class, and what has been done with it. */
enum { C_UNREACHED, C_POSSIBLE, C_REACHABLE, C_INDIRECT, C_MASK = 3 };
#define ST_CUSTOM 4  /* from the custom map: no malloc chunk around it */
#define ST_COPY 8    /* read through a copy (custom, or not all mapped) */
#define ST_SEEN_P 16 /* contents scanned while possibly lost */
#define ST_SEEN_R 32 /* contents scanned while reachable */

#define COPY_BYTES 65536
/* memcheck's bound on the words of a table taken for a vtable. */
#define VTABLE_WORDS 20

struct obj {
	uintptr_t start;
	uint64_t size;
	uint32_t idx;    /* its stack */
	uint32_t parent; /* the object it lies in, + 1; 0: none */
};

/* The scan's state, in memory from mmap: not a root, whatever links the
 * monitor into the program. */
struct scan {
	struct obj *o;
	size_t n, cap, nmalloc; /* o[0..nmalloc) from the address map */
	uint8_t *st;
	uint32_t *work;
	size_t nwork;
	uintptr_t lo, span; /* every object lies in [lo, lo + span) */
	int other;          /* other threads alive: read objects through copies */
	int copy_ok;        /* process_vm_readv: 1 works, -1 refused, 0 untried */
	int marking;        /* 1 marking, 0 gathering a lost object's clique */
	int definite;       /* the words come from a root or a reachable object */
	int glibc;          /* the real allocator is glibc's malloc */
	int alloc_data;     /* the words are its data (LEAKROOTS_ALLOC) */
	size_t leader;      /* the clique's lost object */
	unsigned char *buf; /* COPY_BYTES */
	int failed;
};

static struct scan *S;
static uint64_t (*ls_counts)[8];
static uint32_t ls_base, ls_count;
static int ls_asked, ls_done;
static uint64_t ls_time;
static char ls_status[80];

/* ---- reading memory ---- */

/*
 * Copy n bytes at src into dst without faulting: how many could be read
 * (a prefix).  process_vm_readv on our own pid stops at the first page
 * that is not there; where it is refused (seccomp, an old kernel), the
 * maps read at the start vouch for the range.
 */
static size_t copy(void *dst, uintptr_t src, size_t n)
{
	if (S->copy_ok >= 0) {
		struct iovec l = { dst, n }, r = { (void *)src, n };
		long k = syscall(SYS_process_vm_readv, (long)getpid(), &l, 1L, &r, 1L, 0L);

		if (k >= 0) {
			S->copy_ok = 1;
			return (size_t)k;
		}
		if (errno == EFAULT || S->copy_ok > 0)
			return 0;
		S->copy_ok = -1;
	}
	if (!leakroots_readable(src, src + n))
		return 0;
	memcpy(dst, (const void *)src, n);
	return n;
}

/* The word at a (8-aligned) of object i, into *w: 0, or -1 if unreadable. */
static int obj_word(size_t i, uintptr_t a, uint64_t *w)
{
	if (S->other || (S->st[i] & ST_COPY))
		return copy(w, a, 8) == 8 ? 0 : -1;
	*w = *(const uint64_t *)a;
	return 0;
}

/* ---- finding objects ---- */

static int holds(const struct obj *o, uintptr_t v)
{
	return v - o->start < o->size || v == o->start;
}

/* The innermost object holding v, or -1. */
static long find(uintptr_t v)
{
	size_t a = 0, b = S->n;
	long i;

	if (v - S->lo >= S->span)
		return -1;
	while (a < b) {
		size_t m = a + (b - a) / 2;
		if (S->o[m].start <= v)
			a = m + 1;
		else
			b = m;
	}
	for (i = (long)a - 1; i >= 0; i = (long)S->o[i].parent - 1)
		if (holds(&S->o[i], v))
			return i;
	return -1;
}

static void push(size_t i)
{
	S->work[S->nwork++] = (uint32_t)i;
}

/* Raise object i to class c (possible or reachable), rescanning it if
 * that is a change. */
static void raise_to(size_t i, int c)
{
	int now = S->st[i] & C_MASK;

	if ((c == C_REACHABLE && now != C_REACHABLE) || (c == C_POSSIBLE && now == C_UNREACHED)) {
		S->st[i] = (uint8_t)((S->st[i] & ~C_MASK) | c);
		push(i);
	}
}

/* ---- memcheck's heuristics: interior pointers taken for start pointers ---- */

/* A table of at least two pointers to code (and null pointers) in a
 * module: what a vtable looks like. */
static int vtable_like(uintptr_t a)
{
	uintptr_t end;
	int code = 0;

	if ((a & 7) || a < 4096 || !leakroots_in_module(a, &end))
		return 0;
	for (int k = 0; k < VTABLE_WORDS && a + 8 <= end; k++, a += 8) {
		uintptr_t f = *(const uintptr_t *)a;
		if (!f)
			continue;
		if (!leakroots_in_code(f))
			return 0;
		if (++code == 2)
			return 1;
	}
	return 0;
}

/*
 * Whether the interior pointer v into object i is one of those memcheck
 * takes for a start pointer (its --leak-check-heuristics, all by default):
 * the characters of a reference-counted std::string (length, capacity,
 * count, then v: the block is 3 words + capacity + 1); a block whose
 * first word is the length of the rest (sqlite: length64); an array made
 * by new[] past its element count (newarray); a pointer to a base class's
 * part of an object whose first word, like the one at v, is a vtable
 * pointer (multipleinheritance).
 */
static int heuristic(size_t i, uintptr_t v)
{
	const struct obj *o = &S->o[i];
	uint64_t off = v - o->start, w0, w1, inner;

	if (o->size < 8 || obj_word(i, o->start, &w0) < 0)
		return 0;
	if (off == 24 && o->size >= 25 && obj_word(i, o->start + 8, &w1) == 0 &&
	    w1 == o->size - 25 && w0 <= w1)
		return 1;
	if (off == 8 && w0 && (w0 == o->size - 8 || (o->size - 8) % w0 == 0))
		return 1;
	return !(v & 7) && off + 8 <= o->size && obj_word(i, v, &inner) == 0 && vtable_like(inner) &&
	       vtable_like(w0);
}

/* ---- marking ---- */

/*
 * Whether v, inside object i, is where the chunk after i's begins: glibc's
 * malloc keeps such pointers in its own state (the top chunk, the bins of
 * free chunks), and a chunk's header overlaps the last word of the chunk
 * before it.  Its chunks: a size word (low 3 bits flags) before the
 * object, 16 bytes from the chunk's start.
 */
static int chunk_after(size_t i, uintptr_t v)
{
	const struct obj *o = &S->o[i];
	uint64_t w;

	return !(S->st[i] & ST_CUSTOM) && v != o->start && obj_word(i, o->start - 8, &w) == 0 &&
	       v == o->start - 16 + (w & ~(uint64_t)7);
}

/* A word found in a root or an object. */
static void word(uintptr_t v)
{
	long i;

	if (v - S->lo >= S->span || (i = find(v)) < 0)
		return;
	if (S->alloc_data && chunk_after((size_t)i, v))
		return;
	if (!S->marking) {
		/* A lost object's clique: whatever it reaches that nothing
		 * else did, by any pointer. */
		do {
			if ((S->st[i] & C_MASK) == C_UNREACHED && (size_t)i != S->leader) {
				S->st[i] = (uint8_t)((S->st[i] & ~C_MASK) | C_INDIRECT);
				push((size_t)i);
			}
			if (v != S->o[i].start)
				break;
			i = (long)S->o[i].parent - 1;
		} while (i >= 0 && S->o[i].start == v);
		return;
	}
	if (v == S->o[i].start) {
		for (; i >= 0 && S->o[i].start == v; i = (long)S->o[i].parent - 1)
			raise_to((size_t)i, S->definite ? C_REACHABLE : C_POSSIBLE);
		return;
	}
	switch (S->st[i] & C_MASK) {
	case C_REACHABLE:
		return;
	case C_POSSIBLE:
		if (!S->definite)
			return;
		/* fall through */
	default:
		raise_to((size_t)i, S->definite && heuristic((size_t)i, v) ? C_REACHABLE : C_POSSIBLE);
	}
}

/* The aligned words of [lo, hi), read in place or through copies. */
static void scan_range(uintptr_t lo, uintptr_t hi, int through_copy)
{
	lo = (lo + 7) & ~(uintptr_t)7;
	hi &= ~(uintptr_t)7;
	if (!through_copy) {
		for (const uintptr_t *w = (const uintptr_t *)lo; (uintptr_t)w < hi; w++)
			word(*w);
		return;
	}
	while (lo < hi) {
		size_t n = hi - lo < COPY_BYTES ? hi - lo : COPY_BYTES, got = copy(S->buf, lo, n);
		const uintptr_t *w = (const uintptr_t *)(void *)S->buf;

		for (size_t k = 0; k < got / 8; k++)
			word(w[k]);
		if (got < n)
			return; /* the rest is gone */
		lo += n;
	}
}

/* Object i's words, but those of the objects nested in it. */
static void scan_obj(size_t i)
{
	const struct obj *o = &S->o[i];
	uintptr_t at = o->start, end = o->start + o->size;
	int through_copy = S->other || (S->st[i] & ST_COPY);

	for (size_t k = i + 1; k < S->n && S->o[k].start < end; k++) {
		if (S->o[k].parent != i + 1)
			continue;
		scan_range(at, S->o[k].start, through_copy);
		if (S->o[k].start + S->o[k].size > at)
			at = S->o[k].start + S->o[k].size;
	}
	if (at < end)
		scan_range(at, end, through_copy);
}

/* Scan what the worklist holds, and what that pushes. */
static void drain(void)
{
	while (S->nwork) {
		size_t i = S->work[--S->nwork];
		uint8_t *st = &S->st[i];

		if (S->marking) {
			int r = (*st & C_MASK) == C_REACHABLE;
			if (*st & (r ? ST_SEEN_R : ST_SEEN_P | ST_SEEN_R))
				continue;
			*st |= r ? ST_SEEN_R : ST_SEEN_P;
			S->definite = r;
		}
		scan_obj(i);
	}
}

static void root_range(void *ctx, uintptr_t lo, uintptr_t hi, int kind)
{
	(void)ctx;
	S->definite = 1;
	S->alloc_data = kind == LEAKROOTS_ALLOC && S->glibc;
	scan_range(lo, hi, kind == LEAKROOTS_OTHER || !leakroots_readable(lo, hi));
	S->alloc_data = 0;
	drain();
}

static void root_value(void *ctx, uintptr_t v)
{
	(void)ctx;
	S->definite = 1;
	word(v);
	drain();
}

static void root_block(void *ctx, uintptr_t v)
{
	long i = find(v);

	(void)ctx;
	if (i >= 0) {
		raise_to((size_t)i, C_REACHABLE);
		drain();
	}
}

/* ---- the table of objects ---- */

static int grow_objs(void)
{
	size_t cap = S->cap ? 2 * S->cap : 65536;
	struct obj *o = arena_map(cap * sizeof *o);

	if (!o)
		return -1;
	if (S->o) {
		memcpy(o, S->o, S->n * sizeof *o);
		arena_unmap(S->o, S->cap * sizeof *o);
	}
	S->o = o;
	S->cap = cap;
	return 0;
}

static int gather(void *ctx, uintptr_t p, uint32_t idx, uint64_t size)
{
	(void)ctx;
	if (S->n == S->cap && grow_objs() < 0) {
		S->failed = 1;
		return 1;
	}
	/* A lifetime sample's index stands for its stack's (lifetime.h). */
	S->o[S->n++] = (struct obj){ p, size, lifetime_real(idx), 0 };
	return 0;
}

/* By address, the larger first where two start together (a pool's chunk
 * before its first object). */
static int before(const struct obj *a, const struct obj *b)
{
	return a->start < b->start || (a->start == b->start && a->size > b->size);
}

static void sift(struct obj *o, size_t i, size_t n)
{
	for (;;) {
		size_t c = 2 * i + 1;
		struct obj t;
		if (c >= n)
			return;
		if (c + 1 < n && before(&o[c], &o[c + 1]))
			c++;
		if (!before(&o[i], &o[c]))
			return;
		t = o[i], o[i] = o[c], o[c] = t;
		i = c;
	}
}

/* Heapsort (no allocation, n log n whatever the order). */
static void sort_objs(struct obj *o, size_t n)
{
	for (size_t i = n / 2; i-- > 0;)
		sift(o, i, n);
	for (size_t k = n; k-- > 1;) {
		struct obj t = o[0];
		o[0] = o[k], o[k] = t;
		sift(o, 0, k);
	}
}

/*
 * The two sorted runs (the address map's, the custom map's) into one,
 * with the custom objects marked; each object's parent; the bounds.
 * The address map's objects never overlap: one whose size was read while
 * being written is cut at the next.  Without custom objects (the common
 * case) the address map's run is the table as it is: no copy, no nesting.
 */
static int merge(void)
{
	size_t n = S->n, a = 0, b = S->nmalloc, k = 0, top = 0;
	struct obj *o = S->o, *m = o;
	uint32_t *open;
	uintptr_t hi = 0;

	for (size_t i = 0; i + 1 < S->nmalloc; i++)
		if (o[i].size > o[i + 1].start - o[i].start)
			o[i].size = o[i + 1].start - o[i].start;
	sort_objs(o + S->nmalloc, n - S->nmalloc);
	S->st = arena_map(n ? n : 1);
	S->work = arena_map((2 * n + 1) * sizeof *S->work);
	if (n > S->nmalloc && !(m = arena_map(n * sizeof *m)))
		return -1;
	if (!S->st || !S->work)
		return -1;
	while (a < S->nmalloc || b < n) {
		int take_b = a == S->nmalloc || (b < n && before(&o[b], &o[a]));
		if (take_b)
			S->st[k] = ST_CUSTOM | ST_COPY;
		m[k] = o[take_b ? b++ : a++];
		/* An object freed behind the monitor's back (__libc_free) may
		 * be unmapped by now. */
		if (!leakroots_readable(m[k].start - 16, m[k].start + m[k].size))
			S->st[k] |= ST_COPY;
		if (m[k].start + m[k].size > hi)
			hi = m[k].start + m[k].size;
		k++;
	}
	if (m != o) {
		arena_unmap(S->o, S->cap * sizeof *o);
		S->o = m;
		S->cap = n;
		/* Nesting: the objects still open at each start, on a stack. */
		open = S->work;
		for (size_t i = 0; i < n; i++) {
			uintptr_t s = m[i].start, e = s + m[i].size;
			while (top && m[open[top - 1]].start + m[open[top - 1]].size <= s)
				top--;
			if (top && e <= m[open[top - 1]].start + m[open[top - 1]].size)
				m[i].parent = open[top - 1] + 1;
			if (m[i].size)
				open[top++] = (uint32_t)i;
		}
	}
	S->lo = n ? m[0].start : 0;
	S->span = n ? hi - S->lo + 1 : 0; /* + 1: a 0-byte object at the end */
	return 0;
}

/* ---- the run ---- */

static void status(const char *a, long num, const char *b)
{
	char digits[24], *p = ls_status, *end = ls_status + sizeof ls_status - 1;
	int k = 0;

	for (; *a && p < end; a++)
		*p++ = *a;
	if (num >= 0) {
		do
			digits[k++] = (char)('0' + num % 10);
		while ((num /= 10) && k < (int)sizeof digits);
		while (k && p < end)
			*p++ = digits[--k];
	}
	for (; b && *b && p < end; b++)
		*p++ = *b;
	*p = 0;
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Count each object of this profile's stacks in its class. */
static int count_classes(void)
{
	static const int slot[4] = { [C_UNREACHED] = 0, [C_INDIRECT] = 1, [C_POSSIBLE] = 2,
				     [C_REACHABLE] = 3 };

	ls_counts = arena_map(((size_t)(ls_count - ls_base) + 1) * sizeof *ls_counts);
	if (!ls_counts)
		return -1;
	for (size_t i = 0; i < S->n; i++) {
		const struct obj *o = &S->o[i];
		int c = slot[S->st[i] & C_MASK];

		if (o->idx < ls_base || o->idx >= ls_count)
			continue; /* an object of the profile before a restart */
		ls_counts[o->idx - ls_base][2 * c] += o->size;
		ls_counts[o->idx - ls_base][2 * c + 1]++;
	}
	return 0;
}

static void release(void)
{
	if (S->o)
		arena_unmap(S->o, S->cap * sizeof *S->o);
	if (S->st)
		arena_unmap(S->st, S->n ? S->n : 1);
	if (S->work)
		arena_unmap(S->work, (2 * S->n + 1) * sizeof *S->work);
	if (S->buf)
		arena_unmap(S->buf, COPY_BYTES);
	arena_unmap(S, sizeof *S);
	S = NULL;
	leakroots_close();
}

/* The scan proper, below the frame whose registers were taken. */
static __attribute__((noinline)) int scan(const struct leakroots_regs *regs)
{
	struct leakroots_sink sink = { NULL, root_range, root_value, root_block };
	const char *why = NULL;
	int others = 0;

	if (!(S = arena_map(sizeof *S)) || !(S->buf = arena_map(COPY_BYTES))) {
		status("skipped: out of memory", -1, NULL);
		if (S)
			release();
		return -1;
	}
	if (leakroots_open((const void *)&leakscan_run, (const void *)real_hot.malloc, &others,
			   &why) < 0) {
		status("skipped: ", -1, why);
		release();
		return -1;
	}
	S->other = others > 0;
	S->glibc = real_is_glibc();
	/* This thread's last leaf of the address map is a computed address:
	 * in a program that links the monitor in, it is in a root. */
	addrmap_last.k = 0;
	addrmap_last.base = 0;
	if (addrmap_each(gather, NULL) < 0 || (S->nmalloc = S->n, custom_each(gather, NULL) < 0) ||
	    merge() < 0) {
		status("skipped: out of memory", -1, NULL);
		release();
		return -1;
	}
	S->marking = 1;
	leakroots_each(regs, &sink);
	S->marking = 0;
	for (size_t i = 0; i < S->n; i++) {
		if ((S->st[i] & C_MASK) != C_UNREACHED)
			continue;
		S->leader = i;
		push(i);
		drain();
	}
	if (count_classes() < 0) {
		status("skipped: out of memory", -1, NULL);
		release();
		return -1;
	}
	if (others > 1)
		status("", others, " other threads scanned by their stacks, not their registers");
	else if (others)
		status("1 other thread scanned by its stack, not its registers", -1, NULL);
	else
		status("complete", -1, NULL);
	release();
	return 0;
}

/*
 * Its own frame holds only the registers: the caller's callee-saved ones
 * and the stack pointer, the roots when the call to exit is not found on
 * the stack (leakroots.c).  Everything the scan computes lies below.
 */
__attribute__((noinline)) int leakscan_run(uint32_t base, uint32_t count)
{
	struct leakroots_regs regs;
	uint64_t t0 = now_ns();
	int rc, e = errno;

#if defined(__x86_64__)
	__asm__ volatile("movq %%rbx, 0(%0)\n\t"
			 "movq %%rbp, 8(%0)\n\t"
			 "movq %%r12, 16(%0)\n\t"
			 "movq %%r13, 24(%0)\n\t"
			 "movq %%r14, 32(%0)\n\t"
			 "movq %%r15, 40(%0)\n\t"
			 "movq %%rsp, 48(%0)\n\t"
			 :
			 : "r"(regs.r)
			 : "memory");
#else
	__builtin_unwind_init();
	memset(&regs, 0, sizeof regs);
	regs.r[LEAKROOTS_NREGS - 1] = (uintptr_t)__builtin_frame_address(0);
#endif
	ls_asked = 1;
	ls_base = base;
	ls_count = count;
	rc = scan(&regs);
	ls_done = rc == 0;
	ls_time = now_ns() - t0;
	errno = e;
	return rc;
}

int leakscan_done(void)
{
	return ls_done;
}

void leakscan_counters(uint32_t idx, uint64_t *out)
{
	if (ls_done && idx >= ls_base && idx < ls_count)
		memcpy(out, ls_counts[idx - ls_base], sizeof ls_counts[0]);
	else
		memset(out, 0, sizeof ls_counts[0]);
}

const char *leakscan_status(void)
{
	return ls_asked ? ls_status : NULL;
}

uint64_t leakscan_ns(void)
{
	return ls_time;
}
