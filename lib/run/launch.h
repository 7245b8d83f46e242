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
	const char *keep_env;  /* names the keep (lib/format/keepfmt.h): "MPROF_KEEP" */
};

/* 1 if path is an ELF file (an a.out rather than a data file). */
int launch_is_elf(const char *path);

/*
 * The a.out a user names for a profile: name itself when that is a file
 * (mprof a.out); else, for a bare name (mprof guile g.data), the profile's
 * recorded executable (INFO exe, may be NULL) when it has that name, else
 * the first regular, executable file of that name in PATH, as a shell
 * finds a command.  Returns 0 with the path in buf, or -1 with a reason in
 * *why ("No such file or directory", "not a regular file").
 */
/*
 * The operands of mprof and cpprof, [a.out [data]]: two are both; a lone
 * one is the a.out when it names an ELF file (found as launch_find_exe
 * finds it, without a profile), else the data file.  *exe and *data are
 * left as they were for what is not given.
 */
void launch_operands(const char *const args[], int nargs, const char **exe, const char **data);

int launch_find_exe(const char *name, const char *recorded, char *buf, size_t len,
		    const char **why);

/*
 * Run argv[0] (searched in PATH) with the library preloaded and wait for it;
 * the terminal's SIGINT and SIGQUIT are the program's meanwhile.  Returns the
 * exit status to pass on (a program killed by a signal: that signal is
 * raised again here, else 128 + its number), 127 when it could not be run,
 * or -1 with a reason in err when nothing was started.
 *
 * With l->keep_env, the program's runtime keeps its tables in a keep
 * (keeper.h), and when the program ends without writing its profile (a
 * signal, _exit, exit_group), the profile is written from there; after a
 * signal, that is said on stderr.  When no profile was written, says why.
 */
int launch_run(const struct launch *l, char *const argv[], char *err, size_t errlen);

#endif
