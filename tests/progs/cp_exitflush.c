/*
 * cp_exitflush.c - for 54-cp-cli.t: main only registers getchar to run at
 * exit, where it waits for standard input, so the time sampled (-e real)
 * is in exit's handlers, called by __libc_start_call_main after main
 * returned.  No stack passes through main: exit is not main.
 */
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
	/* getchar's int is dropped: the x86-64 ABI returns it in a register */
	return atexit((void (*)(void))getchar) != 0;
}
