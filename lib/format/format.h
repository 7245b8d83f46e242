/*
 * format.h - the profile data file: layout constants and the encoder.
 *
 * One codec for every producer (the mprof monitor, later the cpprof sampler)
 * and every reader (lib/read/reader.c).  The layout is specified in doc/format.md;
 * keep the two in step.
 *
 * A file is a header followed by sections.  Every integer is little-endian.
 *
 *   header (32 bytes)
 *     magic[8]      FORMAT_MAGIC
 *     u32 version   FORMAT_VERSION
 *     u32 kind      enum format_kind
 *     u32 nsections
 *     u32 reserved  0 (a reader rejects anything else)
 *     u64 length    total file length in bytes, header included
 *   section (24-byte header, then payload)
 *     u32 type      enum format_section
 *     u32 reserved  0
 *     u64 length    payload length in bytes
 *     u32 crc       CRC-32 (IEEE) of the 4 type bytes, then the payload
 *     u32 reserved  0
 *
 * The encoder streams into a caller-provided buffer and flushes with write(2);
 * it never allocates and never uses stdio, so the runtime can call it from
 * inside a program's malloc.  Section lengths and checksums are patched in
 * with pwrite(2), so the descriptor must be a regular file.  The caller
 * writes to a temporary name and renames it into place (atomic save).
 */
#ifndef FORMAT_H
#define FORMAT_H

#include <stddef.h>
#include <stdint.h>

#define FORMAT_MAGIC "\x89PRF\r\n\x1a\n"
#define FORMAT_MAGIC_LEN 8
#define FORMAT_VERSION 2     /* written */
#define FORMAT_VERSION_MIN 1 /* oldest read: flat STACKS */
#define FORMAT_HEADER_LEN 32
#define FORMAT_SECTION_HEADER_LEN 24

enum format_kind {
	FORMAT_KIND_MPROF = 1,  /* allocation profile: mprof.data */
	FORMAT_KIND_CPPROF = 2, /* sampled resource profile: cpprof.data */
	FORMAT_KIND_CFPROF = 3, /* instrumented current-function profile: cfprof.data */
};

/*
 * Sections.  Payloads (strings are u32 length + bytes, no terminator):
 *
 * INFO:     u32 n, then n pairs (string key, string value): run facts such as
 *           "cmdline", "exe", "pid", "start_ns", "end_ns", "allocs".
 * MODULES:  u32 n, then per module: u64 start, u64 end (absolute address
 *           range of its PT_LOAD segments), u64 bias (load address minus
 *           link-time address), u64 offset (file offset of the first
 *           PT_LOAD), string path, string build_id (raw bytes, may be empty).
 * COUNTERS: u32 n, then n pairs (string name, string unit): the columns of
 *           every stack's counter vector, in order.
 * STACKS:   u64 n, then per stack (version 2; uvar = LEB128, svar =
 *           zigzag LEB128): uvar depth, uvar flags (FORMAT_STACK_*), uvar
 *           ref, and if ref > 0 uvar shared: the outermost `shared` frames
 *           are those of the stack ref places before this one; then the
 *           other depth - shared frames, innermost first, each an svar
 *           delta from the one before (the first from 0); then uvar
 *           counters[ncounters].  frames[0] is the return address into the
 *           function that called the allocator, or the interrupted pc for a
 *           sample.  Version 1 had u32 depth, u32 flags, u64 frames[depth],
 *           u64 counters[ncounters].
 * BINS:     u32 n, then per bin: u32 size (0..1024; 1025 means "larger"),
 *           u64 allocs, u64 frees, u64 bytes, u64 bytes_freed.
 * THREADS:  u64 n (= the number of stacks), then u32 tid per stack, in
 *           STACKS order: the thread each sampled stack was seen in
 *           (cpprof).  Optional; after STACKS.
 * LIFETIMES: (mprof, issue 24; optional, after STACKS) u32 nbuckets
 *           (FORMAT_LT_BUCKETS), u32 n, then n entries: u64 stack number
 *           (STACKS order), u64 samples, nbuckets u64 by time, nbuckets u64
 *           by bytes allocated meanwhile, u64 still live: the sampled
 *           objects of that stack (each one allocated byte's object).
 * TIMELINE: the heap over time (mprof, issue 24; optional, after STACKS):
 *           u32 flags (FORMAT_TL_ESTIMATES), u32 ntrack, then ntrack u64
 *           stack numbers (in STACKS order: the stacks whose live bytes
 *           points give), u32 npoints, then per point, in time order:
 *           u64 ns (since INFO start_ns), u64 live bytes, u64 live
 *           objects, u64 bytes allocated so far, u32 flags
 *           (FORMAT_TL_PEAK, FORMAT_TL_END), u32 ntop (at most
 *           FORMAT_TL_TOP), then ntop pairs (u32 index into the tracked
 *           stacks, u64 that stack's live bytes then).
 */
enum format_section {
	FORMAT_SEC_INFO = 1,
	FORMAT_SEC_MODULES = 2,
	FORMAT_SEC_COUNTERS = 3,
	FORMAT_SEC_STACKS = 4,
	FORMAT_SEC_BINS = 5,
	FORMAT_SEC_THREADS = 6,
	FORMAT_SEC_TIMELINE = 7,
	FORMAT_SEC_LIFETIMES = 8,
};

/* LIFETIMES (doc/format.md): a stack's sampled objects by how long they
 * lived, in time (below 10 us, 1 ms, 100 ms, 10 s, and longer) and in
 * bytes allocated meanwhile (below 4 KiB, 256 KiB, 16 MiB, 1 GiB, and
 * more); then those still live. */
#define FORMAT_LT_BUCKETS 5
#define FORMAT_LT_MAX_STACKS (1u << 20)

/* TIMELINE (doc/format.md). */
#define FORMAT_TL_ESTIMATES 1u /* section flag: a sampled run's estimates */
#define FORMAT_TL_PEAK 1u      /* point flag: the heap's peak */
#define FORMAT_TL_END 2u       /* point flag: the heap when the file was written */
#define FORMAT_TL_RUN 4u       /* point flag: a merged file's next run begins */
#define FORMAT_TL_TOP 8        /* tracked stacks' values a point holds at most */
#define FORMAT_TL_TRACK 64     /* stacks a timeline tracks at most */
#define FORMAT_TL_POINTS 4096  /* points a reader accepts at most */
/* A point's value of one tracked stack. */
struct format_tl_top {
	uint32_t slot, pad;
	int64_t bytes;
};

/* Stack flags. */
#define FORMAT_STACK_TRUNCATED 1u /* outer frames beyond depth were dropped */
#define FORMAT_STACK_PC_FIRST 2u  /* frames[0] is a pc, not a return address */
#define FORMAT_STACK_ENTRY 4u     /* every frame is a function's entry address (cfprof's
				   * logical paths), not a return address */
/* Bits 8-15: the category (1-255) of objects a program reported itself
 * (mprof.h's mprof_alloc), named by INFO's category.N; 0 for malloc's. */
#define FORMAT_STACK_CATEGORY_SHIFT 8
#define FORMAT_STACK_CATEGORY(flags) (((flags) >> FORMAT_STACK_CATEGORY_SHIFT) & 0xffu)

/*
 * A Lisp profile's pseudo-frames: a frame FORMAT_LISP_FRAME(id) is no
 * address (it is not canonical: user addresses are below 2^47, the
 * kernel's from 0xffff800000000000) but the Lisp function INFO's
 * lisp.fn.<id> names, in place of the interpreter's frame that ran it.
 */
#define FORMAT_LISP_FRAME_BASE 0xfffe000000000000ull
#define FORMAT_LISP_FRAME(id) (FORMAT_LISP_FRAME_BASE | (uint64_t)(uint32_t)(id))
#define FORMAT_IS_LISP_FRAME(a) (((a) >> 32) == FORMAT_LISP_FRAME_BASE >> 32)
#define FORMAT_LISP_FRAME_ID(a) ((uint32_t)(a))

/*
 * A language frame (a Python function at a line, doc/format.md "Language
 * frames"): FORMAT_LANG_FRAME(id), not canonical either, stands for the
 * function INFO's lang.fn.<id> names ("NAME<tab>FILE:LINE"), in place of
 * the interpreter's frame that ran it.
 */
#define FORMAT_LANG_FRAME_BASE 0xfffd000000000000ull
#define FORMAT_LANG_FRAME(id) (FORMAT_LANG_FRAME_BASE | (uint64_t)(uint32_t)(id))
#define FORMAT_IS_LANG_FRAME(a) (((a) >> 32) == FORMAT_LANG_FRAME_BASE >> 32)
#define FORMAT_LANG_FRAME_ID(a) ((uint32_t)(a))

/* Largest values a reader accepts; a file beyond them is corrupt. */
#define FORMAT_MAX_DEPTH 4096
#define FORMAT_MAX_COUNTERS 256
#define FORMAT_MAX_STRING (1u << 20)
/* Frames and counters all the stacks of a file may hold once decoded
 * (a bound on the views' work, not their memory: 2^27 refused a cfprof
 * file of a C++ test suite under gmock, 8.6M paths, ~300M frames). */
#define FORMAT_MAX_VALUES (1ull << 30)

/* mprof size classes (mprof.1, FIELDS IN THE OUTPUT). */
enum { SIZE_S, SIZE_M, SIZE_L, SIZE_X, SIZE_NCLASSES };
static inline int format_size_class(uint64_t size)
{
	return size <= 32 ? SIZE_S : size <= 256 ? SIZE_M : size <= 2048 ? SIZE_L : SIZE_X;
}

/* mprof bins: one per size 0..1024, and one (index 1025) for larger. */
#define FORMAT_NBINS 1026
static inline uint32_t format_bin_index(uint64_t size)
{
	return size <= 1024 ? (uint32_t)size : 1025;
}

/*
 * The counters of an mprof stack, in this order, named by
 * format_mprof_counter_names: per size class s, m, l, x the number of
 * allocations, the bytes allocated, the number of frees and the bytes freed
 * of objects allocated on this stack; every mprof file has these
 * MPROF_NCOUNTERS.  Then the live bytes and objects the stack held when
 * the heap was at its peak (runtime/mprof/peak.h): the monitor writes them
 * since issue 15; a file from before has none, and readers do without.
 * Then the stack's temporary allocations, objects and bytes (freed, by
 * free or a realloc, as the next event of the thread that made them:
 * heaptrack's definition), since issue 24; optional in the same way.
 * Then, only from a run whose objects were classified at exit
 * (MPROF_LEAKS=scan, runtime/mprof/leakscan.h), the bytes and objects the
 * stack kept that were definitely lost, indirectly lost, possibly lost and
 * still reachable (memcheck's classes); they add up to what it kept.
 */
enum {
	MPROF_C_ALLOCS = 0,
	MPROF_C_BYTES = SIZE_NCLASSES,
	MPROF_C_FREES = 2 * SIZE_NCLASSES,
	MPROF_C_FREED = 3 * SIZE_NCLASSES,
	MPROF_NCOUNTERS = 4 * SIZE_NCLASSES,
	MPROF_C_PEAK_BYTES = MPROF_NCOUNTERS,
	MPROF_C_PEAK_OBJECTS,
	MPROF_C_TEMP_OBJECTS,
	MPROF_C_TEMP_BYTES,
	MPROF_NCOUNTERS_ALL, /* what the monitor always writes */
	MPROF_C_LOST_BYTES = MPROF_NCOUNTERS_ALL,
	MPROF_C_LOST_OBJECTS,
	MPROF_C_INDIRECT_BYTES,
	MPROF_C_INDIRECT_OBJECTS,
	MPROF_C_POSSIBLE_BYTES,
	MPROF_C_POSSIBLE_OBJECTS,
	MPROF_C_REACHABLE_BYTES,
	MPROF_C_REACHABLE_OBJECTS,
	MPROF_NCOUNTERS_SCAN, /* what it writes after a leak scan */
};
/* The classes, in the order of their counters: lost first. */
enum { MPROF_CLASS_LOST, MPROF_CLASS_INDIRECT, MPROF_CLASS_POSSIBLE, MPROF_CLASS_REACHABLE,
       MPROF_NCLASSES };
extern const char *const format_mprof_counter_names[MPROF_NCOUNTERS_SCAN];
extern const char *const format_mprof_counter_units[MPROF_NCOUNTERS_SCAN];

uint32_t format_crc32(uint32_t crc, const void *buf, size_t len);

struct format_writer {
	int fd;
	unsigned char *buf;
	size_t cap, len;
	uint64_t off;       /* file offset of buf[0] */
	uint64_t sec_start; /* file offset of the open section's header */
	uint64_t sec_len;   /* payload bytes written so far */
	uint32_t sec_type;
	uint32_t crc;
	size_t crc_from;    /* buf[crc_from..len) is not yet in crc */
	uint32_t nsections;
	uint32_t kind;
	int in_section;
	int error; /* first errno met; every later call does nothing */
};

/* Start a file on fd (empty, regular) using buf (cap >= 4096) for output. */
void format_writer_init(struct format_writer *w, int fd, void *buf, size_t cap, uint32_t kind);
void format_begin_section(struct format_writer *w, uint32_t type);
void format_put_u32(struct format_writer *w, uint32_t v);
void format_put_u64(struct format_writer *w, uint64_t v);
/* n values, as n format_put_u64 calls would (in one copy on this host). */
void format_put_u64s(struct format_writer *w, const uint64_t *v, size_t n);
void format_put_bytes(struct format_writer *w, const void *p, size_t n);
/*
 * One STACKS entry: own[0..depth-shared) are the stack's innermost frames;
 * its outermost `shared` frames are those of the stack written `ref`
 * entries before (ref 0: none, and shared must be 0).
 */
/* One TIMELINE point (negative values are written as 0). */
void format_put_tl_point(struct format_writer *w, uint64_t ns, int64_t live, int64_t objects,
			 uint64_t allocated, uint32_t flags, uint32_t ntop,
			 const struct format_tl_top *top);
void format_put_stack(struct format_writer *w, uint32_t depth, uint32_t flags, uint64_t ref,
		      uint32_t shared, const uint64_t *own, const uint64_t *counts,
		      uint32_t ncounts);
/*
 * n STACKS entries, as n format_put_stack calls would write them, each
 * with ncounts counters: for a writer with many (the monitor's save), the
 * call and its checks once for all.
 */
struct format_stack {
	const uint64_t *own, *counts;
	uint64_t ref;
	uint32_t depth, flags, shared;
};
void format_put_stacks(struct format_writer *w, const struct format_stack *s, size_t n,
		       uint32_t ncounts);
/* How many outermost frames stacks a and b have in common. */
uint32_t format_common_outer(const uint64_t *a, uint32_t na, const uint64_t *b, uint32_t nb);
/* A string: u32 length, then the bytes (s may be NULL: empty). */
void format_put_str(struct format_writer *w, const char *s);
void format_put_blob(struct format_writer *w, const void *p, uint32_t n);
void format_end_section(struct format_writer *w);
/* Flush, patch the header; 0 on success, else -errno of the first failure. */
int format_writer_finish(struct format_writer *w);

#endif
