/* rt_nopie.c - built without PIE, takes malloc's address in its code, so
 * the executable gives malloc a canonical PLT entry (an undefined dynamic
 * symbol with a value), as Debian's python3 does: the monitor must still
 * see that its own malloc is the one called.  One block of 100 bytes
 * through the pointer, one of 33 by a direct call, both freed. */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	void *(*fp)(size_t) = argc > 5 ? NULL : malloc;
	void *p = fp(100), *q = malloc(33);

	free(q);
	free(p);
	return p == NULL;
}
