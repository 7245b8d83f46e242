/*
 * lang.h - what a language module (pyframes.c: CPython) gives the
 * monitor: the two operations by which a captured C stack becomes the
 * language's stack.  The monitor (runtime/mprof/langrec.h) remembers C
 * stacks and, for each, the stacks made of it by language frames it has
 * seen, by key; key is cheap, rewrite is made once per new pair.
 */
#ifndef LANG_H
#define LANG_H

#include <stdint.h>

struct lang_ops {
	/*
	 * The calling thread's language frames as a key of two words: two
	 * calls give the same key only if rewrite would make the same stack
	 * of the same C stack (the frames' code, position and kind; whether
	 * frames are read at all).  Reads no more than the frames' own words.
	 */
	void (*key)(uint64_t k[2]);
	/*
	 * frames[0..depth-1], a C stack captured (innermost first, return
	 * addresses), as it is kept: what rewrite reads of it, and no more
	 * (the interpreter's own frames, which rewrite leaves out, gone), so
	 * that C stacks that differ only there are kept as one; the new
	 * depth.
	 */
	int (*strip)(uint64_t *frames, int depth);
	/*
	 * frames[0..depth-1], a C stack captured or stripped, with the
	 * language's frames in place of the interpreter's, within max
	 * frames; the new depth.  out: max frames of scratch (not the
	 * caller's stack: a thread's may be small).  Frames left out past
	 * max set FORMAT_STACK_TRUNCATED in *flags.
	 */
	int (*rewrite)(uint64_t *frames, int depth, int max, uint64_t *out, uint32_t *flags);
	/*
	 * The kind of object at obj, a block the language's object
	 * allocator gave a while ago (its type's name), into buf (cap
	 * bytes); its length, or 0 if it cannot be told.  Reads that
	 * cannot fault: the object may be gone.
	 */
	size_t (*kind)(uintptr_t obj, char *buf, size_t cap);
	/* Block p is being freed (malloc's free too: PYTHONMALLOC=malloc
	 * puts the language's objects there), its contents still in place:
	 * key must change if it was one of the objects key reads by address
	 * (CPython: a code object). */
	void (*freed)(const void *p);
};

#endif
