/*
 * writer.c - owns saving the profile (writer_*): the save lock, the data
 * file's sections (INFO, MODULES, COUNTERS, STACKS, BINS; TIMELINE is
 * timeline.c's) through the
 * encoder of lib/format/format.h, and the atomic replace (a temporary made by
 * lib/format/newfile.h, renamed).
 *
 * Nothing here allocates: buffers are static (guarded by the save lock),
 * the encoder writes with write(2), and the caller holds the recursion
 * guard so anything libc allocates on our behalf goes to the real malloc.
 * Counters are read while other threads go on updating them: an autosave
 * is a snapshot a few events wide; the save at exit is exact for a
 * program whose other threads are done.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h> /* rename(2) only: no stdio streams here */
#include <string.h>
#include <unistd.h>

#include "execs.h"
#include "format.h"
#include "keep.h"
#include "lock.h"
#include "modules.h"
#include "newfile.h"
#include "outfile.h"
#include "stacks.h"
#include "unwind.h"
#include "writer.h"

static struct lock writer_mutex = LOCK_INIT;
static unsigned char writer_buf[1 << 16];
static char writer_path[PATH_MAX + 32];
static char writer_tmp[PATH_MAX + 64];
static uint64_t writer_bins[FORMAT_NBINS][4];

int writer_lock(void)
{
	return lock_take(&writer_mutex, "the save lock");
}

int writer_trylock(void)
{
	return lock_try(&writer_mutex);
}

void writer_unlock(void)
{
	lock_give(&writer_mutex);
}

void writer_lock_reinit(void)
{
	lock_reinit(&writer_mutex);
}

/* dst = a b c (each may be NULL); -1 if it does not fit in cap. */
static int join(char *dst, size_t cap, const char *a, const char *b, const char *c)
{
	const char *part[3] = { a, b, c };
	size_t n = 0, k;
	int i;

	for (i = 0; i < 3; i++) {
		if (!part[i])
			continue;
		k = strlen(part[i]);
		if (n + k >= cap)
			return -1;
		memcpy(dst + n, part[i], k);
		n += k;
	}
	dst[n] = 0;
	return 0;
}

static void put_info(struct format_writer *w, const char *reason, const struct writer_source *src)
{
	struct writer_totals t;
	char pid[24], start[24], end[24], allocs[24], frees[24], bytes[24], freed[24],
		unknown[24], dropped[24];

	src->read_totals(&t);
	const char *kv[][2] = {
		{ "cmdline", outfile_cmdline() },
		{ "exe", outfile_exe() },
		{ "pid", outfile_u64(pid, (uint64_t)getpid()) },
		{ "start_ns", outfile_u64(start, src->start_ns) },
		{ "end_ns", outfile_u64(end, src->now_ns()) },
		{ "allocs", outfile_u64(allocs, t.allocs) },
		{ "frees", outfile_u64(frees, t.frees) },
		{ "bytes", outfile_u64(bytes, t.bytes) },
		{ "bytes_freed", outfile_u64(freed, t.freed) },
		{ "unknown_frees", outfile_u64(unknown, t.unknown_frees) },
		{ "dropped", outfile_u64(dropped, t.dropped) },
		{ "reason", reason },
		{ "monitor", "mprof-runtime 1" },
		{ "unwinder", unwind_name },
	};
	size_t i, n = sizeof kv / sizeof kv[0], nx = 0, nm = 0, ne = src->ended ? 1 : 0;
	static const char *extra[256][2]; /* under the save lock */

	if (src->extra_info)
		nx = src->extra_info(extra, sizeof extra / sizeof extra[0]);
	if (src->more_info_count)
		nm = src->more_info_count();
	format_begin_section(w, FORMAT_SEC_INFO);
	format_put_u32(w, (uint32_t)(n + ne + nx + nm));
	for (i = 0; i < n; i++) {
		format_put_str(w, kv[i][0]);
		format_put_str(w, kv[i][1]);
	}
	if (ne) {
		format_put_str(w, "ended");
		format_put_str(w, src->ended);
	}
	for (i = 0; i < nx; i++) {
		format_put_str(w, extra[i][0]);
		format_put_str(w, extra[i][1]);
	}
	if (nm)
		src->more_info_put(w);
	format_end_section(w);
}

static void put_counters(struct format_writer *w, unsigned n)
{
	unsigned i;

	format_begin_section(w, FORMAT_SEC_COUNTERS);
	format_put_u32(w, n);
	for (i = 0; i < n; i++) {
		format_put_str(w, format_mprof_counter_names[i]);
		format_put_str(w, format_mprof_counter_units[i]);
	}
	format_end_section(w);
}

/*
 * The current profile's stacks (after a restart, not the old ones), a
 * batch at a time: their counters read at once (what is done per block
 * is not done per stack), then encoded in one call.  A record that keeps
 * only its inner frames, the outer ones being the outermost of an
 * earlier record of this profile, is written so; one that keeps all its
 * frames, as it is; another (its outer frames kept by a record of an
 * old profile) is laid out whole, alone.
 */
static int64_t writer_peak_bytes, writer_peak_objects; /* put_stacks' sums */

static void put_stacks(struct format_writer *w, const struct writer_source *src)
{
	static uint64_t frames[STACKS_MAX_DEPTH];
	/* under the save lock */
	static uint64_t ctrs[WRITER_BATCH][MPROF_NCOUNTERS_SCAN];
	static struct format_stack batch[WRITER_BATCH];
	uint32_t base = stacks_base(), n = stacks_count(), i, k, nb, m;

	writer_peak_bytes = writer_peak_objects = 0;
	format_begin_section(w, FORMAT_SEC_STACKS);
	format_put_u64(w, n - base);
	for (i = base; i < n; i += nb) {
		nb = n - i < WRITER_BATCH ? n - i : WRITER_BATCH;
		src->read_counters(i, nb, ctrs);
		for (k = m = 0; k < nb; k++) {
			const struct stacks_rec *r = stacks_get(i + k), *q = r->parent;
			struct format_stack *s = &batch[m++];

			writer_peak_bytes += (int64_t)ctrs[k][MPROF_C_PEAK_BYTES];
			writer_peak_objects += (int64_t)ctrs[k][MPROF_C_PEAK_OBJECTS];
			s->depth = r->depth;
			s->flags = r->flags;
			s->own = r->frames;
			s->counts = ctrs[k];
			s->ref = 0;
			s->shared = r->depth - r->nown;
			if (!q)
				continue;
			if (q->idx >= base && q->idx < i + k && q->depth - r->pbase == s->shared) {
				s->ref = i + k - q->idx;
				continue;
			}
			format_put_stacks(w, batch, m - 1, src->ncounters);
			format_put_stack(w, r->depth, r->flags, 0, 0, stacks_frames(r, frames), ctrs[k],
					 src->ncounters);
			m = 0;
		}
		format_put_stacks(w, batch, m, src->ncounters);
	}
	format_end_section(w);
}

/* Only the bins something fell into; a snapshot, so the count matches. */
static void put_bins(struct format_writer *w, const struct writer_source *src)
{
	uint32_t i, n = 0;
	int k;

	src->read_bins(writer_bins);
	for (i = 0; i < FORMAT_NBINS; i++)
		if (writer_bins[i][0] | writer_bins[i][1])
			n++;
	format_begin_section(w, FORMAT_SEC_BINS);
	format_put_u32(w, n);
	for (i = 0; i < FORMAT_NBINS; i++) {
		if (!(writer_bins[i][0] | writer_bins[i][1]))
			continue;
		format_put_u32(w, i);
		for (k = 0; k < 4; k++)
			format_put_u64(w, writer_bins[i][k]);
	}
	format_end_section(w);
}

static void fail(const struct writer_source *src, const char *path, int err)
{
	const char *name = strerrorname_np(err);
	char what[PATH_MAX + 48];

	/* The last save, under a launcher: it writes the file from the keep
	 * (a worker that gave up the right to write it), and says so to a
	 * terminal; not a line in the program's stderr (nginx's log). */
	if (src->ended && !src->aside && keep_watched()) {
		keep_save_failed(path, err); /* the launcher says why */
		return;
	}

	if (join(what, sizeof what, "cannot write ", path, NULL) < 0)
		join(what, sizeof what, "cannot write the profile", NULL, NULL);
	src->fail(what, name ? name : "error");
}

int writer_save(const char *reason, const struct writer_source *src)
{
	struct format_writer w;
	struct outfile_fsz fsz;
	char pid[25];
	int fd, rc, e = errno, final;

	/* A forked child (or a process the launcher did not start) must not
	 * clobber the root's file. */
	pid[0] = '.';
	outfile_u64(pid + 1, (uint64_t)getpid());
	if (join(writer_path, sizeof writer_path, src->out, getpid() == src->root_pid ? NULL : pid,
		 src->aside) < 0) {
		fail(src, src->out, ENAMETOOLONG);
		errno = e;
		return -1;
	}
	/* Exclusively, under a random name: never through a planted link.
	 * Past the program's file-size limit, a failed write, not SIGXFSZ
	 * (outfile.h). */
	outfile_fsz_hold(&fsz);
	fd = newfile_open(writer_path, writer_tmp, sizeof writer_tmp);
	if (fd < 0) {
		outfile_fsz_release(&fsz);
		fail(src, writer_path, -fd);
		errno = e;
		return -1;
	}
	format_writer_init(&w, fd, writer_buf, sizeof writer_buf, FORMAT_KIND_MPROF);
	put_info(&w, reason, src);
	if (modules_write_all(&w) < 0 && !w.error)
		w.error = ENOMEM;
	put_counters(&w, src->ncounters);
	put_stacks(&w, src);
	put_bins(&w, src);
	if (src->put_timeline)
		src->put_timeline(&w, writer_peak_bytes > 0 ? (uint64_t)writer_peak_bytes : 0,
				  writer_peak_objects, stacks_base());
	rc = format_writer_finish(&w);
	final = src->ended || !strcmp(reason, "stop");
	/* The root's keep, or a forked child's own (keep.h); a file aside is
	 * not the one the keep stands for. */
	if (rc == 0 && !src->aside && (getpid() == src->root_pid || keep_forked()))
		keep_wrote(fd);
	if (close(fd) < 0 && rc == 0)
		rc = -errno;
	if (rc == 0 && rename(writer_tmp, writer_path) < 0)
		rc = -errno;
	outfile_fsz_release(&fsz);
	if (rc == 0 && !src->aside && (getpid() == src->root_pid || keep_forked()))
		keep_saved(final);
	if (rc < 0) {
		unlink(writer_tmp);
		fail(src, writer_path, -rc);
		errno = e;
		return -1;
	}
	if (src->aside)
		execs_wrote(writer_path);
	errno = e;
	return 0;
}
