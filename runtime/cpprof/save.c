/*
 * save.c - owns the cpprof data file (sv_*): INFO (the run, and the mean
 * interval of each resource as "interval.NAME"), MODULES, COUNTERS (one per
 * resource, its hits), STACKS (each distinct stack and thread with its
 * hits) and THREADS (the thread of each stack), through lib/format/format.h;
 * written whole or not at all (outfile.h).
 *
 * Runs once, at exit (or never: a program that ends in _exit or a signal
 * writes nothing), outside signal context.  Threads still running may add
 * samples meanwhile: the table's entries are complete once published, and
 * the stack count is taken first, so the file is consistent.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h> /* rename(2) */
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "format.h"
#include "keep.h"
#include "langname.h"
#include "modules.h"
#include "outfile.h"
#include "save.h"
#include "state.h"
#include "table.h"
#include "unwind.h"

static unsigned char sv_buf[1 << 16];

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
	const char *clock = cp.clock_perf ? "perf task-clock" : "POSIX CPU-time timer";
	int n = 0;

	kv[n][0] = "cmdline", kv[n++][1] = outfile_cmdline();
	kv[n][0] = "exe", kv[n++][1] = outfile_exe();
	kv[n][0] = "start_ns", kv[n++][1] = outfile_u64(num[0], cp.start_ns);
	kv[n][0] = "random", kv[n++][1] = cp.random ? "1" : "0";
	kv[n][0] = "cpu_clock", kv[n++][1] = cp.clock_needed ? clock : "none";
	kv[n][0] = "sampler", kv[n++][1] = "cpprof-runtime 1";
	kv[n][0] = "unwinder", kv[n++][1] = "cpprof CFI walk from the signal context (no fallback)";
	for (int c = 0; c < cp.nres; c++) {
		int r = cp.res[c];
		strcpy(key[c], "interval.");
		strcat(key[c], res_table[r].name);
		kv[n][0] = key[c], kv[n++][1] = outfile_u64(num[1 + c], cp.interval[r]);
	}
	return n;
}

void sv_keep(void)
{
	const char *kv[8 + RES_N][2];
	char num[1 + RES_N][24], key[RES_N][64];
	int n = static_info(kv, num, key);

	for (int i = 0; i < n; i++)
		keep_info(kv[i][0], kv[i][1]);
	for (int c = 0; c < cp.nres; c++)
		keep_counter(res_table[cp.res[c]].name, "hits");
}

static void put_info(struct format_writer *w)
{
	const char *kv[8 + RES_N][2];
	char num[1 + RES_N][24], key[RES_N][64], more[3][24];
	int n = static_info(kv, num, key);
	size_t nlang = langname_info_count(); /* a Python program's names */

	format_begin_section(w, FORMAT_SEC_INFO);
	format_put_u32(w, (uint32_t)(n + 4 + nlang));
	for (int i = 0; i < n; i++)
		put_kv(w, kv[i][0], kv[i][1]);
	put_kv(w, "pid", outfile_u64(more[0], (uint64_t)getpid()));
	put_kv(w, "end_ns", outfile_u64(more[1], cp_now(CLOCK_REALTIME)));
	put_kv(w, "dropped", outfile_u64(more[2], tab_dropped()));
	put_kv(w, "ended", cp_ended);
	langname_info_put(w);
	format_end_section(w);
}

static void put_counters(struct format_writer *w)
{
	format_begin_section(w, FORMAT_SEC_COUNTERS);
	format_put_u32(w, (uint32_t)cp.nres);
	for (int c = 0; c < cp.nres; c++) {
		format_put_str(w, res_table[cp.res[c]].name);
		format_put_str(w, "hits");
	}
	format_end_section(w);
}

/* The entries now in the table, into ents[] (at most cap). */
static uint64_t collect(const struct tab_ent **ents, uint64_t cap)
{
	uint64_t n = 0, slots = tab_slots();

	for (uint64_t i = 0; i < slots && n < cap; i++) {
		const struct tab_ent *e = tab_get(i);
		if (e)
			ents[n++] = e;
	}
	return n;
}

static void put_stacks(struct format_writer *w, const struct tab_ent **ents, uint64_t n)
{
	const uint64_t *pf = NULL;
	uint32_t pd = 0;

	format_begin_section(w, FORMAT_SEC_STACKS);
	format_put_u64(w, n);
	for (uint64_t i = 0; i < n; i++) {
		const struct tab_ent *e = ents[i];
		const uint64_t *f = tab_frames(e, cp.nres);
		uint64_t c[RES_N];
		/* Outer frames in common with the stack before it go by reference. */
		uint32_t shared = pf ? format_common_outer(f, (uint32_t)e->depth, pf, pd) : 0;

		for (int k = 0; k < cp.nres; k++)
			c[k] = __atomic_load_n(&e->c[k], __ATOMIC_RELAXED);
		format_put_stack(w, (uint32_t)e->depth, e->flags, shared ? 1 : 0, shared, f, c,
				 (uint32_t)cp.nres);
		pf = f;
		pd = (uint32_t)e->depth;
	}
	format_end_section(w);
}

static void put_threads(struct format_writer *w, const struct tab_ent **ents, uint64_t n)
{
	format_begin_section(w, FORMAT_SEC_THREADS);
	format_put_u64(w, n);
	for (uint64_t i = 0; i < n; i++)
		format_put_u32(w, ents[i]->tid);
	format_end_section(w);
}

int sv_save(const char *aside)
{
	struct format_writer w;
	struct outfile o;
	uint64_t cap = tab_count(), n;
	const struct tab_ent **ents;
	size_t ents_len = (size_t)(cap + 1) * sizeof(*ents);
	int rc;

	ents = mmap(NULL, ents_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ents == MAP_FAILED) {
		cp_warn("cannot write ", cp.out, ": out of memory");
		return -1;
	}
	n = collect(ents, cap);
	if (outfile_open(&o, cp.out, cp.root_pid, aside, cp_warn) < 0) {
		munmap(ents, ents_len);
		return -1;
	}
	format_writer_init(&w, o.fd, sv_buf, sizeof sv_buf, FORMAT_KIND_CPPROF);
	put_info(&w);
	if (modules_write_all(&w) < 0 && !w.error)
		w.error = ENOMEM;
	put_counters(&w);
	put_stacks(&w, ents, n);
	put_threads(&w, ents, n);
	rc = format_writer_finish(&w);
	munmap(ents, ents_len);
	return outfile_close(&o, rc);
}
