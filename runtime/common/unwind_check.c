/*
 * unwind_check.c - check mode (part of unwind_*, unwind_int.h), a test and
 * debug facility: with MPROF_UNWIND_CHECK=1 every capture also runs the
 * reference unwinder, and every shortcut (a reused walk, a remembered one,
 * a stack looked up by its shared frames, the incremental hash) is
 * verified against the full walk; each difference is one line on stderr,
 * and a summary is written at exit.  Only system calls: it runs inside the
 * allocator.
 */
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "unwind.h"
#include "unwind_int.h"

/* MPROF_UNWIND_CHECK=1, read once environ exists; =2 also spoils the fast
 * path's first stack, so a test can see that the check does catch a
 * difference. */
int uw_check = -1;
uint64_t uw_n_checked, uw_n_fast, uw_n_memo, uw_n_part;
static uint64_t uw_n_mismatch, uw_n_shared;
/* A hit's value and frame hash, verified by a full walk. */
__thread uint64_t uw_hit_value, uw_hit_fhash;
/* A recall's hit, verified by the capture that follows. */
__thread uint64_t uw_recall_value, uw_recall_fhash;
/* The reference unwinder's stack (per thread, mapped at its first check). */
static __thread uint64_t *uw_ref;

static void put(char **o, const char *s)
{
	while (*s)
		*(*o)++ = *s++;
}

static void put_num(char **o, uint64_t v, int hex)
{
	char b[24];
	int i = 0;

	if (hex)
		put(o, "0x");
	do {
		b[i++] = "0123456789abcdef"[v % (hex ? 16 : 10)];
		v /= hex ? 16 : 10;
	} while (v);
	while (i)
		*(*o)++ = b[--i];
}

static void say(const char *s, size_t n)
{
	while (n) {
		ssize_t k = write(2, s, n);
		if (k <= 0)
			return;
		s += k;
		n -= (size_t)k;
	}
}

void uw_mismatch(const char *msg, size_t n)
{
	__atomic_fetch_add(&uw_n_mismatch, 1, __ATOMIC_RELAXED);
	say(msg, n);
}

#define CHECK_MAX 1024

/* The reference walk, into uw_ref (the thread's, mapped once). */
int uw_check_walk(uint64_t *f, int max, int nf, uint32_t *ff, uint64_t ret)
{
	uint32_t fs;
	int ns, d;
	char line[160], *o = line;

	if (!uw_ref) {
		void *m = mmap(NULL, CHECK_MAX * sizeof(uint64_t), PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m == MAP_FAILED)
			return nf;
		uw_ref = m; /* per thread, kept: check mode only */
	}
	if (max > CHECK_MAX)
		return nf;
	ns = unwind_capture_slow(uw_ref, max, ret, &fs);
	__atomic_fetch_add(&uw_n_checked, 1, __ATOMIC_RELAXED);
	for (d = 0; d < nf && d < ns && f[d] == uw_ref[d]; d++)
		;
	if (d == nf && d == ns && *ff == fs)
		return nf;
	__atomic_fetch_add(&uw_n_mismatch, 1, __ATOMIC_RELAXED);
	put(&o, "mprof: unwind mismatch at depth ");
	put_num(&o, (uint64_t)d, 0);
	put(&o, ": fast ");
	put_num(&o, d < nf ? f[d] : 0, 1);
	put(&o, " slow ");
	put_num(&o, d < ns ? uw_ref[d] : 0, 1);
	put(&o, " (depths ");
	put_num(&o, (uint64_t)nf, 0);
	put(&o, "/");
	put_num(&o, (uint64_t)ns, 0);
	put(&o, ", flags ");
	put_num(&o, *ff, 0);
	put(&o, "/");
	put_num(&o, fs, 0);
	put(&o, ")\n");
	say(line, (size_t)(o - line));
	memcpy(f, uw_ref, (size_t)ns * sizeof(*f));
	*ff = fs;
	return ns;
}

__attribute__((destructor)) static void check_report(void)
{
	char line[160], *o = line;

	if (uw_check < 1)
		return;
	put(&o, "mprof: unwind check: ");
	put_num(&o, __atomic_load_n(&uw_n_checked, __ATOMIC_RELAXED), 0);
	put(&o, " stacks compared, ");
	put_num(&o, __atomic_load_n(&uw_n_fast, __ATOMIC_RELAXED), 0);
	put(&o, " by the fast path, ");
	put_num(&o, __atomic_load_n(&uw_n_memo, __ATOMIC_RELAXED), 0);
	put(&o, " remembered, ");
	put_num(&o, __atomic_load_n(&uw_n_part, __ATOMIC_RELAXED), 0);
	put(&o, " partly reused, ");
	put_num(&o, __atomic_load_n(&uw_n_shared, __ATOMIC_RELAXED), 0);
	put(&o, " looked up by shared frames, ");
	put_num(&o, __atomic_load_n(&uw_n_mismatch, __ATOMIC_RELAXED), 0);
	put(&o, " mismatches\n");
	say(line, (size_t)(o - line));
}

int unwind_checking(void)
{
	return uw_check > 0;
}

void unwind_check_shared(int same)
{
	static const char m[] = "mprof: unwind mismatch: a stack looked up by its shared frames differs\n";

	__atomic_fetch_add(&uw_n_shared, 1, __ATOMIC_RELAXED);
	if (!same)
		uw_mismatch(m, sizeof m - 1);
}
