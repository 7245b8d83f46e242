/* rt_aligned.c - every aligned allocator, then free: mprof.1 BUGS says the
 * original crashed freeing valloc/memalign memory.  No stdio (its buffer
 * would be one more allocation); a failed check is the exit status. */
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int bad;

static void check(void *p, size_t align, size_t n)
{
	if (!p || (uintptr_t)p % align || malloc_usable_size(p) < n)
		bad = 1;
	else
		memset(p, 0xa5, n);
}

int main(void)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	void *a = memalign(64, 100);
	void *b = valloc(200);
	void *c = pvalloc(300);
	void *d = aligned_alloc(128, 256);
	void *e = NULL;
	int rc = posix_memalign(&e, 32, 40);

	check(a, 64, 100);
	check(b, page, 200);
	check(c, page, 300);
	check(d, 128, 256);
	check(rc ? NULL : e, 32, 40);
	/* Bad alignment: refused, nothing recorded. */
	void *f = (void *)1;
	if (posix_memalign(&f, 3, 10) != 22 || f != (void *)1)
		bad = 1;
	free(a);
	free(b);
	free(c);
	free(d);
	free(e);
	return bad;
}
