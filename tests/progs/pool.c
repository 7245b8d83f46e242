/* pool.c - a pool allocator that reports its objects to mprof (mprof.h:
 * mprof_category, mprof_alloc, mprof_free), for tests/e2e/88-custom.t.
 *
 * Two pools carve fixed-size objects out of one malloc'd chunk each, 24
 * bytes apart (closer than the address map's granules), and reuse freed
 * ones.  build_graph takes 1000 nodes (24 bytes, category "node") and
 * 3000 edges (40 bytes, "edge"), and gives 1000 edges back; churn takes
 * and gives back 500 nodes twice (the freed ones are reused).  Kept at
 * exit: 1000 nodes (24000 bytes) and 2000 edges (80000 bytes), and both
 * chunks (malloc's).  Prints the category numbers mprof_category gave:
 * "categories 1 2" under the monitor, "categories 0 0" without.
 */
#include <stdio.h>
#include <stdlib.h>

#include <mprof.h>

struct pool {
	char *chunk;
	size_t objsize, used, cap;
	void *freelist;
	int category;
};

static void pool_init(struct pool *p, size_t objsize, size_t n, const char *name)
{
	p->chunk = malloc(objsize * n);
	p->objsize = objsize;
	p->used = 0;
	p->cap = n;
	p->freelist = NULL;
	p->category = mprof_category(name);
}

void *pool_get(struct pool *p)
{
	void *o;

	if (p->freelist) {
		o = p->freelist;
		p->freelist = *(void **)o;
	} else if (p->used < p->cap) {
		o = p->chunk + p->objsize * p->used++;
	} else {
		return NULL;
	}
	mprof_alloc(o, p->objsize, p->category);
	return o;
}

void pool_put(struct pool *p, void *o)
{
	mprof_free(o);
	*(void **)o = p->freelist;
	p->freelist = o;
}

static struct pool nodes, edges;
static void *node[1000], *edge[3000], *tmp[500];

void build_graph(void)
{
	for (int i = 0; i < 1000; i++)
		node[i] = pool_get(&nodes);
	for (int i = 0; i < 3000; i++)
		edge[i] = pool_get(&edges);
	for (int i = 0; i < 3000; i += 3)
		pool_put(&edges, edge[i]);
}

void churn(void)
{
	for (int round = 0; round < 2; round++) {
		for (int i = 0; i < 500; i++)
			tmp[i] = pool_get(&nodes);
		for (int i = 0; i < 500; i++)
			pool_put(&nodes, tmp[i]);
	}
}

int main(void)
{
	pool_init(&nodes, 24, 2000, "node");
	pool_init(&edges, 40, 3000, "edge");
	build_graph();
	churn();
	printf("categories %d %d\n", nodes.category, edges.category);
	return 0;
}
