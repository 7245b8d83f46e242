/*
 * c_statics.c - C's static functions of one name in two files, which are
 * two functions (tests/e2e/87-c-names.t).  Built four times: as one.c
 * with -DPART=1, as two.c with -DPART=2, as three.c with -DPART=3, and
 * with -DMAIN.
 *
 * part_N calls its file's load() 5 * N * N times for N * 500 bytes
 * (part_1: 5 x 500, part_2: 20 x 1000, part_3: 45 x 1500), all kept:
 * static in one.c and two.c, external in three.c; its static inline mk()
 * (inlined) N + 1 times for 32 * N bytes, kept; its static spin() N * 10^8
 * iterations.  main runs the parts its arguments name (default: 1 and 2),
 * and spins only with "spin" first.
 */
#include <stdlib.h>
#include <string.h>

#ifdef MAIN
void part_1(int);
void part_2(int);
void part_3(int);

int main(int argc, char **argv)
{
	int spin = argc > 1 && !strcmp(argv[1], "spin"), any = 0;

	for (int i = 1 + spin; i < argc; i++) {
		any = 1;
		if (!strcmp(argv[i], "1"))
			part_1(spin);
		if (!strcmp(argv[i], "2"))
			part_2(spin);
		if (!strcmp(argv[i], "3"))
			part_3(spin);
	}
	if (!any) {
		part_1(spin);
		part_2(spin);
	}
	return 0;
}
#else
#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)

void *CAT(kept_, PART)[128];
volatile unsigned long CAT(sink_, PART);

#if PART == 3
void *load(size_t n);
#else
static
#endif
__attribute__((noinline, noclone)) void *load(size_t n)
{
	void *p = malloc(n);

	memset(p, PART, n);
	return p;
}

static inline void *mk(size_t n)
{
	return calloc(1, n);
}

__attribute__((noinline, noclone)) static void spin(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		CAT(sink_, PART) += i;
}

void CAT(part_, PART)(int spins)
{
	int k = 0;

	for (int i = 0; i < 5 * PART * PART; i++)
		CAT(kept_, PART)[k++] = load(500 * PART);
	for (int i = 0; i < PART + 1; i++)
		CAT(kept_, PART)[k++] = mk(32 * PART);
	if (spins)
		spin(PART * 100000000ul);
}
#endif
