/*
 * pyframes.h - reading CPython from inside it (pyframes.c): whether this
 * process runs an interpreter whose layout the runtime was built for, and
 * the Python frames a captured C stack was running.
 *
 * The layout is the installed python3's (pylayout.h, made at build time
 * from its headers); py_setup checks it against the running interpreter
 * (its version, and objects whose contents are known) before any frame is
 * read, and every frame read is checked (a code object's type).  On any
 * mismatch the stacks stay native, INFO lang.frames says why, and stderr
 * says it once.
 */
#ifndef PYFRAMES_H
#define PYFRAMES_H

#include <stdint.h>

/* Once: 1 = CPython with the layout known (frames can be read), 0 = no
 * CPython in this process, -1 = CPython, but frames cannot be read
 * (another version, a custom build: said once on stderr). */
int py_setup(void);

/*
 * Replace, in frames[0..depth-1] (innermost first, return addresses), each
 * frame of the interpreter's eval loop by the Python frames it runs,
 * innermost first, FORMAT_LANG_FRAME(id) each (langname.h), within max
 * frames in all, and leave out the interpreter's other frames; the new
 * depth.  The calling thread holds the GIL (an object allocation: the
 * thread state is the current one).  A stack with no eval frame, or a
 * thread with no Python frame, comes back as it was.
 *
 * cut: frames are only the innermost of the stack (a walk stopped early,
 * to cost less): the Python frames go after the C frames before the
 * first eval frame, and C frames between Python frames further out are
 * not shown.  Then -1 when there is no eval frame among them (the caller
 * walks the whole stack and asks again without cut).
 */
int py_rewrite(uint64_t *frames, int depth, int max, int cut);

#endif
