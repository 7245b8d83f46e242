/*
 * lisp_ihs.c - owns reading ECL's memory (ihs_*): the layout of what is
 * read, checked against the running ECL (calibrate); the classes of ECL's
 * object types; the invocation history of the calling thread, whose
 * bytecoded functions name the interpreter's frames in a captured stack;
 * and the names of compiled functions as ECL installs them.
 *
 * mprof paper, "Lisp Implementation": the monitor maps addresses to Lisp
 * function names by the mechanism the Lisp system has to print its call
 * stack.  ECL's is the invocation history stack (IHS, stacks.h): every
 * activation of the bytecode interpreter, ecl_interpret, pushes a frame
 * (next, function, lex_env, index, bds) that lives in its C frame, so the
 * k-th ecl_interpret frame of a C stack, from the innermost, interprets
 * the k-th bytecoded function of the history.  Compiled code pushes no
 * frame at ECL's default debug level; its C frames are named offline (the
 * entry table, lname.h).
 *
 * The layout is ECL 21's on x86-64 (external.h, object.h, stacks.h),
 * with the type numbers of the build found at run time: ECL has them move
 * with its configure options (complex floats, Unicode).  Before any
 * history is read, calibrate() checks the layout on objects whose contents
 * are known (the symbols NIL and T, their names and package), with reads
 * that cannot fault (process_vm_readv on this process).  If the check
 * fails, no history is read and INFO lisp.names says why; objects are
 * still counted.  Afterwards the reads are plain loads, each pointer
 * checked first: frames within this thread's stack, consecutive indices,
 * objects aligned and of the expected type.
 */
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "bounds.h"
#include "format.h"
#include "lisp_ihs.h"
#include "lname.h"

/* ---- ECL 21, x86-64: offsets in bytes ---- */
#define ENV_IHS_TOP 648  /* cl_env_struct.ihs_top (threads, 64 values) */
#define ENV_THREAD_FIELDS 24 /* before it: three fields only with threads */
#define IHS_NEXT 0       /* struct ecl_ihs_frame */
#define IHS_FUNCTION 8
#define IHS_INDEX 24
#define IHS_SIZE 40
#define SYMBOL_STRIDE 64 /* cl_symbols[] entries */
#define SYMBOL_NAME 32   /* struct ecl_symbol */
#define SYMBOL_HPACK 48
#define PACKAGE_NAME 8   /* struct ecl_package */
#define STRING_FILLP 24  /* ecl_base_string, ecl_string */
#define STRING_SELF 32
#define BYTECODES_NAME 8 /* struct ecl_bytecodes */
#define BCLOSURE_CODE 8  /* struct ecl_bclosure */
#define CFUN_NAME 8      /* ecl_cfun, ecl_cfunfixed */
#define CFUN_ENTRY 24
#define CFUNFIXED_ENTRY 32
#define T_LIST 1         /* cl_type numbers that never move */
#define T_SINGLEFLOAT 6
#define T_LONGFLOAT 8
#define T_COMPLEX 9
#define ECL_NIL ((uintptr_t)1) /* NIL is the empty list: tag 1, no pointer */

/* Type numbers that depend on the build: t_symbol is 13 with complex
 * floats (3 more number types), else 10; t_string exists with Unicode.
 * Until calibrated: Debian's ECL 21.2.1 (both), types_from(13, 1). */
static struct {
	int symbol, unicode;
	int array, base_string, bitvector, bytecodes, bclosure, cfun, cfunfixed, instance;
} ty = { 13, 1, 16, 19, 20, 25, 26, 27, 28, 30 };

static void types_from(int symbol, int unicode)
{
	ty.symbol = symbol;
	ty.unicode = unicode;
	ty.array = symbol + 3; /* t_package, t_hashtable, then t_array */
	ty.base_string = symbol + 5 + unicode;
	ty.bitvector = ty.base_string + 1;
	/* t_stream, t_random, t_readtable, t_pathname, then functions. */
	ty.bytecodes = ty.bitvector + 5;
	ty.bclosure = ty.bytecodes + 1;
	ty.cfun = ty.bytecodes + 2;
	ty.cfunfixed = ty.bytecodes + 3;
	ty.instance = ty.bytecodes + 5; /* after t_cclosure */
}

int ihs_class(int t)
{
	if (t == T_LIST)
		return LISP_C;
	if ((t >= T_SINGLEFLOAT && t <= T_LONGFLOAT) ||
	    (ty.symbol == 13 && t > T_COMPLEX && t < ty.symbol))
		return LISP_F;
	/* t_array, t_vector, (t_string), t_base_string, t_bitvector; and
	 * instances: structures (defstruct) and CLOS objects. */
	if ((t >= ty.array && t <= ty.bitvector) || t == ty.instance)
		return LISP_S;
	return LISP_O;
}

int ihs_class_of(const void *p)
{
	return ihs_class(*(const int8_t *)p);
}

/* ---- ECL's symbols ---- */

static void *(*env_fn)(void); /* ecl_process_env_unsafe: NULL off an ECL thread */
static void **env_var;         /* cl_env_p, in a build without threads */
static int ihs_top_at = ENV_IHS_TOP; /* offset of ihs_top in the environment */
static const unsigned char *symbols; /* cl_symbols */
static uintptr_t interp_lo, interp_len; /* ecl_interpret's code */
static int calib;              /* the layout was checked: 1 */

void ihs_setup(void)
{
	const ElfW(Sym) *sym = NULL;
	Dl_info info;
	void *f;

	env_fn = (void *(*)(void))dlsym(RTLD_DEFAULT, "ecl_process_env_unsafe");
	if (!env_fn) {
		env_var = dlsym(RTLD_DEFAULT, "cl_env_p");
		ihs_top_at = ENV_IHS_TOP - ENV_THREAD_FIELDS; /* unchecked: no such build here */
	}
	symbols = dlsym(RTLD_DEFAULT, "cl_symbols");
	f = dlsym(RTLD_DEFAULT, "ecl_interpret");
	if (f && dladdr1(f, &info, (void **)&sym, RTLD_DL_SYMENT) && sym && sym->st_size) {
		interp_lo = (uintptr_t)f;
		interp_len = sym->st_size;
	}
	if (!env_fn && !env_var)
		lname_status("none: ECL's environment not found (no ecl_process_env_unsafe)");
	else if (!symbols || !interp_lo)
		lname_status("none: ECL's cl_symbols or ecl_interpret not found");
}

/* n bytes at src into dst, or -1 if they are not all readable. */
static int safe_read(void *dst, uintptr_t src, size_t n)
{
	struct iovec l = { dst, n }, r = { (void *)src, n };

	return process_vm_readv(getpid(), &l, 1, &r, 1, 0) == (ssize_t)n ? 0 : -1;
}

/* Whether the string object at s (safe reads) is the base string want. */
static int is_string(uintptr_t s, int t_base, const char *want)
{
	unsigned char h[STRING_SELF + 8];
	size_t n = strlen(want);
	uintptr_t self;
	uint64_t fillp;
	char buf[32];

	if ((s & 7) || safe_read(h, s, sizeof h) < 0 || h[0] != t_base)
		return 0;
	memcpy(&fillp, h + STRING_FILLP, 8);
	memcpy(&self, h + STRING_SELF, 8);
	return fillp == n && n < sizeof buf && safe_read(buf, self, n) == 0 && !memcmp(buf, want, n);
}

static uintptr_t word_at(uintptr_t p, int off)
{
	uintptr_t v = 0;

	if (safe_read(&v, p + (uintptr_t)off, sizeof v) < 0)
		return 0;
	return v;
}

/*
 * Check the layout on NIL and T (cl_symbols[0] and [1]): their type, their
 * names "NIL" and "T" (base strings), NIL's home package COMMON-LISP.
 * 0 once it holds, else -1: ECL may not have made its symbols yet (the
 * first objects come before them), so the check is made again later.
 */
static int calibrate(void)
{
	uintptr_t nil = (uintptr_t)symbols, t = nil + SYMBOL_STRIDE, pkg;
	int s = symbols[0], tb;

	if ((s != 13 && s != 10) || symbols[SYMBOL_STRIDE] != s)
		return -1;
	for (tb = s + 5; tb <= s + 6; tb++)
		if (is_string(word_at(nil, SYMBOL_NAME), tb, "NIL"))
			break;
	pkg = word_at(nil, SYMBOL_HPACK);
	if (tb > s + 6 || !is_string(word_at(t, SYMBOL_NAME), tb, "T") || !pkg || (pkg & 7) ||
	    (int)(unsigned char)word_at(pkg, 0) != s + 1 ||
	    !is_string(word_at(pkg, PACKAGE_NAME), tb, "COMMON-LISP"))
		return -1;
	types_from(s, tb - s - 5);
	return 0;
}

/*
 * Whether the layout was checked (calibrate): tried at the first 16
 * calls, then at every 1024th until it holds.  Objects made before count with
 * Debian's ECL 21.2.1 type numbers, the ones it most likely has.
 */
static int calibrated(void)
{
	static unsigned tries;
	unsigned k;

	if (__atomic_load_n(&calib, __ATOMIC_ACQUIRE))
		return 1;
	if (!symbols || !interp_lo || (!env_fn && !env_var))
		return 0;
	k = __atomic_fetch_add(&tries, 1, __ATOMIC_RELAXED);
	if (k >= 16 && k % 1024)
		return 0;
	if (calibrate() < 0) {
		lname_status("none: ECL's objects are not laid out as in ECL 21 (x86-64)");
		return 0;
	}
	lname_status("ihs");
	__atomic_store_n(&calib, 1, __ATOMIC_RELEASE);
	return 1;
}

/* ---- names ---- */

/* A live object's pointer: no tag, aligned. */
static int objp(uintptr_t p)
{
	return p && !(p & 7);
}

static inline uintptr_t at(uintptr_t p, int off)
{
	return *(const uintptr_t *)(p + (uintptr_t)off);
}

static inline int type_of(uintptr_t p)
{
	return *(const int8_t *)p;
}

struct buf {
	char s[LNAME_LEN];
	size_t n;
};

static void put(struct buf *b, char c)
{
	if (b->n < sizeof b->s)
		b->s[b->n++] = c;
}

static void puts_(struct buf *b, const char *s)
{
	while (*s)
		put(b, *s++);
}

/*
 * The characters of string object s, downcased when it has no lower-case
 * letter (the reader's default upcasing undone); 0, or -1 if s is no
 * string.  Characters beyond ASCII are '?'.
 */
static int put_string(struct buf *b, uintptr_t s)
{
	int t, lower = 0;
	uint64_t n;
	uintptr_t self;

	if (!objp(s))
		return -1;
	t = type_of(s);
	if (t != ty.base_string && !(ty.unicode && t == ty.base_string - 1))
		return -1;
	n = at(s, STRING_FILLP);
	self = at(s, STRING_SELF);
	if (n > LNAME_LEN)
		n = LNAME_LEN;
	if (!self && n)
		return -1;
	for (int pass = 0; pass < 2; pass++) {
		for (uint64_t i = 0; i < n; i++) {
			uint32_t c = t == ty.base_string ? ((const unsigned char *)self)[i]
							 : ((const uint32_t *)self)[i];
			if (c >= 0x80 || c < 0x20)
				c = '?';
			if (pass == 0) {
				lower |= c >= 'a' && c <= 'z';
				continue;
			}
			put(b, (char)(!lower && c >= 'A' && c <= 'Z' ? c + 32 : c));
		}
	}
	return 0;
}

/* Symbol sym, its package before it unless that is COMMON-LISP or
 * COMMON-LISP-USER: "pkg:name", "#:name" when uninterned. */
static int put_symbol(struct buf *b, uintptr_t sym)
{
	uintptr_t pkg, pname;
	size_t start = b->n;

	if (sym == ECL_NIL) {
		puts_(b, "nil");
		return 0;
	}
	if (!objp(sym) || type_of(sym) != ty.symbol)
		return -1;
	pkg = at(sym, SYMBOL_HPACK);
	if (pkg == ECL_NIL) {
		puts_(b, "#:");
	} else if (objp(pkg) && type_of(pkg) == ty.symbol + 1) {
		pname = at(pkg, PACKAGE_NAME);
		if (put_string(b, pname) < 0)
			return -1;
		if ((b->n - start == 11 && !memcmp(b->s + start, "common-lisp", 11)) ||
		    (b->n - start == 16 && !memcmp(b->s + start, "common-lisp-user", 16)))
			b->n = start;
		else
			put(b, ':');
	}
	return put_string(b, at(sym, SYMBOL_NAME));
}

/*
 * The display name of a function named `name`: a symbol, (setf x), NIL
 * for a lambda.  ECL names the code of a form it evaluates at top level
 * si:bytecodes: "(top-level)".
 */
static int put_name(struct buf *b, uintptr_t name)
{
	if (name == ECL_NIL) {
		puts_(b, "(lambda)");
		return 0;
	}
	if ((name & 3) == T_LIST) { /* a cons: (setf x) and the like */
		uintptr_t c = name - T_LIST, cdr;
		put(b, '(');
		if (put_symbol(b, at(c, 0)) < 0)
			return -1;
		cdr = at(c, 8);
		if ((cdr & 3) == T_LIST && cdr != ECL_NIL) {
			put(b, ' ');
			if (put_symbol(b, at(cdr - T_LIST, 0)) < 0)
				return -1;
		}
		put(b, ')');
		return 0;
	}
	if (put_symbol(b, name) < 0)
		return -1;
	if ((b->n == 12 && !memcmp(b->s, "si:bytecodes", 12)) ||
	    (b->n == 16 && !memcmp(b->s, "system:bytecodes", 16))) {
		b->n = 0;
		puts_(b, "(top-level)");
	}
	return 0;
}

static uint32_t intern_name(uintptr_t name)
{
	struct buf b;

	b.n = 0;
	if (put_name(&b, name) < 0) {
		b.n = 0;
		puts_(&b, "(unnamed)");
	}
	return lname_intern(b.s, b.n);
}

/* Per thread: bytecodes object -> name id, checked by the name object
 * (the collector may give a dead function's memory to another one). */
#define NCACHE 128
static __thread struct {
	uintptr_t code, name;
	uint32_t id;
} cache[NCACHE];

static uint32_t name_of_code(uintptr_t code)
{
	uintptr_t name = at(code, BYTECODES_NAME);
	unsigned k = (unsigned)(code >> 4) & (NCACHE - 1);
	uint32_t id;

	if (cache[k].code == code && cache[k].name == name)
		return cache[k].id;
	id = intern_name(name);
	if (id) {
		cache[k].code = code;
		cache[k].name = name;
		cache[k].id = id;
	}
	return id;
}

/* ---- the history ---- */

static __thread uintptr_t st_lo, st_hi; /* this thread's stack; hi 1: unknown */

/* The bytecodes of function object fn, or 0 for a compiled one. */
static uintptr_t code_of(uintptr_t fn)
{
	int t;

	if (!objp(fn))
		return 0;
	t = type_of(fn);
	if (t == ty.bclosure) {
		fn = at(fn, BCLOSURE_CODE);
		if (!objp(fn))
			return 0;
		t = type_of(fn);
	}
	return t == ty.bytecodes ? fn : 0;
}

int ihs_rewrite(uint64_t *frames, int depth)
{
	uintptr_t sp = (uintptr_t)__builtin_frame_address(0), f, env;
	uint64_t index = 0;
	int changed = 0;

	if (!calibrated())
		return 0;
	if (!st_hi && bounds_thread(sp, &st_lo, &st_hi) < 0)
		st_hi = 1;
	if (st_hi <= 1)
		return 0;
	env = env_fn ? (uintptr_t)env_fn() : env_var ? (uintptr_t)*env_var : 0;
	if (!objp(env))
		return 0;
	f = at(env, ihs_top_at);
	for (int k = 0; k < depth; k++) {
		uintptr_t code = 0;

		if (frames[k] - 1 - interp_lo >= interp_len)
			continue;
		/* The next bytecoded function of the history, from f out.
		 * Frames are on this stack, above this function's, each one
		 * further out than the last, indices falling by one to 0 (the
		 * history's root, not on the stack: never read). */
		while (!code) {
			uint64_t i;
			if ((f & 7) || f <= sp || f + IHS_SIZE > st_hi || f < st_lo)
				break;
			i = at(f, IHS_INDEX);
			if (i == 0 || (index && i != index - 1))
				break;
			index = i;
			code = code_of(at(f, IHS_FUNCTION));
			f = at(f, IHS_NEXT);
			if (i == 1)
				f = 0; /* the root is next */
		}
		if (!code) {
			lname_unmatched();
			break;
		}
		uint32_t id = name_of_code(code);
		if (id) {
			frames[k] = FORMAT_LISP_FRAME(id);
			changed = 1;
		}
	}
	return changed;
}

void ihs_defun(const void *cfun)
{
	uintptr_t fn = (uintptr_t)cfun, entry;
	Dl_info a, b;
	uint32_t id;
	int t;

	if (!calibrated() || !objp(fn))
		return;
	t = type_of(fn);
	if (t == ty.cfun)
		entry = at(fn, CFUN_ENTRY);
	else if (t == ty.cfunfixed)
		entry = at(fn, CFUNFIXED_ENTRY);
	else
		return;
	/* libecl's own compiled Lisp: stripped, its static functions have no
	 * symbols for the tools to match the entry with. */
	if (!entry || (dladdr((void *)entry, &a) && dladdr((void *)interp_lo, &b) &&
		       a.dli_fbase == b.dli_fbase))
		return;
	id = intern_name(at(fn, CFUN_NAME));
	lname_entry(entry, id);
}
