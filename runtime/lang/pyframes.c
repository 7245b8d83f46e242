/*
 * pyframes.c - owns reading CPython from inside it (py_*, pyframes.h):
 * whether the interpreter is one whose layout the runtime knows, and the
 * Python frames that a captured C stack runs.
 *
 * CPython 3.11 keeps a thread's Python frames in a chain of
 * _PyInterpreterFrame (pycore_frame.h), innermost first from the thread
 * state's cframe->current_frame, each with its code object and its last
 * instruction.  One C activation of the eval loop, _PyEval_EvalFrameDefault,
 * runs several of them (a Python call from Python makes no C call): the
 * frames up to and including one marked is_entry.  So the k-th eval frame
 * of a C stack, from the innermost, runs the k-th such group.  The
 * interpreter's other C frames (the object allocator, the call
 * machinery, main) are left out; C frames of other objects (extension
 * modules, libraries) stay where they are: a mixed stack, as py-spy's
 * native mode shows one.  A group whose eval frame the walk did not see
 * (a frame in the loop's cold part, split out by the compiler) goes with
 * the next one found, and the groups left after the last go at the end:
 * the Python frames are always all there, in order.
 *
 * The layout comes from pylayout.h (the installed python3's headers).
 * py_setup checks it before any frame is read: the interpreter's version,
 * and the names of two type objects (code, str) at the offset the headers
 * give, read with reads that cannot fault.  Every frame read is checked:
 * its code object must be of the code type; if not, frames are read no
 * more (said once).
 */
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "format.h"
#include "langname.h"
#include "outfile.h"
#include "pyframes.h"
#include "pylayout.h"

static int state = -2; /* -2: not set up; else py_setup's answer */
static uintptr_t eval_lo, eval_hi;     /* _PyEval_EvalFrameDefault */
static uintptr_t interp_lo, interp_hi; /* the interpreter's code */
static uintptr_t libc_lo, libc_hi;     /* libc's (the start, below main) */
static uintptr_t code_type, str_type;
static void *(*tstate_get)(void);  /* the thread holding the GIL's */
static const uintptr_t *tstate_current; /* what tstate_get reads */
static uintptr_t runtime;               /* _PyRuntime */
static const uintptr_t *finalizing;     /* _PyRuntime._finalizing: non-zero at shutdown */
static void *(*tstate_mine)(void); /* this thread's, GIL or not */
static int (*check_line)(int, void *); /* _PyCode_CheckLineNumber */
static char lang[40] = "python";
uintptr_t py_code_type;
uint64_t py_code_frees;

#define WORD(p, off) (*(const uintptr_t *)((p) + (off)))

/* Say why frames are not read, once, on stderr and in INFO. */
static const char *tool = "mprof";

static void refuse(const char *why)
{
	static const char m[] = ": Python frames not read: ";
	static int said;

	langname_status(why);
	if (!__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED)) {
		outfile_say(tool, strlen(tool));
		outfile_say(m, sizeof m - 1);
		outfile_say(why + 6, strlen(why + 6)); /* after "none: " */
		outfile_say("; stacks stay native\n", 21);
	}
}

/* ---- is this CPython? ---- */

static int found_libpython;

static int find_libpython(struct dl_phdr_info *info, size_t size, void *data)
{
	const char *base = strrchr(info->dlpi_name, '/');

	(void)size;
	(void)data;
	base = base ? base + 1 : info->dlpi_name;
	if (!strncmp(base, "libpython3", 10))
		found_libpython = 1;
	return found_libpython;
}

/* The executable is a python3 or a libpython3 is loaded: only then is
 * dlsym asked (a failed one leaves libc a message to free). */
static int python_here(void)
{
	char exe[256], *base;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);

	if (n > 0) {
		exe[n] = 0;
		base = strrchr(exe, '/');
		base = base ? base + 1 : exe;
		if (!strncmp(base, "python3", 7))
			return 1;
	}
	dl_iterate_phdr(find_libpython, NULL);
	return found_libpython;
}

/* The executable segment of the object that holds address a. */
struct seg {
	uintptr_t a, lo, hi;
};

static int find_seg(struct dl_phdr_info *info, size_t size, void *data)
{
	struct seg *s = data;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && s->a >= lo &&
		    s->a < lo + ph->p_memsz) {
			s->lo = lo;
			s->hi = lo + ph->p_memsz;
			return 1;
		}
	}
	return 0;
}

__thread uint64_t py_safe_syscalls;

/* n bytes at src into dst, or -1 if they are not all readable.  Two
 * system calls, counted (py_safe_syscalls). */
static int safe_read(void *dst, uintptr_t src, size_t n)
{
	struct iovec l = { dst, n }, r = { (void *)src, n };

	py_safe_syscalls += 2;
	return process_vm_readv(getpid(), &l, 1, &r, 1, 0) == (ssize_t)n ? 0 : -1;
}

/* Whether the type object at t is named want (tp_name, safe reads). */
static int type_named(uintptr_t t, const char *want)
{
	uintptr_t name;
	char buf[16];
	size_t n = strlen(want) + 1;

	return t && safe_read(&name, t + PYL_TP_NAME, sizeof name) == 0 &&
	       safe_read(buf, name, n) == 0 && !memcmp(buf, want, n);
}

#ifdef PYL_NONE
int py_setup(const char *who)
{
	tool = who;
	if (state == -2) {
		state = python_here() ? -1 : 0;
		if (state < 0) {
			langname_profile(lang);
			refuse("none: the runtime was built without Python's headers (python3-dev)");
		}
	}
	return state;
}
#else
int py_setup(const char *who)
{
	const uint32_t *ver;
	Dl_info info;
	const ElfW(Sym) *sym = NULL;
	struct seg sg = { 0, 0, 0 };
	void *f;

	if (state != -2)
		return state;
	tool = who;
	state = 0;
	if (!python_here())
		return 0;
	state = -1;
	ver = dlsym(RTLD_DEFAULT, "Py_Version");
	if (ver)
		snprintf(lang, sizeof lang, "python %u.%u.%u", *ver >> 24, *ver >> 16 & 0xff,
			 *ver >> 8 & 0xff);
	langname_profile(lang);
	if (!ver || (*ver & 0xffff0000u) != PYL_HEX) {
		refuse("none: not the Python whose layout the runtime has (" PYL_VERSION ")");
		return state;
	}
	tstate_get = (void *(*)(void))dlsym(RTLD_DEFAULT, "_PyThreadState_UncheckedGet");
	tstate_mine = (void *(*)(void))dlsym(RTLD_DEFAULT, "PyGILState_GetThisThreadState");
	check_line = (int (*)(int, void *))dlsym(RTLD_DEFAULT, "_PyCode_CheckLineNumber");
	code_type = (uintptr_t)dlsym(RTLD_DEFAULT, "PyCode_Type");
	str_type = (uintptr_t)dlsym(RTLD_DEFAULT, "PyUnicode_Type");
	f = dlsym(RTLD_DEFAULT, "_PyEval_EvalFrameDefault");
	runtime = (uintptr_t)dlsym(RTLD_DEFAULT, "_PyRuntime");
	if (runtime) {
		tstate_current = (const uintptr_t *)(runtime + PYL_RT_TSTATE);
		finalizing = (const uintptr_t *)(runtime + PYL_RT_FINALIZING);
	}
	if (!tstate_get || !tstate_current || !tstate_mine || !check_line || !code_type || !str_type || !f) {
		refuse("none: the interpreter's functions were not found");
		return state;
	}
	if (!dladdr1(f, &info, (void **)&sym, RTLD_DL_SYMENT) || !sym || !sym->st_size) {
		refuse("none: the eval loop's size is not known");
		return state;
	}
	eval_lo = (uintptr_t)f;
	eval_hi = eval_lo + sym->st_size;
	sg.a = eval_lo;
	dl_iterate_phdr(find_seg, &sg);
	if (!sg.lo) {
		refuse("none: the interpreter's code was not found");
		return state;
	}
	interp_lo = sg.lo;
	interp_hi = sg.hi;
	sg = (struct seg){ (uintptr_t)&exit, 0, 0 };
	dl_iterate_phdr(find_seg, &sg);
	libc_lo = sg.lo;
	libc_hi = sg.hi;
	if (!type_named(code_type, "code") || !type_named(str_type, "str")) {
		refuse("none: the interpreter's objects are not laid out as its headers say");
		return state;
	}
	langname_status("read");
	py_code_type = code_type;
	__atomic_store_n(&state, 1, __ATOMIC_RELEASE);
	return state;
}
#endif

#ifndef PYL_NONE

/* ---- names ---- */

/* The text of str object s, as UTF-8, into buf (cap bytes); its length. */
static size_t str_text(uintptr_t s, char *buf, size_t cap)
{
	unsigned char st;
	size_t len, k = 0;
	const unsigned char *d;
	int kind;

	if (!s || (s & 7) || WORD(s, PYL_OB_TYPE) != str_type)
		goto unknown;
	st = *(const unsigned char *)(s + PYL_STR_COMPACT_AT);
	len = WORD(s, PYL_STR_LENGTH);
	if (!(st & PYL_STR_COMPACT_MASK))
		goto unknown; /* a legacy string: not one of code's */
	if (*(const unsigned char *)(s + PYL_STR_ASCII_AT) & PYL_STR_ASCII_MASK) {
		len = len < cap ? len : cap;
		memcpy(buf, (const void *)(s + PYL_STR_ASCII_DATA), len);
		return len;
	}
	kind = *(const unsigned char *)(s + PYL_STR_KIND_AT) >> PYL_STR_KIND_SHIFT & 7;
	d = (const unsigned char *)(s + PYL_STR_COMPACT_DATA);
	for (size_t i = 0; i < len; i++) {
		uint32_t c = kind == 1 ? d[i] : kind == 2 ? ((const uint16_t *)d)[i]
							: ((const uint32_t *)d)[i];
		if (k + 4 > cap)
			break;
		if (c < 0x80) {
			buf[k++] = (char)c;
		} else if (c < 0x800) {
			buf[k++] = (char)(0xc0 | c >> 6);
			buf[k++] = (char)(0x80 | (c & 0x3f));
		} else if (c < 0x10000) {
			buf[k++] = (char)(0xe0 | c >> 12);
			buf[k++] = (char)(0x80 | (c >> 6 & 0x3f));
			buf[k++] = (char)(0x80 | (c & 0x3f));
		} else {
			buf[k++] = (char)(0xf0 | c >> 18);
			buf[k++] = (char)(0x80 | (c >> 12 & 0x3f));
			buf[k++] = (char)(0x80 | (c >> 6 & 0x3f));
			buf[k++] = (char)(0x80 | (c & 0x3f));
		}
	}
	return k;
unknown:
	memcpy(buf, "?", 1);
	return 1;
}

/* What tells code objects at one address apart (one freed, another made
 * there: module code is freed once run): its names and first line. */
static uintptr_t code_check(uintptr_t code)
{
	return WORD(code, PYL_CO_QUALNAME) ^ WORD(code, PYL_CO_FILENAME) * 0x9e3779b97f4a7c15ull ^
	       (uintptr_t)*(const int *)(code + PYL_CO_FIRSTLINENO);
}

/*
 * What is read of a frame and of its code object: in place, or (safe, in
 * cpprof's signal handler, which may interrupt the interpreter anywhere)
 * copied by reads that cannot fault, one a frame and one a code object.
 * A view is the address to read at: the object's own, or the copy's.
 */
#define MAX2(a, b) ((a) > (b) ? (a) : (b))
#define FR_SPAN MAX2(MAX2(PYL_FR_CODE, PYL_FR_PREVIOUS), MAX2(PYL_FR_PREV_INSTR, PYL_FR_IS_ENTRY)) + 8
#define CO_SPAN                                                                          \
	MAX2(MAX2(MAX2(PYL_OB_TYPE, PYL_CO_QUALNAME), MAX2(PYL_CO_FILENAME, PYL_CO_FIRSTLINENO)), \
	     PYL_CO_FIRSTTRACEABLE) + 8
struct copies {
	uintptr_t fr[(FR_SPAN + 7) / 8], co[(CO_SPAN + 7) / 8];
};

static inline __attribute__((always_inline)) uintptr_t view(uintptr_t *copy, uintptr_t a,
							    size_t n, const int safe)
{
	if (!safe)
		return a;
	return safe_read(copy, a, n) == 0 ? (uintptr_t)copy : 0;
}

/*
 * The line of instruction instr of code.  CPython's PyCode_Addr2Line
 * reads the code's line table from its start each time (module code is
 * long: thousands of instructions a call); this thread's cursor into the
 * table of the code last asked about moves from where it was (both ways:
 * _PyCode_CheckLineNumber, CPython's own reader).  The cursor is laid out
 * as cpython/code.h's PyCodeAddressRange; forgotten when a code object
 * was freed since (another could be at its address).
 */
struct line_cursor {
	int ar_start, ar_end, ar_line;
	struct {
		int computed_line;
		const uint8_t *lo_next, *limit;
	} o;
};
_Static_assert(sizeof(struct line_cursor) == PYL_RANGE_SIZE &&
		       offsetof(struct line_cursor, ar_line) == PYL_RANGE_LINE &&
		       offsetof(struct line_cursor, o.computed_line) == PYL_RANGE_LINE0 &&
		       offsetof(struct line_cursor, o.lo_next) == PYL_RANGE_NEXT &&
		       offsetof(struct line_cursor, o.limit) == PYL_RANGE_LIMIT,
	       "_PyCode_CheckLineNumber's cursor as the headers lay it out");
static __thread struct {
	uintptr_t code, check;
	uint64_t frees;
	struct line_cursor c;
} lc;

static int line_of(uintptr_t code, uintptr_t check, uint32_t instr)
{
	uint64_t frees = __atomic_load_n(&py_code_frees, __ATOMIC_RELAXED);

	if (lc.code != code || lc.check != check || lc.frees != frees) {
		uintptr_t table = WORD(code, PYL_CO_LINETABLE);

		lc.code = code;
		lc.check = check;
		lc.frees = frees;
		/* As CPython's _PyLineTable_InitAddressRange. */
		lc.c.o.lo_next = (const uint8_t *)(table + PYL_BYTES_DATA);
		lc.c.o.limit = lc.c.o.lo_next + WORD(table, PYL_VAR_SIZE);
		lc.c.ar_start = -1;
		lc.c.ar_end = 0;
		lc.c.o.computed_line = *(const int *)(code + PYL_CO_FIRSTLINENO);
		lc.c.ar_line = -1;
	}
	return check_line((int)(instr * PYL_CODEUNIT), &lc.c);
}

/* A copy of str object s (its header and up to LANGNAME_LEN characters)
 * in buf, by reads that cannot fault; its address, or 0. */
#define STR_COPY (PYL_STR_COMPACT_DATA + 4 * LANGNAME_LEN)
static uintptr_t str_copy(uintptr_t s, uintptr_t *buf)
{
	for (size_t n = STR_COPY; n >= 64; n /= 2)
		if (safe_read(buf, s, n) == 0)
			return (uintptr_t)buf;
	return 0;
}

/*
 * A frame met for the first time: its names and line, interned.  co is
 * the code object's view (frame_of's).  safe (cpprof's signal handler and
 * watcher, where the code object may be going): the strings and the line
 * table are read by reads that cannot fault, the table into lines (its
 * scratch, LINES_MAX bytes; a longer one gives line 0).
 */
#define LINES_MAX 8192
static __attribute__((noinline)) uint32_t name_frame(uintptr_t code, uintptr_t co, uint32_t instr,
						     uint8_t *lines, int safe)
{
	char fn[LANGNAME_LEN], file[LANGNAME_LEN];
	uintptr_t check = code_check(co), q = WORD(co, PYL_CO_QUALNAME),
		  fl = WORD(co, PYL_CO_FILENAME), table, hdr[(PYL_VAR_SIZE + 8) / 8];
	uintptr_t sq[(STR_COPY + 7) / 8];
	size_t nf, nl;
	int line = 0;

	if (!safe) {
		nf = str_text(q, fn, sizeof fn);
		nl = str_text(fl, file, sizeof file);
		line = line_of(code, check, instr);
		return langname_add(code, instr, check, fn, nf, file, nl, line);
	}
	/* str_text reads the copy as it would the object (its type word is
	 * the object's). */
	if (!(q = q ? str_copy(q, sq) : 0))
		return 0;
	nf = str_text(q, fn, sizeof fn);
	if (!(fl = fl ? str_copy(fl, sq) : 0))
		return 0;
	nl = str_text(fl, file, sizeof file);
	table = WORD(co, PYL_CO_LINETABLE);
	if (lines && table && safe_read(hdr, table, sizeof hdr) == 0 &&
	    WORD((uintptr_t)hdr, PYL_VAR_SIZE) <= LINES_MAX &&
	    safe_read(lines, table + PYL_BYTES_DATA, WORD((uintptr_t)hdr, PYL_VAR_SIZE)) == 0) {
		struct line_cursor c = { -1, 0, -1, { *(const int *)(co + PYL_CO_FIRSTLINENO),
						     lines, lines + WORD((uintptr_t)hdr, PYL_VAR_SIZE) } };

		line = check_line((int)(instr * PYL_CODEUNIT), &c);
	}
	return langname_add(code, instr, check, fn, nf, file, nl, line);
}

/* The pseudo-frame of interpreter frame f, or 0 when f is incomplete (a
 * call under way: not yet a frame of its function's); BAD on a frame that
 * is not laid out as the headers say. */
#define BAD 1
static inline __attribute__((always_inline)) uint64_t frame_of(uintptr_t f, int *entry,
							       uintptr_t *previous, uint8_t *lines,
							       const int safe)
{
	struct copies c;
	uintptr_t fr = view(c.fr, f, FR_SPAN, safe), code, co, start, prev;
	uint32_t instr, id;

	if (!fr || !(code = WORD(fr, PYL_FR_CODE)) || (code & 7) ||
	    !(co = view(c.co, code, CO_SPAN, safe)) || WORD(co, PYL_OB_TYPE) != code_type)
		return BAD;
	*entry = *(const unsigned char *)(fr + PYL_FR_IS_ENTRY) != 0;
	*previous = WORD(fr, PYL_FR_PREVIOUS);
	start = code + PYL_CO_CODE;
	prev = WORD(fr, PYL_FR_PREV_INSTR);
	if (*(const char *)(fr + PYL_FR_OWNER) != PYL_OWNED_BY_GENERATOR &&
	    prev < start + (uintptr_t)*(const int *)(co + PYL_CO_FIRSTTRACEABLE) * PYL_CODEUNIT)
		return 0;
	instr = prev >= start ? (uint32_t)((prev - start) / PYL_CODEUNIT) : 0;
	id = langname_find(code, instr, code_check(co));
	/* A new one is named from the code object (its strings and line
	 * table, which a live code object holds). */
	if (!id)
		id = name_frame(code, co, instr, lines, safe);
	return FORMAT_LANG_FRAME(id);
}

/* Frames of the chain from *f into out[*n..max), through the end of its
 * group (an entry frame), or all of it (all); *f moves on.  -1 on a
 * frame laid out otherwise. */
static inline __attribute__((always_inline)) int group(uintptr_t *f, uint64_t *out, int *n,
						       int max, int all, uint8_t *lines,
						       const int safe)
{
	int guard = 0, entry;

	/* Past max, frames are neither kept nor named. */
	while (*f && guard++ < 4096 && *n < max) {
		uint64_t v = frame_of(*f, &entry, f, lines, safe);

		if (v == BAD)
			return -1;
		if (v && *n < max)
			out[(*n)++] = v;
		if (entry && !all)
			break;
	}
	return 0;
}

/* The calling thread's innermost Python frame, or 0.  The thread state:
 * the GIL holder's is one load (what _PyThreadState_UncheckedGet reads,
 * checked against it as each new stack is made), this thread's if its
 * id says so; a thread that let the GIL go (a C function that may block:
 * os.listdir's opendir) finds its own by its thread-specific key.  Its
 * frames stay as they are while it runs C code: only it changes them. */
static inline __attribute__((always_inline)) uintptr_t innermost(int *own, const int safe)
{
	uintptr_t ts, cf, w;

	*own = 0;
	if (__atomic_load_n(&state, __ATOMIC_ACQUIRE) != 1)
		return 0;
	ts = __atomic_load_n(tstate_current, __ATOMIC_RELAXED);
	w = 0;
	/* safe: another thread's state may be going as it is read. */
	if (ts && !safe)
		w = WORD(ts, PYL_TS_THREAD_ID);
	else if (ts && safe_read(&w, ts + PYL_TS_THREAD_ID, sizeof w) < 0)
		w = 0;
	/* Its own state by its key: not while the interpreter shuts down,
	 * which frees the daemon threads' states while their keys still
	 * name them (the GIL holder's is alive). */
	if (ts && w == (uintptr_t)pthread_self())
		*own = 1;
	else if (__atomic_load_n(finalizing, __ATOMIC_RELAXED))
		return 0;
	else
		ts = (uintptr_t)tstate_mine();
	if (!ts)
		return 0;
	if (!safe)
		return (cf = WORD(ts, PYL_TS_CFRAME)) ? WORD(cf, PYL_CF_CURRENT) : 0;
	if (safe_read(&cf, ts + PYL_TS_CFRAME, sizeof cf) < 0 || !cf ||
	    safe_read(&w, cf + PYL_CF_CURRENT, sizeof w) < 0)
		return 0;
	return w;
}

static void mismatch(const char *why)
{
	__atomic_store_n(&state, -1, __ATOMIC_RELEASE);
	refuse(why);
}

#define EVAL(pc) ((pc) > eval_lo && (pc) <= eval_hi)

/*
 * The key (lang.h) of the chain from innermost(): per frame, its last
 * instruction (an address in its code object: the code and the
 * instruction at once) and its entry and owner marks (one 16-bit word);
 * and the count of code objects freed (python.c): another code object
 * made where one was freed has the same addresses, and the key then
 * changes.  Two hashes of their own.  No frames: the key (0, 0), which no
 * chain gives.
 */
#define PY_KEY_FRAMES 1024 /* stacks.h's STACKS_MAX_DEPTH */

static void py_key(uint64_t k[2])
{
	uint64_t a = 0x243f6a8885a308d3ull, b = __atomic_load_n(&py_code_frees, __ATOMIC_RELAXED);
	int own;
	uintptr_t f = innermost(&own, 0);
	int n = 0;

	(void)own;
	if (!f) {
		k[0] = k[1] = 0;
		return;
	}
	/* The innermost PY_KEY_FRAMES only: a stack keeps no more frames
	 * (the monitor's MON_MAX_DEPTH), so deeper ones cannot tell two
	 * rewrites apart; at 4096, a recursion 30,000 deep made each
	 * allocation's key 40,000 instructions. */
	while (f && n++ < PY_KEY_FRAMES) {
		uint64_t w = WORD(f, PYL_FR_PREV_INSTR) ^
			     (uint64_t)*(const uint16_t *)(f + PYL_FR_IS_ENTRY) << 48;

		a = (a ^ w) * 0x9e3779b97f4a7c15ull;
		a ^= a >> 29;
		b = (b + w) * 0xc2b2ae3d27d4eb4full;
		f = WORD(f, PYL_FR_PREVIOUS);
	}
	k[0] = a | 1; /* never (0, 0) */
	k[1] = b ^ (uint64_t)n;
}

/*
 * A C stack as kept (lang.h's strip): with an eval frame, the
 * interpreter's other frames left out, each eval frame as one address
 * (whichever of its calls it was in), and below the outermost, libc's
 * start left out; rewrite reads it as it reads the stack captured.
 */
static int py_strip(uint64_t *frames, int depth)
{
	int n = 0, last, i;

	if (__atomic_load_n(&state, __ATOMIC_ACQUIRE) != 1)
		return depth;
	/* The outermost eval frame, from the outer end: most C stacks of an
	 * interpreter have one, near main. */
	for (last = depth - 1; last >= 0 && !EVAL(frames[last]); last--)
		;
	if (last < 0)
		return depth;
	for (i = 0; i <= last; i++) {
		uint64_t pc = frames[i];

		/* A return address: pc - 1 is in the calling function. */
		if (EVAL(pc))
			frames[n++] = eval_lo + 1;
		else if (pc <= interp_lo || pc > interp_hi)
			frames[n++] = pc;
	}
	for (; i < depth; i++) {
		uint64_t pc = frames[i];

		if ((pc <= interp_lo || pc > interp_hi) && (pc <= libc_lo || pc > libc_hi))
			frames[n++] = pc;
	}
	return n;
}

/* The stack frames[0..depth-1] with the Python frames from f (the
 * thread's innermost) in place of the eval loop's, through out (max
 * frames of scratch); past max, the outer frames are left out and *flags
 * gets FORMAT_STACK_TRUNCATED (a recursion 3,000 Python frames deep is
 * one C frame deep: the C walk did not see it).  A frame laid out otherwise: in place, the layout
 * is not the headers' (said once, frames read no more); safe (a signal
 * handler's or the watcher's reads, which may catch the interpreter
 * between two stores, or a thread that woke), this stack stays native. */
static inline __attribute__((always_inline)) int rewrite(uint64_t *frames, int depth, int max,
							   uint64_t *out, uint32_t *flags, uint8_t *lines,
							   uintptr_t f, const int safe)
{
	int n = 0, evals = 0, i, cut = 0;

	if (!f)
		return depth;
	depth = py_strip(frames, depth);
	for (i = 0; i < depth; i++)
		evals += EVAL(frames[i]);
	if (!evals)
		return depth;
	for (i = 0; i < depth; i++) {
		if (EVAL(frames[i])) {
			if (group(&f, out, &n, max, 0, lines, safe) < 0)
				goto bad;
		} else if (n < max) {
			out[n++] = frames[i];
		} else {
			cut = 1;
		}
	}
	if (group(&f, out, &n, max, 1, lines, safe) < 0)
		goto bad;
	memcpy(frames, out, (size_t)n * sizeof(*out));
	if (cut || f) /* C frames past max, or Python frames not walked */
		*flags |= FORMAT_STACK_TRUNCATED;
	return n;
bad:
	if (!safe)
		mismatch("none: a frame's code object is not of the code type");
	return depth;
}

/* The thread state is where the headers say: what _PyThreadState_
 * UncheckedGet gives.  Asked only of a thread holding the GIL (own), for
 * which neither can change meanwhile. */
static int tstate_checks(int own)
{
	if (!own || __atomic_load_n(tstate_current, __ATOMIC_RELAXED) == (uintptr_t)tstate_get())
		return 1;
	mismatch("none: the thread state is not where the headers say");
	return 0;
}

static int py_rewrite(uint64_t *frames, int depth, int max, uint64_t *out, uint32_t *flags)
{
	int own;
	uintptr_t f = innermost(&own, 0);

	return f && tstate_checks(own) ? rewrite(frames, depth, max, out, flags, NULL, f, 0)
				       : depth;
}

int py_rewrite_signal(uint64_t *frames, int depth, int max, uint64_t *out, uint32_t *flags,
		      uint8_t *lines)
{
	int own;
	uintptr_t f = innermost(&own, 1);

	return f && tstate_checks(own) ? rewrite(frames, depth, max, out, flags, lines, f, 1)
				       : depth;
}

/* A word at a, or 0 if it cannot be read. */
static uintptr_t safe_word(uintptr_t a)
{
	uintptr_t w;

	return a && safe_read(&w, a, sizeof w) == 0 ? w : 0;
}

/* The innermost frame of the thread whose kernel id is tid, or 0: every
 * interpreter's threads, newest first, read as the lists change (every
 * read safe, every walk bounded). */
static uintptr_t find_thread(long tid)
{
	uintptr_t interp, ts, f;
	int gi = 0, gt = 0;

	for (interp = safe_word(runtime + PYL_RT_INTERP_HEAD); interp && gi++ < 64;
	     interp = safe_word(interp + PYL_IS_NEXT))
		for (ts = safe_word(interp + PYL_IS_THREADS); ts && gt++ < 100000;
		     ts = safe_word(ts + PYL_TS_NEXT))
			/* A state with no frame may carry the id too: the one
			 * a thread makes for a thread it starts has its
			 * maker's id until the new thread runs. */
			if (safe_word(ts + PYL_TS_NATIVE_ID) == (uintptr_t)tid &&
			    (f = safe_word(safe_word(ts + PYL_TS_CFRAME) + PYL_CF_CURRENT)))
				return f;
	return 0;
}

int py_rewrite_thread(uint64_t *frames, int depth, int max, uint64_t *out, uint32_t *flags,
		      uint8_t *lines, long tid)
{
	uintptr_t f = 0;

	if (__atomic_load_n(&state, __ATOMIC_ACQUIRE) != 1)
		return depth;
	/* Another thread leaving the list as it is walked may cut the walk
	 * short: a second try. */
	for (int tries = 0; !f && tries < 2; tries++)
		f = find_thread(tid);
	return f ? rewrite(frames, depth, max, out, flags, lines, f, 1) : depth;
}

/* The name of type t if the object whose type word it is has the
 * collector's header (gc) exactly when t says so: its length, or 0.
 * Three reads: the type's header (its type, name and flags), its type's
 * flags, the name. */
#define TP_SPAN MAX2(MAX2(PYL_OB_TYPE, PYL_TP_NAME), PYL_TP_FLAGS) + 8
static size_t type_name(uintptr_t t, int gc, char *buf, size_t cap)
{
	uintptr_t tp[(TP_SPAN + 7) / 8], meta, name;
	unsigned long flags, mflags;
	size_t n;

	/* A type: its own type's flags say it is one (type and its
	 * subclasses); its flags, whether its objects have the header. */
	if (!t || (t & 7) || safe_read(tp, t, TP_SPAN) < 0)
		return 0;
	flags = (unsigned long)WORD((uintptr_t)tp, PYL_TP_FLAGS);
	meta = WORD((uintptr_t)tp, PYL_OB_TYPE);
	name = WORD((uintptr_t)tp, PYL_TP_NAME);
	if (!(flags & PYL_HAVE_GC) != !gc || !meta || (meta & 7) || !name ||
	    safe_read(&mflags, meta + PYL_TP_FLAGS, sizeof mflags) < 0 || !(mflags & PYL_TYPE_SUBCLASS))
		return 0;
	/* A name of at most cap - 1 bytes, printable, NUL-ended; the part
	 * after the last dot (a module's prefix: "collections.OrderedDict"). */
	for (n = cap; n > 8; n /= 2)
		if (safe_read(buf, name, n) == 0)
			break;
	if (n <= 8 && safe_read(buf, name, n) < 0)
		return 0;
	if (!((buf[0] >= 'A' && buf[0] <= 'Z') || (buf[0] >= 'a' && buf[0] <= 'z') || buf[0] == '_'))
		return 0; /* a name begins as an identifier does */
	for (size_t k = 0; k < n; k++) {
		if (!buf[k]) {
			const char *dot = memrchr(buf, '.', k);
			size_t from = dot ? (size_t)(dot - buf) + 1 : 0;

			memmove(buf, buf + from, k - from);
			return k - from;
		}
		if ((unsigned char)buf[k] < 0x21 || (unsigned char)buf[k] > 0x7e)
			return 0;
	}
	return 0;
}

static size_t py_kind(uintptr_t obj, char *buf, size_t cap)
{
	uintptr_t head[(PYL_GC_HEAD + PYL_OB_TYPE + 8 + 7) / 8];
	size_t n;

	/* Its type word: after the collector's header, or right at the
	 * start; the type's own flag says which it is.  The header first:
	 * its first words link other objects' headers, which may pass for
	 * a type (a type's reference count for its name). */
	if (safe_read(head, obj, sizeof head) < 0)
		return 0;
	if ((n = type_name(WORD((uintptr_t)head, PYL_GC_HEAD + PYL_OB_TYPE), 1, buf, cap)))
		return n;
	return type_name(WORD((uintptr_t)head, PYL_OB_TYPE), 0, buf, cap);
}

#else

static void py_key(uint64_t k[2])
{
	k[0] = k[1] = 0;
}

static int py_strip(uint64_t *frames, int depth)
{
	(void)frames;
	return depth;
}

static int py_rewrite(uint64_t *frames, int depth, int max, uint64_t *out, uint32_t *flags)
{
	(void)frames;
	(void)max;
	(void)out;
	(void)flags;
	return depth;
}

int py_rewrite_signal(uint64_t *frames, int depth, int max, uint64_t *out, uint32_t *flags,
		      uint8_t *lines)
{
	(void)lines;
	return py_rewrite(frames, depth, max, out, flags);
}

int py_rewrite_thread(uint64_t *frames, int depth, int max, uint64_t *out, uint32_t *flags,
		      uint8_t *lines, long tid)
{
	(void)lines;
	(void)tid;
	return py_rewrite(frames, depth, max, out, flags);
}

static size_t py_kind(uintptr_t obj, char *buf, size_t cap)
{
	(void)obj;
	(void)buf;
	(void)cap;
	return 0;
}

#endif

static void py_freed_op(const void *p)
{
	py_freed(p);
}

const struct lang_ops py_lang = { py_key, py_strip, py_rewrite, py_kind, py_freed_op };
