/*
 * synth.c - write a large synthetic mprof data file, to time the display.
 *
 * Usage: synth OUT NSTACKS ELF [ELF...]
 *
 * The file has NSTACKS distinct stacks of depth 5..30 whose frames are
 * return addresses inside real functions of the given ELF files (their
 * .symtab, else .dynsym), with a MODULES section naming each file with its
 * real address range, file offset and build-id, so the display symbolizes
 * them as it would a profile of a program using those modules.  The first
 * ELF plays the main executable: bias 0 if it is ET_EXEC, 0x555555554000 if
 * it is PIE; the others are placed like shared libraries.
 *
 * Stacks are walks down a fixed random call graph (each function calls
 * 2..8 others, each from one call site, so a caller's return address is the
 * same in every stack through that edge, as in a real program; edges form
 * cycles, as an interpreter's do), from one of four roots, and end in one
 * of the functions designated as allocators (1 in 10).  Walks that repeat
 * an earlier stack are drawn again.  Counters and bins are consistent: each
 * stack allocates objects of one size, some keep a few.
 *
 * Built by bench/run against lib/format/format.c, the project's one encoder.
 * Deterministic: the same arguments give the same file.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "format.h"

#define MIN_DEPTH 5
#define MAX_DEPTH 30

struct func {
	uint64_t addr, size; /* runtime address (bias applied) */
	int nedges;
	uint32_t edge[8];      /* callee function indices */
	uint64_t site[8];      /* return address inside this function, per edge */
	uint64_t alloc_site;   /* where this function calls malloc */
};

struct module {
	const char *path;
	uint64_t start, end, bias, offset;
	unsigned char bid[64];
	size_t bid_len;
};

static struct func *funcs;
static size_t nfuncs, capfuncs;
static struct module mods[16];
static int nmods;

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

/* splitmix64: small, fast, deterministic. */
static uint64_t rnd(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void die(const char *what)
{
	fprintf(stderr, "synth: %s\n", what);
	exit(1);
}

static int cmp_func(const void *a, const void *b)
{
	const struct func *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static void add_func(uint64_t addr, uint64_t size)
{
	if (nfuncs == capfuncs) {
		capfuncs = capfuncs ? 2 * capfuncs : 4096;
		funcs = realloc(funcs, capfuncs * sizeof *funcs);
		if (!funcs)
			die("out of memory");
	}
	memset(&funcs[nfuncs], 0, sizeof *funcs);
	funcs[nfuncs].addr = addr;
	funcs[nfuncs].size = size;
	nfuncs++;
}

/* Read one ELF: its load range, build-id and functions. */
static void load_elf(const char *path, int index)
{
	struct module *m = &mods[nmods++];
	GElf_Ehdr eh;
	Elf_Scn *scn = NULL, *symscn = NULL;
	size_t i, n, first = nfuncs;
	int fd, have_load = 0, have_symtab = 0;
	Elf *e;

	if (nmods > 16)
		die("too many ELF files");
	fd = open(path, O_RDONLY);
	if (fd < 0 || !(e = elf_begin(fd, ELF_C_READ, NULL)) || !gelf_getehdr(e, &eh)) {
		fprintf(stderr, "synth: %s: not a readable ELF file\n", path);
		exit(1);
	}
	m->path = path;
	if (eh.e_type == ET_EXEC)
		m->bias = 0;
	else if (index == 0)
		m->bias = 0x555555554000ull;
	else
		m->bias = 0x7f0000000000ull + (uint64_t)index * 0x10000000ull;
	m->start = UINT64_MAX;
	if (elf_getphdrnum(e, &n) < 0)
		die("no program headers");
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (!have_load)
			m->offset = ph.p_offset;
		have_load = 1;
		if (ph.p_vaddr + m->bias < m->start)
			m->start = ph.p_vaddr + m->bias;
		if (ph.p_vaddr + ph.p_memsz + m->bias > m->end)
			m->end = ph.p_vaddr + ph.p_memsz + m->bias;
	}
	if (!have_load)
		die("no PT_LOAD segment");
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_SYMTAB) {
			symscn = scn;
			have_symtab = 1;
		} else if (sh.sh_type == SHT_DYNSYM && !have_symtab) {
			symscn = scn;
		} else if (sh.sh_type == SHT_NOTE && !m->bid_len) {
			Elf_Data *d = elf_getdata(scn, NULL);
			GElf_Nhdr nh;
			size_t off = 0, noff, doff;
			while (d && (off = gelf_getnote(d, off, &nh, &noff, &doff)) > 0) {
				if (nh.n_type == NT_GNU_BUILD_ID && nh.n_descsz <= sizeof m->bid) {
					memcpy(m->bid, (char *)d->d_buf + doff, nh.n_descsz);
					m->bid_len = nh.n_descsz;
				}
			}
		}
	}
	if (symscn) {
		GElf_Shdr sh;
		Elf_Data *d = elf_getdata(symscn, NULL);
		gelf_getshdr(symscn, &sh);
		for (i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;
			if (!gelf_getsym(d, (int)i, &s) || GELF_ST_TYPE(s.st_info) != STT_FUNC ||
			    s.st_shndx == SHN_UNDEF || s.st_size < 16)
				continue;
			add_func(s.st_value + m->bias, s.st_size);
		}
	}
	elf_end(e);
	close(fd);
	/* Aliases (same address) would make indistinguishable nodes. */
	qsort(funcs + first, nfuncs - first, sizeof *funcs, cmp_func);
	n = first;
	for (i = first; i < nfuncs; i++)
		if (n == first || funcs[i].addr != funcs[n - 1].addr)
			funcs[n++] = funcs[i];
	nfuncs = n;
	fprintf(stderr, "synth: %s: %zu functions, bias 0x%llx\n", path, nfuncs - first,
		(unsigned long long)m->bias);
}

/* A return address inside f, past its first instruction. */
static uint64_t site_in(const struct func *f)
{
	return f->addr + 5 + rnd() % (f->size - 5);
}

static void make_graph(void)
{
	size_t i;
	int k;

	for (i = 0; i < nfuncs; i++) {
		struct func *f = &funcs[i];
		f->nedges = 2 + (int)(rnd() % 7);
		for (k = 0; k < f->nedges; k++) {
			f->edge[k] = (uint32_t)(rnd() % nfuncs);
			f->site[k] = site_in(f);
		}
		/* Every function calls at least one allocator (index % 10 == 0). */
		f->edge[0] -= f->edge[0] % 10;
		f->alloc_site = site_in(f);
	}
}

/* Open-addressing set of stack hashes (0 is the empty slot). */
static uint64_t *seen;
static size_t seen_mask;

static int seen_add(uint64_t h)
{
	size_t i;

	h |= 1;
	for (i = h & seen_mask; seen[i]; i = (i + 1) & seen_mask)
		if (seen[i] == h)
			return 0;
	seen[i] = h;
	return 1;
}

/* A walk of depth frames, innermost first, ending in an allocator. */
static uint32_t walk(uint64_t *frames)
{
	uint32_t depth = MIN_DEPTH + (uint32_t)(rnd() % (MAX_DEPTH - MIN_DEPTH + 1));
	uint32_t cur = (uint32_t)(rnd() % 4) * (uint32_t)(nfuncs / 4), d;
	uint64_t path[MAX_DEPTH];

	for (d = 0; d + 1 < depth; d++) {
		const struct func *f = &funcs[cur];
		int k = d + 2 == depth ? 0 : (int)(rnd() % (uint64_t)f->nedges);
		path[d] = f->site[k];
		cur = f->edge[k];
	}
	path[d] = funcs[cur].alloc_site;
	for (d = 0; d < depth; d++)
		frames[d] = path[depth - 1 - d];
	return depth;
}

static uint64_t hash_frames(const uint64_t *f, uint32_t n)
{
	uint64_t h = 0xcbf29ce484222325ull ^ n;
	uint32_t i;

	for (i = 0; i < n; i++) {
		h ^= f[i];
		h *= 0x100000001b3ull;
		h ^= h >> 29;
	}
	return h;
}

static uint64_t bins[FORMAT_NBINS][4];

int main(int argc, char **argv)
{
	static unsigned char buf[1 << 20];
	struct format_writer w;
	uint64_t nstacks, s, frames[MAX_DEPTH], tot[4] = { 0 }, draws = 0;
	char tmp[4096], num[8][32];
	int fd, i, c;

	if (argc < 4) {
		fprintf(stderr, "usage: synth OUT NSTACKS ELF [ELF...]\n");
		return 2;
	}
	nstacks = strtoull(argv[2], NULL, 10);
	if (nstacks == 0 || nstacks > (1ull << 28))
		die("NSTACKS out of range");
	if (elf_version(EV_CURRENT) == EV_NONE)
		die("libelf too old");
	for (i = 3; i < argc; i++)
		load_elf(argv[i], i - 3);
	if (nfuncs < 40)
		die("too few functions in the ELF files");
	make_graph();
	for (seen_mask = 1; seen_mask < 2 * nstacks; seen_mask <<= 1)
		;
	seen = calloc(seen_mask, sizeof *seen);
	seen_mask--;
	if (!seen)
		die("out of memory");

	snprintf(tmp, sizeof tmp, "%s.tmp", argv[1]);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0666);
	if (fd < 0)
		die("cannot create the output file");
	format_writer_init(&w, fd, buf, sizeof buf, FORMAT_KIND_MPROF);

	format_begin_section(&w, FORMAT_SEC_MODULES);
	format_put_u32(&w, (uint32_t)nmods);
	for (i = 0; i < nmods; i++) {
		format_put_u64(&w, mods[i].start);
		format_put_u64(&w, mods[i].end);
		format_put_u64(&w, mods[i].bias);
		format_put_u64(&w, mods[i].offset);
		format_put_str(&w, mods[i].path);
		format_put_blob(&w, mods[i].bid, (uint32_t)mods[i].bid_len);
	}
	format_end_section(&w);

	format_begin_section(&w, FORMAT_SEC_COUNTERS);
	format_put_u32(&w, MPROF_NCOUNTERS);
	for (c = 0; c < MPROF_NCOUNTERS; c++) {
		format_put_str(&w, format_mprof_counter_names[c]);
		format_put_str(&w, format_mprof_counter_units[c]);
	}
	format_end_section(&w);

	format_begin_section(&w, FORMAT_SEC_STACKS);
	format_put_u64(&w, nstacks);
	for (s = 0; s < nstacks; s++) {
		uint32_t depth;
		uint64_t cnt[MPROF_NCOUNTERS] = { 0 };
		do {
			depth = walk(frames);
			draws++;
		} while (!seen_add(hash_frames(frames, depth)));
		/* Mostly small objects, a tail of large ones. */
		uint64_t r = rnd();
		uint64_t size = r % 16 ? 8 + (r >> 8) % 249 : 257 + (r >> 8) % 8000;
		uint64_t allocs = 1 + (r >> 24) % 200;
		uint64_t frees = (r >> 40) % 10 ? allocs : allocs / 2;
		int sc = format_size_class(size);
		uint32_t bin = format_bin_index(size);
		cnt[MPROF_C_ALLOCS + sc] = allocs;
		cnt[MPROF_C_BYTES + sc] = allocs * size;
		cnt[MPROF_C_FREES + sc] = frees;
		cnt[MPROF_C_FREED + sc] = frees * size;
		bins[bin][0] += allocs;
		bins[bin][1] += frees;
		bins[bin][2] += allocs * size;
		bins[bin][3] += frees * size;
		tot[0] += allocs;
		tot[1] += frees;
		tot[2] += allocs * size;
		tot[3] += frees * size;
		/* Flat: stacks drawn at random share little with the one before. */
		format_put_stack(&w, depth, 0, 0, 0, frames, cnt, MPROF_NCOUNTERS);
	}
	format_end_section(&w);

	uint32_t nb = 0, b;
	for (b = 0; b < FORMAT_NBINS; b++)
		nb += bins[b][0] != 0;
	format_begin_section(&w, FORMAT_SEC_BINS);
	format_put_u32(&w, nb);
	for (b = 0; b < FORMAT_NBINS; b++) {
		if (!bins[b][0])
			continue;
		format_put_u32(&w, b);
		for (c = 0; c < 4; c++)
			format_put_u64(&w, bins[b][c]);
	}
	format_end_section(&w);

	/* INFO last: the totals are known only now; readers take any order. */
	snprintf(num[0], sizeof num[0], "%llu", (unsigned long long)tot[0]);
	snprintf(num[1], sizeof num[1], "%llu", (unsigned long long)tot[1]);
	snprintf(num[2], sizeof num[2], "%llu", (unsigned long long)tot[2]);
	snprintf(num[3], sizeof num[3], "%llu", (unsigned long long)tot[3]);
	snprintf(num[4], sizeof num[4], "%llu", (unsigned long long)time(NULL) * 1000000000ull);
	const char *kv[][2] = {
		{ "cmdline", "bench/synth (synthetic profile)" },
		{ "exe", mods[0].path },
		{ "pid", "1" },
		{ "start_ns", num[4] },
		{ "end_ns", num[4] },
		{ "allocs", num[0] },
		{ "frees", num[1] },
		{ "bytes", num[2] },
		{ "bytes_freed", num[3] },
		{ "unknown_frees", "0" },
		{ "dropped", "0" },
		{ "reason", "exit" },
		{ "monitor", "bench/synth" },
		{ "unwinder", "none" },
	};
	format_begin_section(&w, FORMAT_SEC_INFO);
	format_put_u32(&w, (uint32_t)(sizeof kv / sizeof kv[0]));
	for (i = 0; i < (int)(sizeof kv / sizeof kv[0]); i++) {
		format_put_str(&w, kv[i][0]);
		format_put_str(&w, kv[i][1]);
	}
	format_end_section(&w);

	if (format_writer_finish(&w) < 0 || close(fd) < 0 || rename(tmp, argv[1]) < 0) {
		unlink(tmp);
		die("cannot write the output file");
	}
	fprintf(stderr, "synth: %llu stacks (%llu draws), %zu functions, %d modules\n",
		(unsigned long long)nstacks, (unsigned long long)draws, nfuncs, nmods);
	return 0;
}
