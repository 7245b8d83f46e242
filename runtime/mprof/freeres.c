/*
 * freeres.c - owns the release of libc's own buffers at exit (freeres.h).
 *
 * glibc never frees what it keeps for the process's life (stdio buffers:
 * _IO_file_doallocate tops many leak tables; locale and NSS data, dlerror
 * strings), and offers __libc_freeres to release them, for memory
 * checkers: valgrind calls it as the program ends.  The monitor's exit
 * save runs in its destructor, the last but libc's in a program that
 * preloads or links libmprof.so: after it, only libc's own exit work runs,
 * and __libc_freeres leaves stdio usable (its streams flushed and
 * unbuffered).  It is not run when another thread is alive (it could be
 * using what is freed) or when the monitor is linked into the executable
 * (other libraries' destructors run after the executable's).  libstdc++'s
 * counterpart, __gnu_cxx::__freeres (its exception emergency pool, 72 KiB
 * allocated before main), is called too when the program was loaded with
 * libstdc++, as valgrind does.
 */
#include "freeres.h"
#include "tasks.h"

#include <dlfcn.h>
#include <link.h>
#include <stdint.h>
#include <sys/auxv.h>
#include <unistd.h>

extern void __libc_freeres(void) __attribute__((weak));
/* __gnu_cxx::__freeres: bound at load time when libstdc++ is loaded with
 * the program (dlsym at exit would allocate, a dlerror string, when it
 * is not there). */
extern void _ZN9__gnu_cxx9__freeresEv(void) __attribute__((weak));

static int count_one(long tid, void *arg)
{
	(void)tid;
	++*(long *)arg;
	return 0;
}

/* 1 when this is the process's only thread, 0 if not, -1 if its
 * threads cannot be counted. */
static int only_thread(void)
{
	long threads = 0;

	if (tasks_each(count_one, &threads) < 0)
		return -1;
	return threads == 1;
}

/* Whether address self lies in the executable (libmprof.a linked in). */
static int in_executable(const void *self)
{
	const ElfW(Phdr) *ph = (const ElfW(Phdr) *)getauxval(AT_PHDR);
	size_t n = getauxval(AT_PHNUM);
	Dl_info di;

	if (!ph || !dladdr(self, &di))
		return 1; /* cannot tell: as if it were */
	for (size_t i = 0; i < n; i++)
		if (ph[i].p_type == PT_PHDR)
			return (uintptr_t)di.dli_fbase == (uintptr_t)ph - ph[i].p_vaddr;
	return 1;
}

const char *freeres_why_not(const void *self)
{
	if (!__libc_freeres)
		return "skipped: libc has no __libc_freeres";
	if (in_executable(self))
		return "skipped: the monitor is linked into the executable";
	switch (only_thread()) {
	case 0:
		return "skipped: another thread was alive";
	case -1:
		return "skipped: its threads cannot be counted (/proc/self/task cannot be read)";
	}
	return NULL;
}

int freeres_safe(const void *self)
{
	return !freeres_why_not(self);
}

void freeres_run(void)
{
	if (_ZN9__gnu_cxx9__freeresEv)
		_ZN9__gnu_cxx9__freeresEv();
	__libc_freeres();
}
