/*
 * elfsyms.h - what `cfprof record` asks of a program's ELF file before it
 * runs it: the addresses of functions by name (--unprofiled) and whether
 * it was built with -finstrument-functions.
 */
#ifndef ELFSYMS_H
#define ELFSYMS_H

#include <stddef.h>
#include <stdint.h>

/*
 * The link-time addresses of the functions named `name` in path's symbol
 * tables (static functions of several files may share a name; a C++ short
 * name, every overload and instantiation), at most max into out: by the
 * symbol's name, or a C++ function's as the views print it, short
 * (thrower, D1::f) or demangled in full (thrower(int)).  Returns how
 * many, or -1 when path is not a readable ELF.
 */
int elfsyms_functions(const char *path, const char *name, uint64_t *out, size_t max);

/* 1 if path refers to (or defines) the symbol `name`, 0 if not, -1 when
 * path is not a readable ELF file. */
int elfsyms_mentions(const char *path, const char *name);

#endif
