/*
 * merge.h - many data files of one program and kind into one (issue 14):
 * runs of a program, or its forked children (FILE.PID).
 */
#ifndef MERGE_H
#define MERGE_H

#include <stddef.h>
#include <stdint.h>

/*
 * Merge the files paths[0..n) into out.  Returns 0, or -1 with a reason
 * in err naming the file at fault ("b.data: a cpprof profile, not
 * mprof", "b.data: another program"); out is then not written.
 */
int merge_files(const char *const *paths, int n, const char *out, char *err, size_t errlen);

struct profile;

/*
 * Where file f's addresses are in profile to's address space: delta[i]
 * (f->nmodules of them) is added to addresses of f's module i; a module
 * to lacks is left where it is.  For diffs of two runs (export
 * --diff-base).  merge_move gives one address moved.
 */
void merge_deltas(const struct profile *to, const struct profile *f, int64_t *delta);
/* Which of f's modules to has (matched[i], f->nmodules of them): the same
 * object, by build-id (or path, when either has none).  A module to lacks
 * (another build of the program) is named from f's own files. */
void merge_matched(const struct profile *to, const struct profile *f, unsigned char *matched);
/* Whether two files are of one program (their first modules match). */
int merge_same_program(const struct profile *a, const struct profile *b);
uint64_t merge_move(const struct profile *f, const int64_t *delta, uint64_t addr);

/* `TOOL merge FILES... -o OUT` (argv[0] is "merge"); the exit status. */
int merge_main(int argc, char **argv);

#endif
