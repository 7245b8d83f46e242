/*
 * cp_epilogue.c - for 50-cp-cpu.t: leaf() saves six registers and spends
 * a fair part of its time in its epilogue, popping them, where GCC's CFI
 * rows still say where rbp was saved after it was popped.  Every sample
 * in leaf() must keep its callers, caller() and main().
 */
#include <stdio.h>

__attribute__((noinline)) static unsigned long leaf(unsigned long a, unsigned long b)
{
	unsigned long x = a, y = b, z = a ^ b, w = a + b, v = a * 3;

	for (int i = 0; i < 3; i++) {
		x += y * z;
		y ^= x >> 3;
		z += w;
		w ^= v;
		v += x;
		__asm__ volatile("" ::"r"(x), "r"(y), "r"(z), "r"(w), "r"(v));
	}
	__asm__ volatile("" ::: "rbx", "rbp", "r12", "r13", "r14", "r15");
	return x ^ y ^ z ^ w ^ v;
}

__attribute__((noinline)) static unsigned long caller(unsigned long n)
{
	unsigned long s = 0;

	for (unsigned long i = 0; i < n; i++)
		s += leaf(i, s);
	return s;
}

int main(int argc, char **argv)
{
	(void)argv;
	printf("%lu\n", caller(argc > 1 ? 1ul : 150000000ul) & 1);
	return 0;
}
