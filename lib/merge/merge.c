/*
 * merge.c - owns merging data files (merge_*).  The files must be of one
 * kind with the same counters, and of one program (the first module's
 * build-id, else its path).  Modules are matched by build-id (else path):
 * each run loads them at its own addresses, so every frame is moved to
 * where the first file that has its module loaded it; a module the
 * others lack is added where it was, if that overlaps nothing.  Stacks
 * are written one after the other (equal ones are not summed: every view
 * aggregates anyway), each sharing its outer frames with the one before,
 * as the collectors write them; BINS are summed by size; THREADS kept;
 * TIMELINE and LIFETIMES side by side (mergetime.h).
 * INFO is the first file's, but for Lisp profiles' functions: those of
 * every file, in one table (lispmerge.h).
 */
#include "merge/merge.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format/format.h"
#include "merge/lispmerge.h"
#include "merge/mergetime.h"
#include "format/newfile.h"
#include "read/reader.h"
#include "base/util.h"

struct mmod {
	const struct prof_module *m; /* the file's where it is placed */
};

static int same_module(const struct prof_module *a, const struct prof_module *b)
{
	if (a->build_id_len && b->build_id_len)
		return a->build_id_len == b->build_id_len &&
		       !memcmp(a->build_id, b->build_id, a->build_id_len);
	return a->path && b->path && !strcmp(a->path, b->path);
}

static int overlaps(const struct prof_module *a, uint64_t start, uint64_t end)
{
	return start < a->end && a->start < end;
}

/* Where each module of file f goes: delta[i] is added to its addresses. */
static int place(const struct profile *f, const struct prof_module ***mods, size_t *nmods,
		 size_t *cap, int64_t *delta, const char *path, char *err, size_t errlen)
{
	for (size_t i = 0; i < f->nmodules; i++) {
		const struct prof_module *m = &f->modules[i];
		size_t k;

		for (k = 0; k < *nmods && !same_module((*mods)[k], m); k++)
			;
		if (k < *nmods) {
			delta[i] = (int64_t)((*mods)[k]->start - m->start);
			continue;
		}
		for (k = 0; k < *nmods && !overlaps((*mods)[k], m->start, m->end); k++)
			;
		if (k < *nmods) {
			snprintf(err, errlen, "%s: module %s lies where %s does in another file: cannot be merged",
				 path, m->path ? m->path : "?", (*mods)[k]->path ? (*mods)[k]->path : "?");
			return -1;
		}
		util_grow(mods, cap, *nmods + 1, sizeof(**mods));
		(*mods)[(*nmods)++] = m;
		delta[i] = 0;
	}
	return 0;
}

/* The delta for address a of file f (the module holding it), 0 if none. */
static int64_t delta_of(const struct profile *f, const int64_t *delta, uint64_t a)
{
	for (size_t i = 0; i < f->nmodules; i++)
		if (a >= f->modules[i].start && a < f->modules[i].end)
			return delta[i];
	return 0;
}

void merge_deltas(const struct profile *to, const struct profile *f, int64_t *delta)
{
	for (size_t i = 0; i < f->nmodules; i++) {
		delta[i] = 0;
		for (size_t k = 0; k < to->nmodules; k++)
			if (same_module(&to->modules[k], &f->modules[i])) {
				delta[i] = (int64_t)(to->modules[k].start - f->modules[i].start);
				break;
			}
	}
}

void merge_matched(const struct profile *to, const struct profile *f, unsigned char *matched)
{
	for (size_t i = 0; i < f->nmodules; i++) {
		matched[i] = 0;
		for (size_t k = 0; k < to->nmodules && !matched[i]; k++)
			matched[i] = (unsigned char)same_module(&to->modules[k], &f->modules[i]);
	}
}

int merge_same_program(const struct profile *a, const struct profile *b)
{
	return a->nmodules && b->nmodules && same_module(&a->modules[0], &b->modules[0]);
}

uint64_t merge_move(const struct profile *f, const int64_t *delta, uint64_t addr)
{
	return (uint64_t)((int64_t)addr + delta_of(f, delta, addr));
}

static const char *kind_name(uint32_t k)
{
	return k == FORMAT_KIND_MPROF ? "an mprof" : k == FORMAT_KIND_CPPROF ? "a cpprof" : "a cfprof";
}

/* How p was recorded: "sampled every N bytes", or "not sampled". */
static const char *sampled_as(const struct profile *p, char *buf, size_t len)
{
	if (!reader_sampled(p))
		return "not sampled";
	snprintf(buf, len, "sampled every %" PRIu64 " bytes", reader_sampled(p));
	return buf;
}


/* INFO keys a merged file writes of its own (below), not the first's. */
static int merged_own(const char *key)
{
	return !strcmp(key, "merged_files") || !strcmp(key, "duration_ns");
}

/* The runs' time, each its own (INFO duration_ns, a merged file's; else
 * end_ns less start_ns), summed: pprof's Duration of a merged profile
 * (it was the first run's: 21 compilers of a make, 27.72 ms, their
 * samples 1,630% of it). */
static const char *outdur(const struct profile *p, int n, char *buf, size_t len)
{
	uint64_t sum = 0;

	for (int i = 0; i < n; i++) {
		const char *d = reader_info(&p[i], "duration_ns"), *a = reader_info(&p[i], "start_ns"),
			   *b = reader_info(&p[i], "end_ns");
		uint64_t t0 = a ? strtoull(a, NULL, 10) : 0, t1 = b ? strtoull(b, NULL, 10) : 0;

		sum += d ? strtoull(d, NULL, 10) : t1 >= t0 ? t1 - t0 : 0;
		if (sum > INT64_MAX) /* as the reader takes it: at most 2^63 - 1 */
			sum = INT64_MAX;
	}
	snprintf(buf, len, "%" PRIu64, sum);
	return buf;
}

/*
 * INFO's totals of the runs (the runtime's exact counts: a sampled
 * file's header gives its allocations and bytes from them), summed into
 * buf, when key is one and every file has it; the first file's value
 * stood for all of them.  0 if not.
 */
static int info_sum(const struct profile *p, int n, const char *key, char *buf, size_t len)
{
	static const char *const totals[] = { "allocs", "frees", "bytes", "bytes_freed",
					      "unknown_frees", "dropped" };
	uint64_t sum = 0;
	size_t t = 0;

	while (t < sizeof totals / sizeof totals[0] && strcmp(key, totals[t]))
		t++;
	if (t == sizeof totals / sizeof totals[0])
		return 0;
	for (int i = 0; i < n; i++) {
		const char *v = reader_info(&p[i], key);
		char *end;
		uint64_t x;

		errno = 0;
		if (!v || !*v || *v == '-' || (x = strtoull(v, &end, 10), errno || *end) ||
		    x > UINT64_MAX - sum)
			return 0;
		sum += x;
	}
	snprintf(buf, len, "%" PRIu64, sum);
	return 1;
}

int merge_files(const char *const *paths, int n, const char *out, char *err, size_t errlen)
{
	struct profile *p = xcalloc((size_t)n, sizeof(*p));
	const struct prof_module **mods = NULL;
	int64_t **delta = xcalloc((size_t)n, sizeof(*delta));
	size_t nmods = 0, cap = 0, nstacks = 0;
	uint64_t *f = xcalloc(FORMAT_MAX_DEPTH + 1, sizeof(uint64_t));
	uint64_t *prev = xcalloc(FORMAT_MAX_DEPTH + 1, sizeof(uint64_t));
	uint64_t ctr[FORMAT_MAX_COUNTERS];
	uint64_t bins[FORMAT_NBINS][4];
	uint64_t counter_sum = 0, bin_sum = 0;
	int loaded = 0, rc = -1, threads = 1, fd = -1;
	char tmp[4096], why[256];
	static unsigned char buf[1 << 16];
	struct format_writer w;
	struct lispmerge lm = { 0 };
	uint32_t ninfo = 1;

	for (int i = 0; i < n; i++) {
		if (reader_load(paths[i], &p[i], why, sizeof why) < 0) {
			snprintf(err, errlen, "%s: %s", paths[i], why);
			goto out;
		}
		loaded++;
		if (p[i].kind != p[0].kind) {
			snprintf(err, errlen, "%s: %s profile, %s %s one: cannot be merged", paths[i],
				 kind_name(p[i].kind), paths[0], kind_name(p[0].kind));
			goto out;
		}
		if (p[i].ncounters != p[0].ncounters) {
			/* Which: the first counter one file has and the other
			 * lacks (mprof run --leaks adds lost_bytes and seven
			 * more; cpprof's are the -e resources). */
			const struct profile *more = p[i].ncounters > p[0].ncounters ? &p[i] : &p[0],
					     *less = more == &p[0] ? &p[i] : &p[0];
			const char *extra = "?";

			for (size_t k = 0; k < more->ncounters && extra[0] == '?'; k++) {
				size_t j = 0;

				while (j < less->ncounters && strcmp(less->counter_names[j], more->counter_names[k]))
					j++;
				if (j == less->ncounters)
					extra = more->counter_names[k];
			}
			snprintf(err, errlen, "%s: other counters than %s (%s has %s, %s not%s): cannot be merged",
				 paths[i], paths[0], more == &p[0] ? paths[0] : paths[i], extra,
				 more == &p[0] ? paths[i] : paths[0],
				 !strcmp(extra, "lost_bytes") ? "; one was recorded with --leaks" : "");
			goto out;
		}
		for (size_t k = 0; k < p[0].ncounters; k++)
			if (strcmp(p[i].counter_names[k], p[0].counter_names[k])) {
				snprintf(err, errlen, "%s: counter %s where %s has %s: cannot be merged",
					 paths[i], p[i].counter_names[k], paths[0], p[0].counter_names[k]);
				goto out;
			}
		if (reader_sampled(&p[i]) != reader_sampled(&p[0])) {
			/* The header's figures are the samples' at one rate. */
			char a[64], b[64];

			snprintf(err, errlen, "%s: %s where %s is %s: cannot be merged", paths[i],
				 sampled_as(&p[i], a, sizeof a), paths[0], sampled_as(&p[0], b, sizeof b));
			goto out;
		}
		if (p[i].nmodules && p[0].nmodules && !same_module(&p[i].modules[0], &p[0].modules[0])) {
			snprintf(err, errlen, "%s: another program (%s) than %s (%s): cannot be merged",
				 paths[i], p[i].modules[0].path ? p[i].modules[0].path : "?", paths[0],
				 p[0].modules[0].path ? p[0].modules[0].path : "?");
			goto out;
		}
		/* Each file's sums are below 2^63 (reader_check.c); the
		 * merged file's must be too, or no tool would read it. */
		if (p[i].counter_sum > INT64_MAX - counter_sum ||
		    p[i].bin_sum > INT64_MAX - bin_sum) {
			snprintf(err, errlen,
				 "%s: with the files before it, the counters add up to 2^63 or more: "
				 "cannot be merged",
				 paths[i]);
			goto out;
		}
		counter_sum += p[i].counter_sum;
		bin_sum += p[i].bin_sum;
		delta[i] = xcalloc(p[i].nmodules + 1, sizeof(int64_t));
		if (place(&p[i], &mods, &nmods, &cap, delta[i], paths[i], err, errlen) < 0)
			goto out;
		nstacks += p[i].nstacks;
		threads &= p[i].has_threads;
	}
	lispmerge_init(&lm, p, delta, n);
	/* Exclusively, under a random name: never through a planted link. */
	fd = newfile_open(out, tmp, sizeof tmp);
	if (fd < 0) {
		snprintf(err, errlen, "%s: %s", out, newfile_strerror(fd));
		goto out;
	}
	format_writer_init(&w, fd, buf, sizeof buf, p[0].kind);
	format_begin_section(&w, FORMAT_SEC_INFO);
	/* The first file's facts, but the Lisp functions of all (lispmerge.h). */
	for (size_t k = 0; k < p[0].ninfo; k++)
		ninfo += !lispmerge_owns(p[0].info[k].key) && !merged_own(p[0].info[k].key);
	format_put_u32(&w, ninfo + (uint32_t)lm.ninfo + 1);
	for (size_t k = 0; k < p[0].ninfo; k++) {
		char sum[32];

		/* The runs merged, below: a merged file's count, not twice. */
		if (lispmerge_owns(p[0].info[k].key) || merged_own(p[0].info[k].key))
			continue;
		format_put_str(&w, p[0].info[k].key);
		format_put_str(&w, info_sum(p, n, p[0].info[k].key, sum, sizeof sum)
					   ? sum : p[0].info[k].value);
	}
	for (size_t k = 0; k < lm.ninfo; k++) {
		format_put_str(&w, lm.info[k].key);
		format_put_str(&w, lm.info[k].value);
	}
	{
		uint64_t runs = 0;

		/* A merged file counts its runs. */
		for (int i = 0; i < n; i++) {
			const char *v = reader_info(&p[i], "merged_files");
			uint64_t x = v ? strtoull(v, NULL, 10) : 0;

			runs += x >= 1 && x < (1u << 30) ? x : 1;
		}
		snprintf(why, sizeof why, "%" PRIu64, runs);
	}
	format_put_str(&w, "merged_files");
	format_put_str(&w, why);
	format_put_str(&w, "duration_ns");
	format_put_str(&w, outdur(p, n, why, sizeof why));
	format_end_section(&w);
	format_begin_section(&w, FORMAT_SEC_MODULES);
	format_put_u32(&w, (uint32_t)nmods);
	for (size_t k = 0; k < nmods; k++) {
		format_put_u64(&w, mods[k]->start);
		format_put_u64(&w, mods[k]->end);
		format_put_u64(&w, mods[k]->bias);
		format_put_u64(&w, mods[k]->offset);
		format_put_str(&w, mods[k]->path);
		format_put_blob(&w, mods[k]->build_id ? mods[k]->build_id : (const unsigned char *)"",
				mods[k]->build_id_len);
	}
	format_end_section(&w);
	format_begin_section(&w, FORMAT_SEC_COUNTERS);
	format_put_u32(&w, (uint32_t)p[0].ncounters);
	for (size_t k = 0; k < p[0].ncounters; k++) {
		format_put_str(&w, p[0].counter_names[k]);
		format_put_str(&w, p[0].counter_units[k]);
	}
	format_end_section(&w);
	format_begin_section(&w, FORMAT_SEC_STACKS);
	format_put_u64(&w, nstacks);
	{
		uint32_t pd = 0;
		for (int i = 0; i < n; i++)
			for (size_t s = 0; s < p[i].nstacks; s++) {
				const struct prof_stack *ps = &p[i].stacks[s];
				uint32_t d = reader_frames(&p[i], s, f), shared = 0;

				for (uint32_t j = 0; j < d; j++)
					f[j] = lispmerge_frame(&lm, i, merge_move(&p[i], delta[i], f[j]));
				/* Outer frames in common with the stack before, as
				 * the collectors share them. */
				if (pd)
					shared = format_common_outer(f, d, prev, pd);
				format_put_stack(&w, d, ps->flags, shared ? 1 : 0, shared, f,
						 reader_counts(&p[i], s, ctr), (uint32_t)p[i].ncounters);
				memcpy(prev, f, d * sizeof(uint64_t));
				pd = d;
			}
	}
	format_end_section(&w);
	if (p[0].kind == FORMAT_KIND_MPROF) {
		uint32_t nb = 0;
		memset(bins, 0, sizeof bins);
		for (int i = 0; i < n; i++)
			for (size_t b = 0; b < p[i].nbins; b++) {
				const struct prof_bin *x = &p[i].bins[b];
				if (x->size >= FORMAT_NBINS)
					continue;
				bins[x->size][0] += x->allocs;
				bins[x->size][1] += x->frees;
				bins[x->size][2] += x->bytes;
				bins[x->size][3] += x->freed;
			}
		for (int b = 0; b < FORMAT_NBINS; b++)
			nb += bins[b][0] || bins[b][1];
		format_begin_section(&w, FORMAT_SEC_BINS);
		format_put_u32(&w, nb);
		for (int b = 0; b < FORMAT_NBINS; b++)
			if (bins[b][0] || bins[b][1]) {
				format_put_u32(&w, (uint32_t)b);
				for (int c = 0; c < 4; c++)
					format_put_u64(&w, bins[b][c]);
			}
		format_end_section(&w);
		/* The heaps over time, side by side (mergetime.h). */
		mergetime_put(&w, p, n);
	}
	if (threads) {
		format_begin_section(&w, FORMAT_SEC_THREADS);
		format_put_u64(&w, nstacks);
		for (int i = 0; i < n; i++)
			for (size_t s = 0; s < p[i].nstacks; s++)
				format_put_u32(&w, p[i].stacks[s].tid);
		format_end_section(&w);
	}
	if (format_writer_finish(&w) < 0 || close(fd) < 0 || rename(tmp, out) < 0) {
		snprintf(err, errlen, "%s: %s", out, strerror(errno ? errno : EIO));
		unlink(tmp);
		fd = -1;
		goto out;
	}
	fd = -1;
	rc = 0;
out:
	if (fd >= 0) {
		close(fd);
		unlink(tmp);
	}
	lispmerge_release(&lm);
	for (int i = 0; i < loaded; i++)
		reader_release(&p[i]);
	for (int i = 0; i < n; i++)
		free(delta[i]);
	free(delta);
	free(p);
	free(mods);
	free(f);
	free(prev);
	return rc;
}

int merge_main(int argc, char **argv)
{
	const char *out = NULL;
	const char **files = xcalloc((size_t)argc + 1, sizeof(*files));
	char err[1024];
	int n = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-o") && i + 1 < argc) {
			out = argv[++i];
		} else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			printf("usage: %s merge FILES... -o OUT\n"
			       "Makes one profile of many runs of a program, or of a program and its\n"
			       "forked children (FILE.PID); OUT is written whole or not at all.\n",
			       util_progname);
			free(files);
			return 0;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			die("merge: unknown option '%s' (usage: %s merge FILES... -o OUT)", argv[i],
			    util_progname);
		} else {
			files[n++] = argv[i];
		}
	}
	if (!out || !n)
		die("merge: usage: %s merge FILES... -o OUT", util_progname);
	if (merge_files(files, n, out, err, sizeof err) < 0)
		die("merge: %s", err);
	free(files);
	return 0;
}
