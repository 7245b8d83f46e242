/*
 * loader.c - owns the sampler's view of the dynamic loader (ld_*): dlopen
 * and dlclose are interposed so the unwinder's module snapshot, which the
 * signal handler reads instead of calling dl_iterate_phdr, follows what is
 * mapped (unwind.h: unwind_modules_refresh, unwind_dlclose_begin/end).
 *
 * Before a dlclose the loaded objects are remembered (modules.c), so the
 * data file still lists the library for the frames sampled in it.  After
 * it, the address range of each object it unmapped is held
 * (modules_hold_*), so that nothing mapped later overlaps it: the
 * snapshot's own mmap after dlclose moved a reload of the same library
 * half over its old place, and its frames went unnamed (tests/e2e/50).
 *
 * A library's constructors run inside dlopen, before the refresh: samples
 * taken in them stop at its first frame (flagged truncated).  Before the
 * unload, the thread's kernel-mode records are drained (walked while the
 * library is there); another thread's are drained at its next signal, and
 * those in the library stop at its frame.  The wrappers' own work is not
 * the program's (cp_own_begin): under -e syscalls:1 its unmaps had samples
 * of their own, main;dlclose;modules_remember;__munmap.
 */
#include <dlfcn.h>
#include <errno.h>

#include "kcpu.h"
#include "modules.h"
#include "state.h"
#include "unwind.h"

typedef void *open_fn(const char *, int);
typedef int close_fn(void *);

CP_VIS void *dlopen(const char *file, int mode)
{
	static open_fn *real;
	void *h;

	if (!real)
		real = (open_fn *)dlsym(RTLD_NEXT, "dlopen");
	if (!real)
		return NULL;
	h = real(file, mode);
	if (h && __atomic_load_n(&cp.on, __ATOMIC_ACQUIRE)) {
		struct cp_own o;

		cp_own_begin(&o, 1);
		unwind_modules_refresh();
		cp_own_end(&o);
	}
	return h;
}

CP_VIS int dlclose(void *handle)
{
	static close_fn *real;
	int rc;

	if (!real)
		real = (close_fn *)dlsym(RTLD_NEXT, "dlclose");
	if (!real)
		return -1;
	if (!__atomic_load_n(&cp.on, __ATOMIC_ACQUIRE))
		return real(handle);
	int hold;
	struct cp_own o;

	/* This thread's kernel-mode records (kcpu.h) walked now, while what
	 * they name is mapped (cp_own_begin drains them): drained at its
	 * next signal, after the unload, one in the library stopped at its
	 * frame (the plugin's last clock_gettime: 50-cp-cpu.t's plugin_burn
	 * had a sample that call_plugin had not, one run in four under
	 * load). */
	cp_own_begin(&o, 1);
	modules_remember(); /* its frames are symbolized after it is gone */
	hold = modules_hold_begin();
	unwind_dlclose_begin();
	cp_own_end(&o);
	rc = real(handle); /* the program's: the library's destructors, the unmaps */
	/* Its kernel-mode records (a destructor's) are drained at the next
	 * signal, with the snapshot refreshed: walked now, while the close
	 * is going on, a library it unloaded could be read. */
	cp_own_begin(&o, 0);
	modules_hold_end(hold); /* before the snapshot's mmap can land there */
	unwind_dlclose_end();
	cp_own_end(&o);
	return rc;
}
