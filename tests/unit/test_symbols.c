/*
 * test_symbols.c - lib/symbols/symbols.c against this test's own process: the
 * profile is built by hand from dl_iterate_phdr (no reader), then functions,
 * return addresses, inline frames, libc, C++ names from libstdc++ (short,
 * full, mangled; a std::string member's type), unknown addresses, missing
 * and mismatched files, and the types-by-size index are checked.
 */
#include "read/reader.h"
#include "symbols/symbols.h"
#include "tap.h"

#include <dlfcn.h>
#include <elf.h>
#include <limits.h>
#include <link.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---- the code and types under test ----------------------------------- */

struct widget {
	char b[204];
};
typedef struct {
	int a, b, c;
} triple_t;

struct widget g_widget;
triple_t g_triple;
div_t g_div; /* a /usr/include typedef (8 bytes) that must not be listed */

static volatile uint64_t captured_ra;
static volatile int call_line, inline_call_line;

__attribute__((noinline)) static void capture(void)
{
	captured_ra = (uint64_t)__builtin_return_address(0);
	__asm__ volatile("" ::: "memory");
}

/* One line, so that whichever line-table row the entry pc gets (the brace,
 * the first statement) is this line. */
static const int target_line = __LINE__ + 1;
__attribute__((noinline)) int target_fn(int x) { return x * 3 + 1; }

__attribute__((noinline)) void caller_fn(void)
{
	capture(); call_line = __LINE__;
	__asm__ volatile("" ::: "memory");
}

static inline __attribute__((always_inline)) void inl_fn(void)
{
	capture(); inline_call_line = __LINE__;
	__asm__ volatile("" ::: "memory");
}

static volatile int outer_line;
__attribute__((noinline)) void outer_fn(void)
{
	inl_fn(); outer_line = __LINE__;
	__asm__ volatile("" ::: "memory");
}

/* ---- a profile of this process --------------------------------------- */

static struct prof_module mods[64];
static size_t nmods;

static void note_build_id(struct prof_module *m, const struct dl_phdr_info *info,
			  const ElfW(Phdr) *ph)
{
	const unsigned char *p = (const unsigned char *)(info->dlpi_addr + ph->p_vaddr);
	const unsigned char *end = p + ph->p_memsz;

	while (p + sizeof(ElfW(Nhdr)) <= end) {
		const ElfW(Nhdr) *n = (const void *)p;
		const unsigned char *name = p + sizeof(*n);
		const unsigned char *desc = name + ((n->n_namesz + 3) & ~3u);
		if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 && !memcmp(name, "GNU", 4)) {
			m->build_id = malloc(n->n_descsz);
			memcpy(m->build_id, desc, n->n_descsz);
			m->build_id_len = n->n_descsz;
			return;
		}
		p = desc + ((n->n_descsz + 3) & ~3u);
	}
}

static int add_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct prof_module *m;
	char exe[PATH_MAX];
	uint64_t lo = UINT64_MAX, hi = 0;
	ssize_t n;

	if (nmods == sizeof(mods) / sizeof(mods[0]))
		return 1;
	m = &mods[nmods];
	if (nmods == 0) {
		n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		exe[n > 0 ? n : 0] = 0;
		m->path = strdup(exe);
	} else {
		m->path = strdup(info->dlpi_name);
	}
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_LOAD) {
			if (info->dlpi_addr + ph->p_vaddr < lo) {
				lo = info->dlpi_addr + ph->p_vaddr;
				m->offset = ph->p_offset;
			}
			if (info->dlpi_addr + ph->p_vaddr + ph->p_memsz > hi)
				hi = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
		} else if (ph->p_type == PT_NOTE && !m->build_id) {
			note_build_id(m, info, ph);
		}
	}
	m->start = lo;
	m->end = hi;
	m->bias = info->dlpi_addr;
	nmods++;
	return 0;
}

/* ---- helpers ---------------------------------------------------------- */

static const char *base(const char *p)
{
	const char *b = p ? strrchr(p, '/') : NULL;
	return b ? b + 1 : p;
}

static int contains(const char *const *names, size_t n, const char *want)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(names[i], want) == 0)
			return 1;
	return 0;
}

/* Run fn with stderr captured into buf. */
static void with_stderr(char *buf, size_t len, void (*fn)(void *), void *arg)
{
	char tmpl[] = "/tmp/test_symbols.XXXXXX";
	int fd = mkstemp(tmpl), saved = dup(2);
	ssize_t n;

	fflush(stderr);
	dup2(fd, 2);
	fn(arg);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	n = pread(fd, buf, len - 1, 0);
	buf[n > 0 ? n : 0] = 0;
	close(fd);
	unlink(tmpl);
}

struct resolve_args {
	struct symbols *s;
	uint64_t addr;
	struct sym_frame *f;
	int n;
};

static void do_resolve(void *arg)
{
	struct resolve_args *a = arg;
	a->n = symbols_resolve(a->s, a->addr, 0, a->f, 4);
}

struct open_args {
	struct profile *p;
	const char *override;
	struct symbols *s;
};

static void do_open(void *arg)
{
	struct open_args *a = arg;
	a->s = symbols_open(a->p, a->override);
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---- tests ------------------------------------------------------------ */

static void test_functions(struct symbols *s)
{
	struct sym_frame f[16];
	int n;

	n = symbols_resolve(s, (uint64_t)(uintptr_t)&target_fn, 0, f, 16);
	is_int(n, 1, "function entry: one frame");
	is_str(f[0].func, "target_fn", "function entry: name");
	is_str(base(f[0].file), "test_symbols.c", "function entry: file");
	is_int(f[0].line, target_line, "function entry: line");
	is_int(f[0].offset, 0, "function entry: offset 0");
	ok(f[0].func_addr == (uint64_t)(uintptr_t)&target_fn, "function entry: func_addr");
	ok(!f[0].inlined, "function entry: not inlined");

	caller_fn();
	n = symbols_resolve(s, captured_ra, 1, f, 16);
	is_int(n, 1, "return address: one frame");
	is_str(f[0].func, "caller_fn", "return address: caller");
	is_str(base(f[0].file), "test_symbols.c", "return address: file");
	is_int(f[0].line, call_line, "return address: line of the call");
	ok(f[0].func_addr == (uint64_t)(uintptr_t)&caller_fn, "return address: func_addr");
	ok(f[0].offset == captured_ra - (uint64_t)(uintptr_t)&caller_fn, "return address: offset");

	/* Cached: the same answer again. */
	n = symbols_resolve(s, captured_ra, 1, f, 16);
	ok(n == 1 && strcmp(f[0].func, "caller_fn") == 0, "return address: cached");

	outer_fn();
	n = symbols_resolve(s, captured_ra, 1, f, 16);
	is_int(n, 2, "inline: two frames");
	is_str(f[0].func, "inl_fn", "inline: innermost is the inlined function");
	is_int(f[0].inlined, 1, "inline: first frame inlined");
	is_int(f[0].line, inline_call_line, "inline: line inside the inlined function");
	is_str(base(f[0].file), "test_symbols.c", "inline: file");
	is_str(f[1].func, "outer_fn", "inline: then the real function");
	is_int(f[1].inlined, 0, "inline: real function not inlined");
	is_int(f[1].line, outer_line, "inline: call site line");
	ok(f[0].func_addr == (uint64_t)(uintptr_t)&outer_fn && f[1].func_addr == f[0].func_addr,
	   "inline: func_addr is the real function's");
	n = symbols_resolve(s, captured_ra, 1, f, 1);
	ok(n == 1 && strcmp(f[0].func, "inl_fn") == 0, "inline: max = 1 gives the innermost");
	is_int(symbols_resolve(s, captured_ra, 1, f, 0), 0, "max = 0 gives nothing");

	void *q = dlsym(RTLD_DEFAULT, "qsort");
	n = symbols_resolve(s, (uint64_t)(uintptr_t)q + 4, 0, f, 16);
	ok(n >= 1 && (strstr(f[0].func, "qsort") || strstr(f[0].func, "msort")),
	   "libc: qsort+4 resolves to %s", f[0].func);
	ok(f[n - 1].func_addr == (uint64_t)(uintptr_t)q && f[n - 1].offset == 4,
	   "libc: entry and offset");

	n = symbols_resolve(s, 0x10, 0, f, 16);
	ok(n == 1 && strcmp(f[0].func, "0x10") == 0, "outside every module: %s", f[0].func);
	ok(f[0].file == NULL && f[0].line == 0 && f[0].func_addr == 0, "outside: no file");
	n = symbols_resolve(s, 0x11, 1, f, 16);
	is_str(f[0].func, "0x11", "outside, return address: the recorded address");
}

/* C++ names, from libstdc++ (loaded before the profile is made): short by
 * default, in full after symbols_full_names, the mangled symbol as the
 * system name, and a std::string member naming its characters' type. */
static void test_cxx(struct symbols *s, void *libstdcxx)
{
	void *nw = libstdcxx ? dlsym(libstdcxx, "_Znwm") : NULL;
	void *mc = libstdcxx ? dlsym(libstdcxx, "_ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE9_M_createERmm")
			     : NULL;
	struct sym_frame f[4];

	if (!nw || !mc) {
		/* A missing input fails (issue 22, item 9): g++ brings it. */
		for (int i = 0; i < 9; i++)
			ok(0, "missing: libstdc++.so.6 with operator new and std::string::_M_create "
			      "(libstdc++6: scripts/install-deps.sh installs g++)");
		return;
	}
	symbols_resolve(s, (uint64_t)(uintptr_t)nw, 0, f, 4);
	is_str(f[0].func, "operator new", "C++: operator new(unsigned long) is printed short");
	is_str(f[0].full, "operator new(unsigned long)", "C++: its full name beside");
	is_str(f[0].sysname, "_Znwm", "C++: and its system name, mangled");
	ok(!f[0].atype, "C++: operator new names no type");
	symbols_resolve(s, (uint64_t)(uintptr_t)mc, 0, f, 4);
	is_str(f[0].func, "std::string::_M_create", "C++: std::__cxx11::basic_string<char, ...>::_M_create is std::string::_M_create");
	is_str(f[0].atype, "char", "C++: a std::string member allocates chars");
	is_int(f[0].asize, 1, "C++: of 1 byte");
	symbols_full_names(s, 1);
	symbols_resolve(s, (uint64_t)(uintptr_t)nw, 0, f, 4);
	is_str(f[0].func, "operator new(unsigned long)", "C++: full names after symbols_full_names");
	symbols_full_names(s, 0);
	symbols_resolve(s, (uint64_t)(uintptr_t)nw, 0, f, 4);
	is_str(f[0].func, "operator new", "C++: and short again");
}

static void test_types(struct symbols *s)
{
	const char *const *names;
	size_t n;

	n = symbols_types_of_size(s, 204, &names);
	ok(contains(names, n, "widget"), "types: 204 has widget (%zu names)", n);
	n = symbols_types_of_size(s, 12, &names);
	ok(contains(names, n, "triple_t"), "types: 12 has triple_t (anonymous struct typedef)");
	n = symbols_types_of_size(s, 8, &names);
	ok(!contains(names, n, "div_t"), "types: no /usr/include type at 8");
	for (size_t i = 1; i < n; i++)
		if (strcmp(names[i - 1], names[i]) >= 0)
			ok(0, "types: sorted and unique at 8");
	n = symbols_types_of_size(s, 204, &names);
	ok(n >= 1 && contains(names, n, "widget"), "types: second call, same answer");
	n = symbols_types_of_size(s, 987654321, &names);
	is_int(n, 0, "types: no type of an unused size");
}

static void test_missing_module(struct profile *p)
{
	struct prof_module save = p->modules[p->nmodules];
	struct open_args a = { p, NULL, NULL };
	struct sym_frame f[4];
	char err[4096];
	int n;

	/* A module whose file is gone, at an address nothing else uses. */
	p->modules[p->nmodules] = (struct prof_module){
		.start = 0x100000, .end = 0x200000, .bias = 0x100000,
		.path = "/nonexistent/dir/libfoo.so",
	};
	p->nmodules++;
	with_stderr(err, sizeof(err), do_open, &a);
	p->nmodules--;
	p->modules[p->nmodules] = save;
	ok(a.s != NULL, "missing module: opens");
	is_str(err, "", "missing module: no warning while no address lies in it");
	{
		struct resolve_args ra = { a.s, 0x101234, f, 0 };
		with_stderr(err, sizeof(err), do_resolve, &ra);
		n = ra.n;
	}
	ok(strstr(err, "mprof: warning: cannot open /nonexistent/dir/libfoo.so: No such file or "
		       "directory; its addresses print as module+offset"),
	   "missing module: warning at its first address");
	ok(n == 1 && strcmp(f[0].func, "libfoo.so+0x1234") == 0, "missing module: %s", f[0].func);
	n = symbols_resolve(a.s, (uint64_t)(uintptr_t)&target_fn, 0, f, 4);
	is_str(f[0].func, "target_fn", "missing module: the others still resolve");
	symbols_free(a.s);
}

static void test_override(struct profile *p)
{
	struct open_args a = { p, "/bin/true", NULL };
	struct sym_frame f[4];
	char err[4096], want[PATH_MAX + 200];
	int n;

	with_stderr(err, sizeof(err), do_open, &a);
	ok(a.s != NULL, "override: opens");
	snprintf(want, sizeof(want),
		 "mprof: warning: /bin/true does not match the profiled executable %s "
		 "(build-id differs); symbols may be wrong\n",
		 p->modules[0].path);
	is_str(err, want, "override: one build-id warning");
	n = symbols_resolve(a.s, (uint64_t)(uintptr_t)&target_fn, 0, f, 4);
	ok(n >= 1 && f[0].func != NULL, "override: resolves without crashing (%s)", f[0].func);
	symbols_free(a.s);

	/* The same file as override: no warning. */
	a.override = p->modules[0].path;
	with_stderr(err, sizeof(err), do_open, &a);
	is_str(err, "", "override with the same binary: no warning");
	n = symbols_resolve(a.s, (uint64_t)(uintptr_t)&target_fn, 0, f, 4);
	is_str(f[0].func, "target_fn", "override with the same binary: resolves");
	symbols_free(a.s);
}

/* 100k distinct addresses spread over libc's text and this binary. */
static void bench(struct profile *p)
{
	struct symbols *s = symbols_open(p, NULL);
	struct sym_frame f[16];
	const struct prof_module *libc = NULL;
	uint64_t total = 0;
	double t0, t1;

	for (size_t i = 0; i < p->nmodules; i++)
		if (strstr(p->modules[i].path, "libc.so"))
			libc = &p->modules[i];
	if (!libc) {
		ok(0, "bench: libc found");
		return;
	}
	t0 = now();
	for (int i = 0; i < 100000; i++) {
		const struct prof_module *m = i % 2 ? libc : &p->modules[0];
		uint64_t span = m->end - m->start;
		uint64_t a = m->start + (uint64_t)i / 2 * 7919 % span;
		total += (uint64_t)symbols_resolve(s, a, i % 3 == 0, f, 16);
	}
	t1 = now();
	ok(total >= 100000, "bench: every address resolved");
	printf("# resolved 100000 distinct addresses in %.3f s (%.2f us each)\n", t1 - t0,
	       (t1 - t0) * 1e6 / 100000);
	t0 = now();
	for (int i = 0; i < 100000; i++) {
		const struct prof_module *m = i % 2 ? libc : &p->modules[0];
		uint64_t span = m->end - m->start;
		uint64_t a = m->start + (uint64_t)i / 2 * 7919 % span;
		total += (uint64_t)symbols_resolve(s, a, i % 3 == 0, f, 16);
	}
	t1 = now();
	printf("# again from the cache in %.3f s\n", t1 - t0);
	symbols_free(s);
}

int main(void)
{
	struct profile p = { 0 };
	struct symbols *s;
	void *libstdcxx = dlopen("libstdc++.so.6", RTLD_NOW);

	g_div = div(7, 2);
	g_widget.b[0] = (char)g_div.quot;
	g_triple.a = target_fn(1);

	dl_iterate_phdr(add_object, NULL);
	p.modules = mods;
	p.nmodules = nmods;
	ok(nmods >= 2 && nmods < sizeof(mods) / sizeof(mods[0]), "profile of self: %zu modules",
	   nmods);

	s = symbols_open(&p, NULL);
	ok(s != NULL, "symbols_open");
	test_functions(s);
	test_cxx(s, libstdcxx);
	test_types(s);
	symbols_free(s);
	test_missing_module(&p);
	test_override(&p);
	if (getenv("SYMBOLS_BENCH"))
		bench(&p);
	return tap_done();
}
