/*
 * launch.h - run a program with a profiler library preloaded: what
 * `mprof run` and `cpprof record` share.
 */
#ifndef LAUNCH_H
#define LAUNCH_H

#include <stddef.h>

struct launch {
	const char *what;      /* "run", "record": for messages */
	const char *lib_env;   /* names the library instead: "MPROF_LIB" */
	const char *lib_name;  /* ../lib/NAME beside this program: "libmprof.so" */
	const char *out;       /* the data file, as the user gave it */
	const char *out_env;   /* gets its absolute path: "MPROF_OUT" */
	const char *pid_env;   /* gets the program's pid: "MPROF_ROOT_PID" */
	const char *const *env; /* more NAME, VALUE pairs for the program; NULL ends */
};

/* 1 if path is an ELF file (an a.out rather than a data file). */
int launch_is_elf(const char *path);

/*
 * Run argv[0] (searched in PATH) with the library preloaded and wait for it;
 * the terminal's SIGINT and SIGQUIT are the program's meanwhile.  Returns the
 * exit status to pass on (a program killed by a signal: that signal is
 * raised again here, else 128 + its number), 127 when it could not be run,
 * or -1 with a reason in err when nothing was started.  When the program
 * ended but the data file was not (re)written, says why on stderr.
 */
int launch_run(const struct launch *l, char *const argv[], char *err, size_t errlen);

#endif
