/* tests/e2e/60-corpus.t: gcc compiles and links this under mprof and
 * cpprof (the driver forks and execs cc1, as, collect2, ld); the result
 * must be the same executable as the bare compile's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct node {
	struct node *next;
	char word[16];
};

static struct node *push(struct node *list, int i)
{
	struct node *n = malloc(sizeof *n);

	if (!n)
		exit(1);
	snprintf(n->word, sizeof n->word, "w%d", i * 37 % 1009);
	n->next = list;
	return n;
}

int main(void)
{
	struct node *list = NULL;
	size_t longest = 0;
	int i;

	for (i = 0; i < 1000; i++)
		list = push(list, i);
	while (list) {
		struct node *next = list->next;

		if (strlen(list->word) > longest)
			longest = strlen(list->word);
		free(list);
		list = next;
	}
	printf("longest word: %zu\n", longest);
	return 0;
}
