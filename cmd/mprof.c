/*
 * mprof.c - the mprof command: display the four tables of a profile, run a
 * program under the monitor, or dump a data file raw.  A thin front end:
 * parse options, call lib/, print.  See doc/mprof.1.
 */
#include "callgraph.h"
#include "format.h"
#include "model.h"
#include "reader.h"
#include "symbols.h"
#include "tables.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define DEFAULT_DATA "mprof.data"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: mprof [options] [a.out [mprof.data]]   print the four tables\n"
		"       mprof run [-o FILE] [--] PROG [ARGS...]  run PROG under the monitor\n"
		"       mprof dump [mprof.data]                 print the data file raw\n"
		"\n"
		"Display options (one dash or two):\n"
		"  -verbose       every bin, every leak chain\n"
		"  -normal        bins and leak chains above 0.5%% (default)\n"
		"  -terse         bins and leak chains above 1%%\n"
		"  -leaktable     print the memory leak table (default)\n"
		"  -noleaktable   do not print the memory leak table\n"
		"  -offsets       leak table: tell call sites apart by +offset in the function\n"
		"  -lines         leak table: file:line of each call site\n"
		"  -depth N       leak table: callers in a partial chain (default 5)\n"
		"  -all-frames    keep frames outer to main (_start, __libc_start_main)\n"
		"  -help          this text\n"
		"\n"
		"The program writes mprof.data in the directory it started in; set\n"
		"MPROF_OUT=FILE to name it, MPROF_AUTOSAVE=N to save every N allocations.\n"
		"a.out is optional: the data file records every module's path and build-id.\n");
}

/* Is path an ELF file (an a.out rather than a data file)? */
static int is_elf(const char *path)
{
	char magic[4];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return 0;
	n = read(fd, magic, sizeof(magic));
	close(fd);
	return n == 4 && memcmp(magic, "\177ELF", 4) == 0;
}

static void load(const char *path, struct profile *p)
{
	char err[256];

	if (reader_load(path, p, err, sizeof(err)) < 0)
		die("%s: %s", path, err);
}

static int cmd_dump(int argc, char **argv)
{
	const char *path = argc > 1 ? argv[1] : DEFAULT_DATA;
	struct profile p;

	load(path, &p);
	printf("format %u kind %u\n", p.version, p.kind);
	for (size_t i = 0; i < p.ninfo; i++)
		printf("info %s %s\n", p.info[i].key, p.info[i].value);
	for (size_t i = 0; i < p.nmodules; i++) {
		const struct prof_module *m = &p.modules[i];
		printf("module 0x%" PRIx64 " 0x%" PRIx64 " 0x%" PRIx64 " 0x%" PRIx64 " ", m->start, m->end,
		       m->bias, m->offset);
		for (uint32_t k = 0; k < m->build_id_len; k++)
			printf("%02x", m->build_id[k]);
		printf("%s %s\n", m->build_id_len ? "" : "-", m->path);
	}
	for (size_t i = 0; i < p.ncounters; i++)
		printf("counter %s %s\n", p.counter_names[i], p.counter_units[i]);
	for (size_t i = 0; i < p.nstacks; i++) {
		const struct prof_stack *s = &p.stacks[i];
		printf("stack %u %u", s->depth, s->flags);
		for (size_t k = 0; k < p.ncounters; k++)
			printf(" %" PRIu64, s->counts[k]);
		printf(" :");
		for (uint32_t d = 0; d < s->depth; d++)
			printf(" 0x%" PRIx64, s->frames[d]);
		printf("\n");
	}
	for (size_t i = 0; i < p.nbins; i++)
		printf("bin %u %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", p.bins[i].size,
		       p.bins[i].allocs, p.bins[i].frees, p.bins[i].bytes, p.bins[i].freed);
	reader_release(&p);
	return 0;
}

/* The monitor library: beside this program, in ../lib (build tree and
 * install tree alike), unless MPROF_LIB names it. */
static void find_runtime(char *buf, size_t len)
{
	const char *env = getenv("MPROF_LIB");
	char self[PATH_MAX];
	ssize_t n;
	char *slash;

	if (env && *env) {
		snprintf(buf, len, "%s", env);
		return;
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n < 0)
		die("cannot find myself: /proc/self/exe: %s", strerror(errno));
	self[n] = 0;
	slash = strrchr(self, '/');
	if (slash)
		*slash = 0;
	if ((size_t)snprintf(buf, len, "%s/../lib/libmprof.so", self) >= len)
		die("run: path of the monitor library is too long");
}

static int cmd_run(int argc, char **argv)
{
	const char *out = DEFAULT_DATA;
	char lib[PATH_MAX], outabs[PATH_MAX], preload[2 * PATH_MAX], cwd[PATH_MAX];
	const char *old;
	int i, status;
	pid_t pid;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0) {
			i++;
			break;
		}
		if (strcmp(argv[i], "-o") == 0 || strcmp(argv[i], "--output") == 0) {
			if (i + 1 >= argc)
				die("run: -o needs a file name");
			out = argv[++i];
		} else if (strncmp(argv[i], "-o", 2) == 0) {
			out = argv[i] + 2;
		} else if (argv[i][0] == '-') {
			die("run: unknown option '%s' (usage: mprof run [-o FILE] [--] PROG [ARGS...])", argv[i]);
		} else {
			break;
		}
	}
	if (i >= argc)
		die("run: no program given (usage: mprof run [-o FILE] [--] PROG [ARGS...])");
	find_runtime(lib, sizeof(lib));
	if (access(lib, R_OK) != 0)
		die("run: cannot read the monitor library %s: %s", lib, strerror(errno));
	if (out[0] == '/' || !getcwd(cwd, sizeof(cwd)))
		cwd[0] = 0;
	if ((size_t)snprintf(outabs, sizeof(outabs), "%s%s%s", cwd, cwd[0] ? "/" : "", out) >= sizeof(outabs))
		die("run: output file name too long: %s", out);
	old = getenv("LD_PRELOAD");
	snprintf(preload, sizeof(preload), "%s%s%s", lib, old && *old ? ":" : "", old ? old : "");

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		die("run: fork: %s", strerror(errno));
	if (pid == 0) {
		char pidbuf[32];
		snprintf(pidbuf, sizeof(pidbuf), "%d", (int)getpid());
		setenv("LD_PRELOAD", preload, 1);
		setenv("MPROF_OUT", outabs, 1);
		setenv("MPROF_ROOT_PID", pidbuf, 1);
		execvp(argv[i], argv + i);
		fprintf(stderr, "mprof: run: cannot run %s: %s\n", argv[i], strerror(errno));
		_exit(127);
	}
	/* The program owns the terminal's signals; we only wait for it. */
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			die("run: waitpid: %s", strerror(errno));
	if (WIFSIGNALED(status)) {
		signal(WTERMSIG(status), SIG_DFL);
		raise(WTERMSIG(status));
		return 128 + WTERMSIG(status);
	}
	return WEXITSTATUS(status);
}

static int cmd_show(int argc, char **argv)
{
	struct tables_opts o = { TABLES_NORMAL, 1, 0, 0, 5 };
	const char *args[2] = { NULL, NULL }, *exe = NULL, *data = DEFAULT_DATA;
	unsigned mflags = 0;
	int nargs = 0;
	struct profile p;
	struct symbols *sy;
	struct model m;
	struct callgraph g;
	char err[256];

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
		else if (strcmp(a, "-offsets") == 0 || strcmp(a, "-offset") == 0)
			o.leaktable = 1, o.offsets = 1;
		else if (strcmp(a, "-lines") == 0)
			o.lines = 1;
		else if (strcmp(a, "-all-frames") == 0)
			mflags |= MODEL_KEEP_ABOVE_MAIN;
		else if (strcmp(a, "-depth") == 0) {
			char *end;
			long d;
			if (i + 1 >= argc)
				die("-depth needs a number");
			d = strtol(argv[++i], &end, 10);
			if (*end || d < 1 || d > 1000)
				die("-depth: '%s' is not a number from 1 to 1000", argv[i]);
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
	/* mprof [a.out [mprof.data]]; a lone argument is the a.out when it is
	 * an ELF file, else the data file (a.out is optional: the data file
	 * records its modules). */
	if (nargs == 2) {
		exe = args[0];
		data = args[1];
	} else if (nargs == 1) {
		if (is_elf(args[0]))
			exe = args[0];
		else
			data = args[0];
	}
	if (exe && access(exe, R_OK) != 0)
		die("%s: %s", exe, strerror(errno));
	load(data, &p);
	if (p.kind != FORMAT_KIND_MPROF)
		die("%s: %s data, not mprof allocation data", data,
		    p.kind == FORMAT_KIND_CPPROF ? "cpprof sample" : "unknown kind of");
	sy = symbols_open(&p, exe);
	if (!sy)
		die("out of memory opening symbols");
	model_init(&m);
	if (model_from_profile(&m, &p, sy, mflags, err, sizeof(err)) < 0)
		die("%s: %s", data, err);
	callgraph_build(&g, &m);
	tables_print(stdout, &m, &g, &p, sy, &o);
	callgraph_release(&g);
	model_release(&m);
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
	if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "help") == 0)) {
		usage(stdout);
		return 0;
	}
	return cmd_show(argc, argv);
}
