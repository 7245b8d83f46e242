/* shlib.c - the library half: an allocator in a shared object. */
#include <stdlib.h>

struct shlib_node {
	struct shlib_node *next;
	char payload[88];
};

__attribute__((noinline)) struct shlib_node *shlib_make(int n)
{
	struct shlib_node *head = NULL;
	for (int i = 0; i < n; i++) {
		struct shlib_node *x = malloc(sizeof(*x));
		x->next = head;
		head = x;
	}
	return head;
}
