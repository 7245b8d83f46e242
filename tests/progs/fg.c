/* fg.c - the mprof paper's recursion example as a program: main calls F, F
 * calls G, G calls F, F calls G, G allocates 10 bytes.  main also allocates
 * 10 bytes through H, so F's and G's self + desc must be 50%, not 100%. */
#include <stdlib.h>

void *keep[4];
void *G(int depth);

__attribute__((noinline)) void *F(int depth)
{
	void *p = G(depth + 1);
	__asm__ volatile("" ::: "memory"); /* no tail call */
	return p;
}

__attribute__((noinline)) void *G(int depth)
{
	void *p = depth < 3 ? F(depth + 1) : malloc(10);
	__asm__ volatile("" ::: "memory");
	return p;
}

__attribute__((noinline)) void *H(void)
{
	void *p = malloc(10);
	__asm__ volatile("" ::: "memory");
	return p;
}

int main(void)
{
	keep[0] = F(0);
	keep[1] = H();
	return 0;
}
