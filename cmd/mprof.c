/*
 * mprof.c - the mprof command: display the four tables of a profile, run a
 * program under the monitor, or dump a data file raw.  A thin front end:
 * parse options, call lib/, print.  See doc/mprof.1.
 */
#include "model/callgraph.h"
#include "base/escape.h"
#include "export/export.h"
#include "format/format.h"
#include "run/keeper.h"
#include "run/launch.h"
#include "merge/merge.h"
#include "model/model.h"
#include "read/reader.h"
#include "symbols/symbols.h"
#include "views/tables.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DEFAULT_DATA "mprof.data"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: mprof [options] [a.out [mprof.data]]   print the four tables\n"
		"       mprof run [--leaks | --sample [BYTES]] [-o FILE] [--] PROG [ARGS...]\n"
		"                                               run PROG under the monitor; --leaks\n"
		"                                               classifies what is kept at exit,\n"
		"                                               --sample records one allocation\n"
		"                                               in every BYTES (512k)\n"
		"       mprof snapshot [-o FILE] PID            the profile of running process PID\n"
		"       mprof dump [--shared] [mprof.data]      print the data file raw\n"
		"       mprof timeline [--csv] [a.out] [mprof.data]\n"
		"                                               the heap over time: a chart, or CSV\n"
		"       mprof export --format folded|pprof|html [--counter NAME] [--full-names] [-o OUT]\n"
		"                    [--diff-base BASE] [--alloc-fn NAME]... [a.out] [mprof.data]\n"
		"                                               the profile for other tools\n"
		"       mprof merge FILES... -o OUT             many profiles of one program as one\n"
		"       mprof diff [-verbose|-normal|-terse] [-noleaktable] [-depth N]\n"
		"                  [-alloc-fn NAME]... [-all-frames] [--full-names] [a.out] BASE NEW\n"
		"                                               the four tables of NEW minus BASE\n"
		"       mprof diff --paths [--counter NAME] [--root FUNC] [--threshold F]\n"
		"                  [--full-names] [a.out] BASE NEW\n"
		"                                               call path fractions side by side\n"
		"\n"
		"Display options (one dash or two):\n"
		"  -verbose       every bin, every leak chain\n"
		"  -normal        bins and leak chains above 0.5%% (default)\n"
		"  -terse         bins and leak chains above 1%%\n"
		"  -leaktable     print the memory leak table (default)\n"
		"  -noleaktable   do not print the memory leak table\n"
		"  -peaktable     print the chains live at the heap's peak (default)\n"
		"  -nopeaktable   do not print them\n"
		"  -offsets       leak table: tell call sites apart by +offset in the function\n"
		"  -lines         leak table: file:line of each call site\n"
		"  -depth N       leak and peak tables: the program's frames in a partial\n"
		"                 chain, the allocating function's included (default 5;\n"
		"                 the C++ library's are shown and not counted)\n"
		"  -alloc-fn NAME an allocator wrapper (xmalloc): its callers allocate,\n"
		"                 as memcheck's --alloc-fn (given again: another one)\n"
		"  -all-frames    keep frames outer to main (_start, __libc_start_main)\n"
		"  -full-names    C++ names as demangled, with template arguments and\n"
		"                 parameters (default: std::vector::push_back)\n"
		"  -help          this text\n"
		"\n"
		"The program writes mprof.data in the directory it started in; mprof run\n"
		"-o FILE names it (MPROF_OUT=FILE without mprof run), MPROF_AUTOSAVE=N\n"
		"saves every N allocations.\n"
		"a.out is optional: the data file records every module's path and build-id.\n");
}

static void load(const char *path, struct profile *p)
{
	char err[256];

	if (reader_load(path, p, err, sizeof(err)) < 0)
		die("%s: %s", path, err);
}

/* Another tool's profile: which, and the tool that reads it. */
static void not_mprof(const char *path, const struct profile *p)
{
	if (p->kind == FORMAT_KIND_CPPROF)
		die("%s: not mprof allocation data (a cpprof sample profile): read it with cpprof",
		    path);
	if (p->kind == FORMAT_KIND_CFPROF)
		die("%s: not mprof allocation data (a cfprof call profile): read it with cfprof",
		    path);
	die("%s: not mprof allocation data", path);
}

/*
 * Every frame of every stack, or with --shared each stack's own frames
 * then "^REF:N" (the outermost N frames of stack REF, counted from 0), as
 * the file keeps them: output in proportion to the file, where a file of
 * deep stacks sharing their outer frames expands a thousandfold.
 */
static int cmd_dump(int argc, char **argv)
{
	const char *path = NULL;
	static uint64_t frames[FORMAT_MAX_DEPTH];
	static uint64_t counts[FORMAT_MAX_COUNTERS];
	struct profile p;
	int shared = 0;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--shared") == 0 || strcmp(argv[i], "-shared") == 0) {
			shared = 1;
		} else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			printf("usage: mprof dump [--shared] [mprof.data]\n"
			       "Prints the data file raw, every stack's frames in full\n"
			       "(--shared: as the file keeps them, each stack's own frames\n"
			       "then ^REF:N, the outer N frames of stack REF).\n");
			return 0;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			die("dump: unknown option '%s' (usage: mprof dump [--shared] [mprof.data])",
			    argv[i]);
		} else if (path) {
			die("dump: one data file at most (usage: mprof dump [--shared] [mprof.data])");
		} else {
			path = argv[i];
		}
	}
	if (!path)
		path = DEFAULT_DATA;

	load(path, &p);
	/* Strings from the file, escaped: one line each, whatever they hold. */
	printf("format %u kind %u\n", p.version, p.kind);
	for (size_t i = 0; i < p.ninfo; i++) {
		fputs("info ", stdout);
		escape_put(stdout, p.info[i].key);
		putchar(' ');
		escape_put(stdout, p.info[i].value);
		putchar('\n');
	}
	for (size_t i = 0; i < p.nmodules; i++) {
		const struct prof_module *m = &p.modules[i];
		printf("module 0x%" PRIx64 " 0x%" PRIx64 " 0x%" PRIx64 " 0x%" PRIx64 " ", m->start, m->end,
		       m->bias, m->offset);
		for (uint32_t k = 0; k < m->build_id_len; k++)
			printf("%02x", m->build_id[k]);
		printf("%s ", m->build_id_len ? "" : "-");
		escape_put(stdout, m->path);
		putchar('\n');
	}
	for (size_t i = 0; i < p.ncounters; i++) {
		fputs("counter ", stdout);
		escape_put(stdout, p.counter_names[i]);
		putchar(' ');
		escape_put(stdout, p.counter_units[i]);
		putchar('\n');
	}
	for (size_t i = 0; i < p.nstacks; i++) {
		const struct prof_stack *s = &p.stacks[i];
		uint32_t n = shared ? reader_own(&p, i, 0, frames) : reader_frames(&p, i, frames);

		printf("stack %u %u", s->depth, s->flags);
		reader_counts(&p, i, counts);
		for (size_t k = 0; k < p.ncounters; k++)
			printf(" %" PRIu64, counts[k]);
		printf(" :");
		for (uint32_t d = 0; d < n; d++)
			printf(" 0x%" PRIx64, frames[d]);
		if (shared && s->shared)
			printf(" ^%u:%u", s->ref, s->shared);
		printf("\n");
	}
	for (size_t i = 0; i < p.nbins; i++)
		printf("bin %u %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", p.bins[i].size,
		       p.bins[i].allocs, p.bins[i].frees, p.bins[i].bytes, p.bins[i].freed);
	if (p.timeline) {
		const struct prof_timeline *t = p.timeline;

		printf("timeline %u", t->flags);
		for (uint32_t k = 0; k < t->ntrack; k++)
			printf(" %" PRIu64, t->track[k]);
		printf("\n");
		for (uint32_t i = 0; i < t->npoints; i++) {
			const struct prof_tl_point *q = &t->points[i];

			printf("point %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %u", q->ns, q->live,
			       q->objects, q->allocated, q->flags);
			for (uint32_t k = 0; k < q->ntop; k++)
				printf(" %u:%" PRIu64, q->top[k].slot, q->top[k].bytes);
			printf("\n");
		}
	}
	for (size_t i = 0; i < p.nlifetimes; i++) {
		const struct prof_lifetime *l = &p.lifetimes[i];

		printf("lifetime %" PRIu64 " %" PRIu64 " :", l->stack, l->samples);
		for (int k = 0; k < FORMAT_LT_BUCKETS; k++)
			printf(" %" PRIu64, l->t[k]);
		printf(" :");
		for (int k = 0; k < FORMAT_LT_BUCKETS; k++)
			printf(" %" PRIu64, l->b[k]);
		printf(" : %" PRIu64 "\n", l->live);
	}
	reader_release(&p);
	return 0;
}

#define RUN_USAGE "usage: mprof run [--leaks | --sample[=BYTES] | --sample BYTES] [-o FILE] [--] PROG [ARGS...]"

/* BYTES of --sample=BYTES: digits, then k, m or g (KiB, MiB, GiB); as
 * the monitor reads MPROF_SAMPLE.  0, or -1. */
static int sample_arg(const char *s, char *out, size_t len)
{
	char *end;
	unsigned long long v;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || v == 0 || (*end && (strchr("kKmMgG", *end) == NULL || end[1])))
		return -1;
	v <<= *end == 'k' || *end == 'K' ? 10 : *end == 'm' || *end == 'M' ? 20 : *end == 'g' || *end == 'G' ? 30 : 0;
	if (v > 1ull << 40)
		return -1;
	snprintf(out, len, "%llu", v);
	return 0;
}

static int cmd_run(int argc, char **argv)
{
	struct launch l = { "run", "MPROF_LIB", "libmprof.so", DEFAULT_DATA, "MPROF_OUT",
			    "MPROF_ROOT_PID", NULL, "MPROF_KEEP" };
	const char *env[5] = { NULL };
	char err[512], sample[32] = "";
	int i, st, leaks = 0;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0) {
			i++;
			break;
		}
		if (strcmp(argv[i], "-o") == 0 || strcmp(argv[i], "--output") == 0) {
			if (i + 1 >= argc)
				die("run: -o needs a file name");
			l.out = argv[++i];
		} else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			printf(RUN_USAGE "\n"
			       "Runs PROG with the monitor preloaded; it writes mprof.data\n"
			       "(or FILE) at exit, or mprof run does if PROG dies.\n"
			       "  -o FILE    the data file\n"
			       "  --leaks    classify what is kept at exit, as memcheck does\n"
			       "             (MPROF_LEAKS=scan)\n"
			       "  --sample[=BYTES], --sample BYTES\n"
			       "             the sampled monitor: one allocation in every BYTES\n"
			       "             allocated on average (default 512k; k, m, g suffixes),\n"
			       "             every figure an estimate, a cost to leave on\n"
			       "             (MPROF_SAMPLE=BYTES)\n");
			return 0;
		} else if (strcmp(argv[i], "--leaks") == 0 || strcmp(argv[i], "-leaks") == 0) {
			leaks = 1; /* classify what is kept at exit */
		} else if (strcmp(argv[i], "--sample") == 0) {
			/* --sample BYTES as the issue wrote it, as well as
			 * --sample=BYTES: a number of bytes after it is its
			 * value (a program of that name runs as ./NAME). */
			strcpy(sample, "524288");
			if (i + 1 < argc && argv[i + 1][0] >= '0' && argv[i + 1][0] <= '9') {
				if (sample_arg(argv[i + 1], sample, sizeof sample) == 0)
					i++;
				else if (access(argv[i + 1], F_OK) != 0)
					/* No program of that name: a size out of
					 * range (--sample 0 ran "0"). */
					die("run: --sample %s: not a number of bytes from 1 to 1t "
					    "(512k, 1m, 65536)",
					    argv[i + 1]);
			}
		} else if (strncmp(argv[i], "--sample=", 9) == 0) {
			if (sample_arg(argv[i] + 9, sample, sizeof sample) < 0)
				die("run: --sample=%s: not a number of bytes from 1 to 1t (512k, 1m, 65536)",
				    argv[i] + 9);
		} else if (strncmp(argv[i], "-o", 2) == 0) {
			l.out = argv[i] + 2;
		} else if (argv[i][0] == '-') {
			die("run: unknown option '%s' (" RUN_USAGE ")", argv[i]);
		} else {
			break;
		}
	}
	if (i >= argc)
		die("run: no program given (" RUN_USAGE ")");
	if (leaks && sample[0])
		die("run: --leaks classifies every live object; --sample records only samples");
	if (leaks) {
		env[0] = "MPROF_LEAKS";
		env[1] = "scan";
	} else if (sample[0]) {
		env[0] = "MPROF_SAMPLE";
		env[1] = sample;
	}
	l.env = env;
	st = launch_run(&l, argv + i, err, sizeof(err));
	if (st < 0)
		die("run: %s", err);
	return st;
}

#define SNAPSHOT_USAGE "usage: mprof snapshot [-o FILE] PID"

/* PID's MPROF_OUT (what `mprof run` gave it: absolute), into buf; 0 or -1. */
static int out_of(pid_t pid, char *buf, size_t len)
{
	char path[64], env[1 << 16];
	ssize_t n = 0, k;
	int fd;

	snprintf(path, sizeof path, "/proc/%d/environ", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	while (n < (ssize_t)sizeof env - 1 && (k = read(fd, env + n, sizeof env - 1 - (size_t)n)) > 0)
		n += k;
	close(fd);
	env[n] = 0;
	for (ssize_t i = 0; i < n; i += (ssize_t)strlen(env + i) + 1)
		if (!strncmp(env + i, "MPROF_OUT=", 10) && env[i + 10] == '/' &&
		    strlen(env + i + 10) < len) {
			strcpy(buf, env + i + 10);
			return 0;
		}
	return -1;
}


/* The data file by default, mprof.data, missing: say where one comes
 * from (it was "mprof.data: No such file or directory"). */
static void no_default_data(const char *data, const char *const *args, int nargs)
{
	for (int i = 0; i < nargs; i++)
		if (args[i] == data)
			return;
	if (access(data, F_OK) != 0 && errno == ENOENT)
		die("no %s here: give the profile's file (mprof run PROG writes %s)", data, data);
}
/*
 * mprof snapshot PID: the profile of a running process, from its keep
 * (keeper.h), as the monitor would write it now; the process goes on.
 * Without -o, FILE.snapshot.N beside the file it will write at exit (as
 * its keep says, else its MPROF_OUT, else mprof.data here), N the first
 * not taken.
 */
static int cmd_snapshot(int argc, char **argv)
{
	const char *out = NULL, *pidarg = NULL;
	char base[PATH_MAX], path[PATH_MAX + 32], why[4600], *end;
	long pid;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			printf(SNAPSHOT_USAGE "\n"
			       "Writes the profile of running process PID from its keep (a process\n"
			       "run by mprof run, or with MPROF_SNAPSHOT=1); it goes on running.\n"
			       "  -o FILE    the data file (default: FILE.snapshot.N beside its own)\n");
			return 0;
		} else if (!strcmp(argv[i], "-o")) {
			if (i + 1 >= argc)
				die("snapshot: -o needs a file name");
			out = argv[++i];
		} else if (argv[i][0] == '-' || pidarg) {
			die("snapshot: unexpected '%s' (" SNAPSHOT_USAGE ")", argv[i]);
		} else {
			pidarg = argv[i];
		}
	}
	errno = 0;
	pid = pidarg ? strtol(pidarg, &end, 10) : 0;
	if (!pidarg || errno || *end || pid < 1 || pid > (1 << 22))
		die("snapshot: give the process id (" SNAPSHOT_USAGE ")");
	if (out) {
		snprintf(path, sizeof path, "%s", out);
	} else {
		/* The keep's word (the environment may be gone: a server that
		 * rewrites its title writes over it), else the environment's. */
		if (keeper_snapshot_out((pid_t)pid, base, sizeof base) < 0 &&
		    out_of((pid_t)pid, base, sizeof base) < 0)
			snprintf(base, sizeof base, "%s", DEFAULT_DATA);
		for (int n = 1;; n++) {
			snprintf(path, sizeof path, "%s.snapshot.%d", base, n);
			if (access(path, F_OK) != 0)
				break;
		}
	}
	if (keeper_snapshot((pid_t)pid, path, why, sizeof why) < 0)
		die("snapshot: %s", why);
	printf("%s\n", path);
	return 0;
}

static int cmd_show(int argc, char **argv)
{
	struct tables_opts o = { TABLES_NORMAL, 1, 0, 0, 5, 1, 0 };
	const char *args[2] = { NULL, NULL }, *exe = NULL, *data = DEFAULT_DATA;
	const char **alloc_fns = xcalloc((size_t)argc + 1, sizeof(*alloc_fns));
	size_t nalloc_fns = 0;
	unsigned mflags = 0;
	int nargs = 0;
	struct profile p;
	struct symbols *sy;
	struct model m;
	struct callgraph g;
	char err[256], exebuf[PATH_MAX];
	const char *why;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (a[0] == '-' && a[1] == '-' && a[2])
			a++; /* --verbose is -verbose */
		if (strcmp(a, "-verbose") == 0)
			o.verbosity = TABLES_VERBOSE;
		else if (strcmp(a, "-normal") == 0)
			o.verbosity = TABLES_NORMAL;
		else if (strcmp(a, "-terse") == 0)
			o.verbosity = TABLES_TERSE;
		else if (strcmp(a, "-leaktable") == 0)
			o.leaktable = 1;
		else if (strcmp(a, "-noleaktable") == 0)
			o.leaktable = 0;
		else if (strcmp(a, "-peaktable") == 0)
			o.peaktable = 1;
		else if (strcmp(a, "-nopeaktable") == 0)
			o.peaktable = 0;
		else if (strcmp(a, "-offsets") == 0 || strcmp(a, "-offset") == 0)
			o.leaktable = 1, o.offsets = 1;
		else if (strcmp(a, "-lines") == 0)
			o.lines = 1;
		else if (strcmp(a, "-all-frames") == 0)
			mflags |= MODEL_KEEP_ABOVE_MAIN;
		else if (strcmp(a, "-full-names") == 0)
			o.full_names = 1;
		else if (strcmp(a, "-alloc-fn") == 0 || strncmp(a, "-alloc-fn=", 10) == 0) {
			/* An allocator wrapper: its callers allocate (memcheck's
			 * --alloc-fn); as many as given. */
			const char *v = a[9] == '=' ? a + 10 : NULL;
			if (!v && i + 1 >= argc)
				die("-alloc-fn needs a function's name");
			alloc_fns[nalloc_fns++] = v ? v : argv[++i];
		} else if (strcmp(a, "-depth") == 0 || strncmp(a, "-depth=", 7) == 0) {
			/* -depth N, or -depth=N (--depth=3 was refused) */
			const char *v = a[6] == '=' ? a + 7 : NULL;
			char *end;
			long d;
			if (!v && i + 1 >= argc)
				die("-depth needs a number");
			if (!v)
				v = argv[++i];
			d = strtol(v, &end, 10);
			if (!*v || *end || d < 1 || d > 1000)
				die("-depth: '%s' is not a number from 1 to 1000", v);
			o.depth = (int)d;
		} else if (strcmp(a, "-help") == 0 || strcmp(a, "-h") == 0) {
			usage(stdout);
			return 0;
		} else if (strcmp(argv[i], "--") == 0) {
			for (i++; i < argc; i++) {
				if (nargs == 2)
					die("too many arguments (usage: mprof [options] [a.out [mprof.data]])");
				args[nargs++] = argv[i];
			}
		} else if (a[0] == '-' && a[1]) {
			die("unknown option '%s' (mprof --help lists them)", argv[i]);
		} else {
			if (nargs == 2)
				die("too many arguments (usage: mprof [options] [a.out [mprof.data]])");
			args[nargs++] = argv[i];
		}
	}
	/* a.out is optional: the data file records its modules. */
	launch_operands(args, nargs, &exe, &data);
	no_default_data(data, args, nargs);
	load(data, &p);
	if (exe) {
		/* A bare name (mprof guile g.data) is the recorded executable
		 * of that name, else a command in PATH. */
		if (launch_find_exe(exe, reader_info(&p, "exe"), exebuf, sizeof(exebuf), &why) < 0)
			die("%s: %s", exe, why);
		exe = exebuf;
	}
	if (p.kind != FORMAT_KIND_MPROF)
		not_mprof(data, &p);
	sy = symbols_open(&p, exe);
	if (!sy)
		die("out of memory opening symbols");
	symbols_full_names(sy, o.full_names);
	model_init(&m);
	m.alloc_fns = alloc_fns;
	m.nalloc_fns = nalloc_fns;
	if (model_from_profile(&m, &p, sy, mflags, err, sizeof(err)) < 0) {
		symbols_free(sy); /* (LeakSanitizer counted it at exit) */
		die("%s: %s", data, err);
	}
	callgraph_build(&g, &m);
	tables_print(stdout, &m, &g, &p, sy, &o);
	/* A wrapper given that no stack has: said, as cpprof says a name it
	 * cannot find (a typo left every table as it was, silently). */
	for (size_t i = 0; i < nalloc_fns; i++)
		if (!model_alloc_fn_used(&m, i))
			fprintf(stderr, "mprof: -alloc-fn: no stack has a caller of '%s': nothing changed\n",
				alloc_fns[i]);
	callgraph_release(&g);
	model_release(&m);
	free(alloc_fns);
	symbols_free(sy);
	reader_release(&p);
	if (fflush(stdout) != 0 || ferror(stdout))
		die("write error on standard output: %s", strerror(errno));
	return 0;
}

#define TIMELINE_USAGE "usage: mprof timeline [--csv] [-alloc-fn NAME]... [a.out] [mprof.data]"

static int cmd_timeline(int argc, char **argv)
{
	const char *args[2] = { NULL, NULL }, *exe = NULL, *data = DEFAULT_DATA;
	int nargs = 0, as_csv = 0;
	struct profile p;
	struct symbols *sy = NULL;
	struct model m;
	char err[256], exebuf[PATH_MAX];
	const char *why, **alloc_fns = xcalloc((size_t)argc + 1, sizeof(*alloc_fns));
	size_t nalloc_fns = 0;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i][0] == '-' && argv[i][1] == '-' ? argv[i] + 1 : argv[i];

		if (strcmp(argv[i], "--csv") == 0 || strcmp(argv[i], "-csv") == 0) {
			as_csv = 1;
		} else if ((strcmp(a, "-alloc-fn") == 0 && i + 1 < argc) || strncmp(a, "-alloc-fn=", 10) == 0) {
			/* The key's stacks end at the wrapper's callers (mprof -alloc-fn). */
			alloc_fns[nalloc_fns++] = a[9] ? a + 10 : argv[++i];
		} else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			printf(TIMELINE_USAGE "\n"
			       "The heap over time (live bytes against seconds, the peak marked ^,\n"
			       "the largest stacks in letters A-H with a key), or with --csv a header\n"
			       "time_s,live_bytes,live_objects,allocated_bytes,mark,stack_N...\n"
			       "and one row a point (mark: peak, end; stack_N: the live bytes of\n"
			       "stack N of the file, where the point gives them).\n");
			return 0;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			die("timeline: unknown option '%s' (" TIMELINE_USAGE ")", argv[i]);
		} else if (nargs == 2) {
			die("timeline: too many arguments (" TIMELINE_USAGE ")");
		} else {
			args[nargs++] = argv[i];
		}
	}
	launch_operands(args, nargs, &exe, &data);
	no_default_data(data, args, nargs);
	load(data, &p);
	if (p.kind != FORMAT_KIND_MPROF)
		not_mprof(data, &p);
	if (!p.timeline || !p.timeline->npoints)
		die("%s: has no timeline (written by a monitor from before the timeline, or salvaged "
		    "before its first point)",
		    data);
	model_init(&m);
	m.alloc_fns = alloc_fns;
	m.nalloc_fns = nalloc_fns;
	if (!as_csv) {
		if (exe) {
			if (launch_find_exe(exe, reader_info(&p, "exe"), exebuf, sizeof(exebuf), &why) <
			    0)
				die("%s: %s", exe, why);
			exe = exebuf;
		}
		sy = symbols_open(&p, exe);
		if (!sy)
			die("out of memory opening symbols");
		if (model_from_profile(&m, &p, sy, 0, err, sizeof(err)) < 0) {
			symbols_free(sy);
			die("%s: %s", data, err);
		}
	}
	tables_timeline(stdout, &p, as_csv ? NULL : &m, as_csv);
	model_release(&m);
	free(alloc_fns);
	if (sy)
		symbols_free(sy);
	reader_release(&p);
	if (fflush(stdout) != 0 || ferror(stdout))
		die("write error on standard output: %s", strerror(errno));
	return 0;
}

int main(int argc, char **argv)
{
	util_progname = "mprof";
	if (argc > 1 && strcmp(argv[1], "run") == 0)
		return cmd_run(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "dump") == 0)
		return cmd_dump(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "timeline") == 0)
		return cmd_timeline(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "snapshot") == 0)
		return cmd_snapshot(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "export") == 0)
		return export_main(argc - 1, argv + 1, "mprof.data");
	if (argc > 1 && strcmp(argv[1], "merge") == 0)
		return merge_main(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "diff") == 0)
		return export_diff_main(argc - 1, argv + 1, 1);
	if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "help") == 0)) {
		usage(stdout);
		return 0;
	}
	util_no_command(argc, argv, "run, snapshot, dump, timeline, export, merge, diff");
	return cmd_show(argc, argv);
}
