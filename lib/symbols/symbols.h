/*
 * symbols.h - offline symbolization of recorded addresses with elfutils libdw.
 *
 * Nothing in the runtime resolves symbols: the data file records every
 * loaded module (path, build-id, address range, bias) and this module maps
 * an absolute address back to function names, inline frames and file:line,
 * later, in the tools.  It also collects the program's named types by size
 * for mprof's allocation bin table (mprof.1, TABLE 1: "types"), and names
 * the type an allocating C++ frame asks storage for (sym_frame.atype).
 * C++ names are printed short (cxxname.h) unless symbols_full_names.
 */
#ifndef SYMBOLS_H
#define SYMBOLS_H

#include <stddef.h>
#include <stdint.h>

struct profile;
struct symbols;

/* One logical frame.  An address inside inlined code expands to several:
 * the innermost inlined function first, the real (outermost) function last. */
struct sym_frame {
	const char *func;   /* the name views print; never NULL (see below):
			     * demangled, a C++ name simplified (cxxname.h)
			     * unless symbols_full_names was set */
	const char *full;   /* demangled in full; never NULL */
	const char *sysname; /* as the system names it: the symbol or DWARF
			      * linkage name, mangled (pprof's system_name);
			      * never NULL */
	const char *atype;  /* an allocating frame's element type, as
			     * demangled (cxxname_alloc_type), else NULL */
	uint64_t asize;     /* sizeof(atype), 0 if unknown */
	const char *file;   /* source file of the call site / pc, or NULL */
	int line;           /* 0 if unknown */
	uint64_t func_addr; /* absolute entry address of the real function, 0 if unknown */
	uint64_t offset;    /* address - func_addr (the "+n" of mprof -offsets) */
	int inlined;        /* 1 if this frame was inlined into the next one */
	const char *decl;   /* a static C function's: the file that defines
			     * it (DWARF's path, else the symbol table's,
			     * which is its last part), else NULL */
	int external;       /* a C function that is not static: the one of
			     * its name in the program */
	int own_runtime;    /* in one of our runtime libraries (libcpprof.so:
			     * an interposed call's wrapper) */
};

/*
 * Open symbol tables for every module of p.  exe_override, if not NULL, is
 * the a.out named on the command line: it replaces the module recorded as
 * the executable (the first module); when its build-id differs from the
 * recorded one, a warning naming both files is printed to stderr once, and
 * symbolization goes on with it.  A module whose file is missing or
 * unreadable gets a one-time warning; its addresses resolve as
 * "module+0xoffset".  Separate debug info is looked up under /usr/lib/debug
 * (by build-id and by debuglink).  Returns NULL only on out-of-memory.
 */
struct symbols *symbols_open(const struct profile *p, const char *exe_override);
void symbols_free(struct symbols *s);

/* Print C++ names in full (as demangled) rather than simplified, from the
 * next symbols_resolve on (the tools' --full-names). */
/* Whether the profiled process's perf map (a JIT's names) was read. */
int symbols_has_perfmap(const struct symbols *s);
void symbols_full_names(struct symbols *s, int on);

/*
 * Resolve addr.  is_return_address: addr is a return address (look up
 * addr - 1 so the call instruction, not the next one, is found).  Fills up
 * to max frames (innermost first) and returns how many (>= 1 always when
 * max >= 1).  An address no symbol covers yields one frame whose func is
 * "module+0xoffset" (basename of the module path, offset from the module's
 * bias) or "0xaddr" when no module covers it.  Nothing is cached per
 * address (the caller does: see model.c); the returned strings live as
 * long as s.
 */
int symbols_resolve(struct symbols *s, uint64_t addr, int is_return_address,
		    struct sym_frame *out, int max);

/*
 * Entry addresses (absolute) of the functions called `name` in any module,
 * by any of their symbol-table names: aliases such as read and __libc_read
 * share an address.  Fills up to max; returns how many were found.
 */
size_t symbols_addrs_of(struct symbols *s, const char *name, uint64_t *addrs, size_t max);

/*
 * The executable segments (PT_LOAD with PF_X) of the module that holds
 * addr, as /proc/PID/maps shows their r-xp lines: absolute start (page
 * aligned) and end, and the file offset of start.  Up to max; how many (0
 * when the module's file was not read: the vdso, a file gone).  The pprof
 * export's mappings: pprof finds a segment's load base from them.
 */
struct sym_seg {
	uint64_t start, end, offset;
};
size_t symbols_text_segments(struct symbols *s, uint64_t addr, struct sym_seg *out, size_t max);

/*
 * Named types whose size is `size` bytes, from the DWARF of the executable
 * and of any module whose path is not under /usr/ (the program's own
 * libraries): struct, union and class types with a definition, and typedefs
 * of any type, named as written in the source (C++: qualified with its
 * namespaces, e.g. "ns::Widget").  Types declared in files under /usr/ are
 * left out (system headers flood the small sizes).  Sorted, without
 * duplicates.  Returns the count and sets *names to an array owned by s.
 */
size_t symbols_types_of_size(struct symbols *s, uint64_t size, const char *const **names);

#endif
