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

#include "lang.h"

/* Once: 1 = CPython with the layout known (frames can be read), 0 = no
 * CPython in this process, -1 = CPython, but frames cannot be read
 * (another version, a custom build: said once on stderr, as tool). */
int py_setup(const char *tool);

/*
 * CPython's operations (lang.h).  py_lang.rewrite replaces, in
 * frames[0..depth-1], each frame of the interpreter's eval loop by the
 * Python frames it runs, innermost first, FORMAT_LANG_FRAME(id) each
 * (langname.h), within max frames in all, and leaves out the
 * interpreter's other frames.  A stack with no eval frame, or a thread
 * with no Python frame, comes back as it was.  py_lang.key hashes the
 * thread's chain of Python frames (code, instruction, kind), 128 bits.
 */
extern const struct lang_ops py_lang;

/*
 * py_lang.rewrite for a signal handler (cpprof's sampler): the same, but
 * every word of the interpreter read by a read that cannot fault (the
 * handler may interrupt it anywhere), and out (max frames) and lines
 * (8 KiB, a new frame's line table) the scratch space, not the
 * handler's stack.  frames[0] may be the interrupted pc itself.  A read
 * that fails leaves this stack native (the interpreter may be between
 * two stores), and frames read no less afterwards.
 */
int py_rewrite_signal(uint64_t *frames, int depth, int max, uint64_t *out, uint32_t *flags,
		      uint8_t *lines);
/* The system calls this thread's reads that cannot fault have made so
 * far (each two: getpid and process_vm_readv): cpprof's sampler takes
 * its handler's own out of what the syscalls tracepoint counted. */
extern __thread uint64_t py_safe_syscalls __attribute__((visibility("hidden")));
/*
 * The same for another thread, by its kernel id tid, blocked in the
 * kernel (cpprof's watcher, whose frames are a copy of its stack): its
 * state found among the interpreters' threads (native_thread_id), read
 * with reads that cannot fault.  Its frames stay while it is blocked.
 */
int py_rewrite_thread(uint64_t *frames, int depth, int max, uint64_t *out, uint32_t *flags,
		      uint8_t *lines, long tid);

/*
 * The code objects freed: py_lang.key reads a frame's code by the
 * address of its last instruction, so a code object made where another
 * was freed must change the key.  The object allocator's free (python.c)
 * calls py_freed on every object it frees, whose type is still in place
 * (ob_type, the second word: CPython 3.11's, the only layout read).
 */
extern uintptr_t py_code_type; /* 0 until frames can be read */
extern uint64_t py_code_frees;
static inline void py_freed(const void *p)
{
	if (((const uintptr_t *)p)[1] == py_code_type)
		__atomic_fetch_add(&py_code_frees, 1, __ATOMIC_RELAXED);
}

#endif
