/*
 * cp_plt.c - for 50-cp-cpu.t: main calls bump(), in a shared library of
 * its own (built from this file with -DLIB), through the PLT, so that a
 * fair part of the samples falls in the PLT's stub.  Each must keep main
 * as its caller (the PLT's CFA is a DWARF expression), and the stub is
 * named bump@plt.
 */
#include <stdio.h>

#ifdef LIB
int bump(int x)
{
	return x + 1;
}
#else
int bump(int x);

int main(void)
{
	int s = 0;

	for (long i = 0; i < 150000000L; i++)
		s = bump(s);
	printf("%d\n", s & 1);
	return 0;
}
#endif
