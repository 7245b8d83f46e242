/*
 * perfmap.c - names of code a runtime made as it ran (a JIT: node's
 * --perf-basic-prof, the JVM with a perf map agent, LuaJIT, ...) from the
 * map it wrote, /tmp/perf-PID.map, one "START SIZE NAME" line a piece of
 * code (START and SIZE hex), as perf reads it.  The code lies in no
 * module: without the map its frames were bare addresses.
 *
 * Read only when it is the profiled process's: written during its run
 * (not older than INFO start_ns: a pid is used again) and owned by the
 * user reading it (or read by root).  A later line for the same address
 * wins (code moved or made again there).  Any line that does not parse is
 * passed over: the map is the runtime's, not ours.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "read/reader.h"
#include "symbols/symbols_int.h"

/* Lines kept at most (a JIT that made that much code: the rest is not). */
#define PERFMAP_MAX 4000000

static int cmp_ent(const void *a, const void *b)
{
	const struct perfmap_ent *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

void perfmap_load(struct symbols *s, const struct profile *p)
{
	const char *pid = reader_info(p, "pid"), *start = reader_info(p, "start_ns");
	char path[64], line[4096];
	struct stat st;
	FILE *f;
	size_t cap = 0;
	uint32_t no = 0;

	if (!pid || strspn(pid, "0123456789") != strlen(pid) || strlen(pid) > 10)
		return;
	snprintf(path, sizeof path, "/tmp/perf-%s.map", pid);
	if (!(f = fopen(path, "re")))
		return;
	if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode) ||
	    (st.st_uid != geteuid() && geteuid() != 0) ||
	    (start && (uint64_t)st.st_mtime * 1000000000ull + (uint64_t)st.st_mtim.tv_nsec <
			      strtoull(start, NULL, 10))) {
		fclose(f);
		return;
	}
	while (fgets(line, sizeof line, f) && s->npmap < PERFMAP_MAX) {
		char *e, *name;
		uint64_t a, n;
		size_t len = strlen(line);

		no++;
		if (len && line[len - 1] == '\n')
			line[--len] = 0;
		errno = 0;
		a = strtoull(line, &e, 16);
		if (e == line || *e != ' ' || errno)
			continue;
		n = strtoull(e + 1, &name, 16);
		if (name == e + 1 || *name != ' ' || errno || !n || a + n < a || !name[1])
			continue;
		if (symbols_grow(&s->pmap, &cap, s->npmap + 1, sizeof(*s->pmap)) < 0)
			break;
		s->pmap[s->npmap].start = a;
		s->pmap[s->npmap].size = n;
		s->pmap[s->npmap].line = no;
		if (!(s->pmap[s->npmap].name = symbols_intern(s, name + 1)))
			break;
		s->npmap++;
	}
	fclose(f);
	qsort(s->pmap, s->npmap, sizeof(*s->pmap), cmp_ent);
}

const struct perfmap_ent *perfmap_find(const struct symbols *s, uint64_t pc)
{
	size_t lo = 0, hi = s->npmap;
	const struct perfmap_ent *best = NULL;

	while (lo < hi) { /* the first entry starting above pc */
		size_t mid = lo + (hi - lo) / 2;

		if (s->pmap[mid].start <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Of the entries that hold pc (a few back at most), the latest line. */
	for (size_t i = lo, k = 0; i-- > 0 && k < 16; k++) {
		const struct perfmap_ent *e = &s->pmap[i];

		if (pc - e->start < e->size && (!best || e->line > best->line))
			best = e;
	}
	return best;
}
