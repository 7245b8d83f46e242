/*
 * noperf.c - preloaded, makes perf_event_open fail with EACCES, as on a
 * machine whose kernel.perf_event_paranoid forbids it (cpprof list and
 * record then report resources missing: tests/e2e/56-cp-noperf.t).
 * Build: cc -shared -fPIC -o noperf.so noperf.c -ldl
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <sys/syscall.h>

long syscall(long n, ...)
{
	static long (*real)(long, ...);
	long a[6];
	va_list ap;

	if (n == SYS_perf_event_open) {
		errno = EACCES;
		return -1;
	}
	va_start(ap, n);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (!real)
		real = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
	return real(n, a[0], a[1], a[2], a[3], a[4], a[5]);
}
