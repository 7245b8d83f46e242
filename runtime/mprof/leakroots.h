/*
 * leakroots.h - where a program keeps pointers outside its heap, for the
 * leak scan at exit (leakscan.h): the roots, as memcheck and
 * LeakSanitizer take them.
 *
 *   - the writable data and bss of every loaded module (a writable PT_LOAD
 *     less its PT_GNU_RELRO part, which is read-only by now, up to the end
 *     of its last page, where ld.so's own early allocations live), but the
 *     monitor's own library;
 *   - the exiting thread: its stack from the scan's caller up, its
 *     callee-saved registers, its thread-local blocks and its thread
 *     descriptor (glibc keeps pthread_setspecific values there);
 *   - every other thread, which must be blocked in a system call: its
 *     stack from the stack pointer the kernel reports
 *     (/proc/self/task/N/syscall) to the end of that mapping, which for a
 *     glibc thread holds its thread-local blocks and descriptor too, and
 *     the system call's arguments (its other registers are not known);
 *   - the loader's record of each module (struct link_map, from
 *     _r_debug): those of modules dlopen loaded are malloc's, linked from
 *     records ld.so mapped itself.
 *
 * Memory a program maps itself (mmap) is not a root: memcheck, which sees
 * every mapping, counts it.  Nothing here allocates: tables come from
 * mmap, files are read with raw system calls.
 */
#ifndef LEAKROOTS_H
#define LEAKROOTS_H

#include <stddef.h>
#include <stdint.h>

/* What a range of roots is. */
enum {
	LEAKROOTS_PLAIN,
	LEAKROOTS_OTHER, /* another thread's: read it through a copy (it may
			  * change under us) */
	LEAKROOTS_ALLOC, /* the data of the module of the real allocator,
			  * whose own state points at chunks (leakscan.c) */
};

struct leakroots_sink {
	void *ctx;
	/* The aligned words of [lo, hi) are roots, of a kind above. */
	void (*range)(void *ctx, uintptr_t lo, uintptr_t hi, int kind);
	/* A word held in a register. */
	void (*value)(void *ctx, uintptr_t v);
	/* An address the program reaches as the start of whatever object
	 * holds it: a thread-local block of a module loaded by dlopen lies
	 * inside an object malloc gave ld.so, pointed to at another place. */
	void (*block)(void *ctx, uintptr_t v);
};

/* The exiting thread's callee-saved registers and stack pointer, taken
 * in the frame that calls the scan (leakscan_run). */
#define LEAKROOTS_NREGS 7
struct leakroots_regs {
	uintptr_t r[LEAKROOTS_NREGS]; /* the last is the stack pointer */
};

/*
 * Take stock of the process: its mappings, its modules and its threads.
 * self: an address in the monitor's own library (left out of the roots
 * when it is a library of its own, not the executable); alloc: one in the
 * real allocator's (its data is of kind LEAKROOTS_ALLOC).  0, or -1 with a
 * reason in *why: a thread is running (not blocked in the kernel), the
 * maps cannot be read, no memory.  *others: how many other threads.
 */
int leakroots_open(const void *self, const void *alloc, int *others, const char **why);

/* Give each root to the sink (after leakroots_open). */
void leakroots_each(const struct leakroots_regs *regs, const struct leakroots_sink *s);

/* Whether [lo, hi) lies in readable mappings (at leakroots_open). */
int leakroots_readable(uintptr_t lo, uintptr_t hi);
/* Whether v lies in a loaded module's segment (a file's), and whether
 * in an executable one. */
int leakroots_in_module(uintptr_t v, uintptr_t *seg_end);
int leakroots_in_code(uintptr_t v);

/* Unmap the tables. */
void leakroots_close(void);

#endif
