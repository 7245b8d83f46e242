/*
 * save.c - owns cfprof's data file (cfsave_*): INFO (the run; the mean
 * interval of each resource as "interval.NAME"), MODULES, COUNTERS
 * ("calls", then one per sampled resource), STACKS (one per node of every
 * thread's calling context tree that has counts or a descendant with
 * counts: the logical path, every frame a function's entry address, with
 * the exact calls along that path and the hits charged while it was
 * current) and THREADS.
 *
 * A node is written after its parent and refers to the parent's stack for
 * its outer frames (doc/format.md, STACKS: ref and shared), so a node
 * costs a few bytes however deep its path: the file grows with distinct
 * paths, never with run length.  A thread's root, the empty path, is
 * written when samples found no instrumented function current: the
 * "(unprofiled)" line.
 *
 * Runs at exit, outside signal context.  Other threads may still be
 * running: the nodes each chunk held when the save began are written, and
 * later ones are not (each node is complete once its chunk's size says
 * so).
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "format.h"
#include "keep.h"
#include "modules.h"
#include "outfile.h"
#include "state.h"
#include "save.h"
#include "tree.h"

static unsigned char cs_buf[1 << 16];

static void put_kv(struct format_writer *w, const char *k, const char *v)
{
	format_put_str(w, k);
	format_put_str(w, v);
}

/* INFO's entries known from the start (into kv, with numbers in num):
 * the file's, and the keep's for a file the launcher writes (keep.h).
 * Their number. */
static int static_info(const char *kv[][2], char num[][24], char key[][64])
{
	int n = 0;

	kv[n][0] = "cmdline", kv[n++][1] = outfile_cmdline();
	kv[n][0] = "exe", kv[n++][1] = outfile_exe();
	kv[n][0] = "start_ns", kv[n++][1] = outfile_u64(num[0], cp.start_ns);
	kv[n][0] = "random", kv[n++][1] = cp.random ? "1" : "0";
	kv[n][0] = "cpu_clock";
	kv[n++][1] = cp.clock_needed ? (cp.clock_perf ? "perf task-clock" : "POSIX CPU-time timer")
				     : "none";
	kv[n][0] = "collector", kv[n++][1] = "cfprof-runtime 1 (-finstrument-functions hooks)";
	kv[n][0] = "max_tree_depth", kv[n++][1] = outfile_u64(num[1], CF_MAX_TREE);
	for (int c = 0; c < cp.nres; c++) {
		int r = cp.res[c];
		strcpy(key[c], "interval.");
		strcat(key[c], res_table[r].name);
		kv[n][0] = key[c], kv[n++][1] = outfile_u64(num[2 + c], cp.interval[r]);
	}
	return n;
}

void cfsave_keep(void)
{
	const char *kv[8 + RES_N][2];
	char num[2 + RES_N][24], key[RES_N][64];
	int n = static_info(kv, num, key);

	for (int i = 0; i < n; i++)
		keep_info(kv[i][0], kv[i][1]);
	keep_counter("calls", "calls");
	for (int c = 0; c < cp.nres; c++)
		keep_counter(res_table[cp.res[c]].name, "hits");
}

static void put_info(struct format_writer *w, uint64_t nstacks)
{
	const char *kv[8 + RES_N][2];
	char num[2 + RES_N][24], key[RES_N][64], more[5][24];
	int n = static_info(kv, num, key);
	uint64_t nthreads = 0;

	for (struct cf_thread *t = cf_threads; t; t = t->next)
		nthreads++;
	format_begin_section(w, FORMAT_SEC_INFO);
	format_put_u32(w, (uint32_t)n + 6);
	for (int i = 0; i < n; i++)
		put_kv(w, kv[i][0], kv[i][1]);
	put_kv(w, "pid", outfile_u64(more[0], (uint64_t)getpid()));
	put_kv(w, "end_ns", outfile_u64(more[1], cp_now(CLOCK_REALTIME)));
	put_kv(w, "paths", outfile_u64(more[2], nstacks));
	put_kv(w, "threads", outfile_u64(more[3], nthreads));
	put_kv(w, "threads_not_profiled", outfile_u64(more[4], cf_failed));
	put_kv(w, "ended", cp_ended);
	format_end_section(w);
}

static void put_counters(struct format_writer *w)
{
	format_begin_section(w, FORMAT_SEC_COUNTERS);
	format_put_u32(w, 1 + (uint32_t)cp.nres);
	format_put_str(w, "calls");
	format_put_str(w, "calls");
	for (int c = 0; c < cp.nres; c++) {
		format_put_str(w, res_table[cp.res[c]].name);
		format_put_str(w, "hits");
	}
	format_end_section(w);
}

static int has_counts(const struct cf_node *n)
{
	if (__atomic_load_n(&n->calls, __ATOMIC_RELAXED) || n->rsum)
		return 1;
	for (int k = 0; k < cf_nres; k++)
		if (__atomic_load_n(&n->hits[k], __ATOMIC_RELAXED))
			return 1;
	return 0;
}

/*
 * What the save writes: every thread's chunks (oldest thread first) with
 * the bytes each held when the save began.  Thread i's chunks are
 * chunk[first[i] .. first[i + 1]).
 */
struct plan {
	struct cf_thread **t;
	uint64_t *first;
	struct cf_chunk **chunk;
	uint64_t *used;
	uint64_t *nout; /* per thread: its nodes to write (mark) */
	uint64_t nthreads, nstacks;
	void *mem;
	size_t len;
};

/* The node at byte off of chunk k. */
static struct cf_node *at(const struct plan *p, uint64_t k, uint64_t off)
{
	return (struct cf_node *)(p->chunk[k]->mem + off);
}

/* The calls of each CF_SELF node counted in the nodes it is the self of
 * (tree.h: rcalls), into its rsum; clear: back to 0.  Every rsum is 0
 * between saves: put_node clears what it wrote, and a node it does not
 * write has none (a self has counts, and is not unprofiled); a fork's
 * child clears them all (tree_zero). */
static void sum_repeats(const struct plan *p, int clear)
{
	uint64_t size = tree_node_size();

	for (uint64_t k = 0; k < p->first[p->nthreads]; k++)
		for (uint64_t off = 0; off + size <= p->used[k]; off += size) {
			struct cf_node *x = at(p, k, off);
			uint64_t r = __atomic_load_n(&x->rcalls, __ATOMIC_RELAXED);
			if (clear)
				x->rsum = 0;
			else if (r && x->self)
				x->self->rsum += r;
		}
}

/*
 * Mark the nodes to write: a node with counts, or with a descendant to
 * write, and not unprofiled (its calls are its caller's).  A node comes
 * after its parent, so walking backwards sees every child before its
 * parent.  A thread's root is written for its own hits only: the paths
 * below it do not refer to it.  Returns how many.
 */
static uint64_t mark(const struct plan *p, uint64_t i)
{
	uint64_t size = tree_node_size(), n = 0;

	for (uint64_t k = p->first[i + 1]; k-- > p->first[i];)
		for (uint64_t off = p->used[k]; off >= size;) {
			struct cf_node *x = at(p, k, off -= size);
			x->out = UINT32_MAX;
			if (x->flags & CF_UNPROFILED) {
				x->need = 0;
				continue;
			}
			if (x->parent) {
				x->need |= has_counts(x);
				if (x->need)
					x->parent->need = 1;
			} else {
				x->need = has_counts(x);
			}
			n += x->need;
		}
	return n;
}

static int plan_make(struct plan *p)
{
	uint64_t nt = 0, nc = 0, k = 0;
	struct cf_thread *head = __atomic_load_n(&cf_threads, __ATOMIC_ACQUIRE);
	char *m;

	for (struct cf_thread *t = head; t; t = t->next) {
		nt++;
		for (struct cf_chunk *c = t->chunks; c; c = c->next)
			nc++;
	}
	nc += nt; /* threads may add a chunk meanwhile: a chunk more is kept */
	p->len = nt * sizeof(void *) + (nt + 1) * 8 + nc * (sizeof(void *) + 8) + nt * 8;
	m = mmap(NULL, p->len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return -1;
	p->mem = m;
	p->t = (struct cf_thread **)m;
	p->first = (uint64_t *)(m + nt * sizeof(void *));
	p->chunk = (struct cf_chunk **)(m + nt * sizeof(void *) + (nt + 1) * 8);
	p->used = (uint64_t *)(m + nt * sizeof(void *) + (nt + 1) * 8 + nc * sizeof(void *));
	p->nout = p->used + nc;
	p->nthreads = nt;
	p->nstacks = 0;
	for (struct cf_thread *t = head; t; t = t->next)
		p->t[--nt] = t; /* oldest first: the registry is newest first */
	for (uint64_t i = 0; i < p->nthreads; i++) {
		p->first[i] = k;
		for (struct cf_chunk *c = p->t[i]->chunks; c && k < nc; c = c->next, k++) {
			p->chunk[k] = c;
			p->used[k] = __atomic_load_n(&c->used, __ATOMIC_ACQUIRE);
		}
	}
	p->first[p->nthreads] = k;
	sum_repeats(p, 0);
	for (uint64_t i = 0; i < p->nthreads; i++)
		p->nstacks += p->nout[i] = mark(p, i);
	return 0;
}

static void put_node(struct format_writer *w, struct cf_node *x, uint64_t index)
{
	uint64_t c[1 + RES_N], f = x->fn;
	uint32_t nc = 1 + (uint32_t)cf_nres;

	c[0] = __atomic_load_n(&x->calls, __ATOMIC_RELAXED) + x->rsum;
	x->rsum = 0; /* for the next save (sum_repeats) */
	for (int k = 0; k < cf_nres; k++)
		c[1 + k] = __atomic_load_n(&x->hits[k], __ATOMIC_RELAXED);
	x->out = (uint32_t)index;
	if (!x->parent) /* the root: the empty path */
		format_put_stack(w, 0, FORMAT_STACK_ENTRY, 0, 0, &f, c, nc);
	else if (x->depth == 1)
		format_put_stack(w, 1, FORMAT_STACK_ENTRY, 0, 0, &f, c, nc);
	else
		format_put_stack(w, x->depth, FORMAT_STACK_ENTRY, index - x->parent->out,
				 x->depth - 1, &f, c, nc);
}

/* Each node to write, in order. */
static void put_all(struct format_writer *w, const struct plan *p)
{
	uint64_t size = tree_node_size(), index = 0;

	for (uint64_t i = 0; i < p->nthreads; i++)
		for (uint64_t k = p->first[i]; k < p->first[i + 1]; k++)
			for (uint64_t off = 0; off + size <= p->used[k]; off += size) {
				struct cf_node *x = at(p, k, off);
				if (x->need)
					put_node(w, x, index++);
			}
}

static void put_stacks(struct format_writer *w, const struct plan *p)
{
	format_begin_section(w, FORMAT_SEC_STACKS);
	format_put_u64(w, p->nstacks);
	put_all(w, p);
	format_end_section(w);
	/* Each node's thread, in the same order: a thread's are together. */
	format_begin_section(w, FORMAT_SEC_THREADS);
	format_put_u64(w, p->nstacks);
	for (uint64_t i = 0; i < p->nthreads; i++)
		for (uint64_t j = 0; j < p->nout[i]; j++)
			format_put_u32(w, p->t[i]->tid);
	format_end_section(w);
}

int cfsave_save(const char *aside)
{
	struct format_writer w;
	struct outfile o;
	struct plan p;
	int rc;

	if (plan_make(&p) < 0) {
		cp_warn("cannot write ", cp.out, ": out of memory");
		return -1;
	}
	if (outfile_open(&o, cp.out, cp.root_pid, aside, cp_warn) < 0) {
		sum_repeats(&p, 1);
		munmap(p.mem, p.len);
		return -1;
	}
	format_writer_init(&w, o.fd, cs_buf, sizeof cs_buf, FORMAT_KIND_CFPROF);
	put_info(&w, p.nstacks);
	if (modules_write_all(&w) < 0 && !w.error)
		w.error = ENOMEM;
	put_counters(&w);
	put_stacks(&w, &p);
	rc = format_writer_finish(&w);
	munmap(p.mem, p.len);
	return outfile_close(&o, rc);
}
