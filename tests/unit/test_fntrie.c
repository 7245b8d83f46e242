/*
 * test_fntrie.c - the HTML report's trie (fntrie.c) against the trie
 * spelled out by hand: one node per distinct prefix of the stacks' names,
 * parents first, each stack at the node of its whole path, breadth-first
 * ids; on stacks that share the model's nodes and stacks that only share
 * names, on runs hung from the middle of others, and with the frames
 * outer to main dropped as model_from_profile drops them.
 */
#include "model/fntrie.h"
#include "model/model.h"
#include "base/util.h"
#include "tap.h"

#include <stdlib.h>

#define MAXN 4096

static uint32_t par[MAXN], fns[MAXN];
static size_t nemit;

static void emit(void *ctx, uint32_t parent, uint32_t fn)
{
	(void)ctx;
	if (nemit < MAXN) {
		par[nemit] = parent;
		fns[nemit] = fn;
	}
	nemit++;
}

/* Node x's path of names, joined by '>'. */
static void node_path(const struct model *m, uint32_t x, char *out, size_t len)
{
	uint32_t up[256];
	int n = 0;

	out[0] = 0;
	for (; x != FNTRIE_ROOT && n < 256; x = par[x])
		up[n++] = x;
	while (n--) {
		strncat(out, strtab_get(m->fns, fns[up[n]]), len - strlen(out) - 1);
		if (n)
			strncat(out, ">", len - strlen(out) - 1);
	}
}

/* Stack i's path of names as the model has it. */
static void stack_path(const struct model *m, size_t i, char *out, size_t len)
{
	uint32_t path[256], n = model_path(m, &m->stacks[i], path);

	out[0] = 0;
	for (uint32_t j = 0; j < n; j++) {
		strncat(out, strtab_get(m->fns, m->sites[path[j]].fn), len - strlen(out) - 1);
		if (j + 1 < n)
			strncat(out, ">", len - strlen(out) - 1);
	}
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * Build the trie of m and check it against the prefixes of its stacks:
 * 1 if every node is a distinct prefix, every prefix a node, every
 * parent before its child, ids level by level, and every stack at its
 * path's node.
 */
static int check(const struct model *m, const char *what)
{
	uint32_t *leaf = calloc(m->nstacks + 1, sizeof(uint32_t));
	char **pre = calloc(MAXN, sizeof(char *)), **nodes = calloc(MAXN, sizeof(char *));
	size_t npre = 0, nn, good = 1, level_prev = 0;
	char buf[4096];

	nemit = 0;
	nn = fntrie_build(m, leaf, emit, NULL);
	good &= nn == nemit && nn < MAXN;
	for (size_t x = 0; good && x < nn; x++) {
		size_t level = 0;
		for (uint32_t y = par[x]; y != FNTRIE_ROOT; y = par[y])
			level++;
		good &= par[x] == FNTRIE_ROOT || par[x] < x;
		good &= level >= level_prev; /* breadth-first */
		level_prev = level;
		node_path(m, (uint32_t)x, buf, sizeof buf);
		nodes[x] = xstrdup(buf);
	}
	/* Every prefix of every stack's path. */
	for (size_t i = 0; good && i < m->nstacks; i++) {
		char *p;
		stack_path(m, i, buf, sizeof buf);
		if (!buf[0]) {
			good &= leaf[i] == FNTRIE_ROOT;
			continue;
		}
		good &= leaf[i] < nn;
		if (good) {
			char node[4096];
			node_path(m, leaf[i], node, sizeof node);
			good &= !strcmp(node, buf);
		}
		for (p = buf; good && npre < MAXN; p++)
			if (*p == '>' || !*p) {
				pre[npre++] = strndup(buf, (size_t)(p - buf));
				if (!*p)
					break;
			}
	}
	if (good) {
		size_t u = 0;
		qsort(pre, npre, sizeof(char *), cmp_str);
		for (size_t k = 0; k < npre; k++)
			if (!u || strcmp(pre[k], pre[u - 1]))
				pre[u++] = pre[k];
			else
				free(pre[k]);
		npre = u;
		qsort(nodes, nn, sizeof(char *), cmp_str);
		good &= npre == nn;
		for (size_t k = 0; good && k < nn; k++)
			good &= !strcmp(pre[k], nodes[k]);
	}
	ok(good, "%s: %zu nodes, one per distinct prefix, stacks at their paths", what, nn);
	for (size_t k = 0; k < MAXN; k++) {
		free(k < npre ? pre[k] : NULL);
		free(k < nn ? nodes[k] : NULL);
	}
	free(pre);
	free(nodes);
	free(leaf);
	return (int)good;
}

static const uint64_t one[MPROF_NCOUNTERS] = { 1 };
static struct strtab *names_kept; /* model_add's names are the caller's */

/* A stack from its names joined by '>'. */
static void add(struct model *m, const char *joined)
{
	const char *names[64];
	char *copy = xstrdup(joined), *save = NULL;
	uint32_t n = 0;

	for (char *t = strtok_r(copy, ">", &save); t && n < 64; t = strtok_r(NULL, ">", &save))
		names[n++] = strtab_get(names_kept, strtab_intern(names_kept, t));
	model_add(m, names, n, one);
	free(copy);
}

int main(void)
{
	struct model m;

	names_kept = strtab_new();
	/* Shared prefixes: model_add shares the frames a stack has in common
	 * with the one before, so c's run hangs from b's node a, and the
	 * later main>a>b is a copy the trie must merge. */
	model_init(&m);
	add(&m, "main>a>b");
	add(&m, "main>a>c");
	add(&m, "main>d");
	add(&m, "x>y");
	add(&m, "main>a>b>e");
	add(&m, "main>a");
	add(&m, "main");
	add(&m, "x>y");
	check(&m, "shared and copied prefixes");
	is_int(m.nstacks, 8, "eight stacks");
	model_release(&m);

	/* A stack with no frame: FNTRIE_ROOT, left to the caller. */
	model_init(&m);
	add(&m, "main>f");
	model_add(&m, NULL, 0, one);
	check(&m, "an empty stack");
	model_release(&m);

	/* Frames outer to main dropped, as model_from_profile does: a path
	 * starts at the outermost main, where there is one; _start>libc is
	 * on no stack's path, and no node. */
	model_init(&m);
	add(&m, "_start>libc>main>a");
	add(&m, "_start>libc>main>b");
	add(&m, "_start>x");
	add(&m, "_start>libc>main");
	add(&m, "_start>libc>main>a>main>c");
	for (size_t i = 0; i < m.nstacks; i++) {
		uint32_t path[16], n = model_path(&m, &m.stacks[i], path);
		for (uint32_t j = 0; j < n; j++)
			if (!strcmp(strtab_get(m.fns, m.sites[path[j]].fn), "main")) {
				m.stacks[i].n -= j;
				break;
			}
	}
	if (check(&m, "outer frames dropped")) {
		int libc = 0;
		for (size_t x = 0; x < nemit; x++)
			libc |= !strcmp(strtab_get(m.fns, fns[x]), "libc");
		ok(!libc, "no node for frames no path keeps");
	} else {
		ok(0, "no node for frames no path keeps");
	}
	model_release(&m);

	/* Random stacks over a few names, in random order: copies, runs
	 * hung from runs, deep and shallow. */
	srand(7);
	for (int round = 0; round < 20; round++) {
		char what[64];
		model_init(&m);
		for (int s = 0; s < 60; s++) {
			char path[512] = "";
			int depth = 1 + rand() % 12;
			for (int d = 0; d < depth; d++) {
				char name[8];
				snprintf(name, sizeof name, "%s%c", d ? ">" : "", 'a' + rand() % 4);
				strcat(path, name);
			}
			add(&m, path);
		}
		snprintf(what, sizeof what, "random stacks, round %d", round);
		check(&m, what);
		model_release(&m);
	}
	strtab_free(names_kept);
	return tap_done();
}
