/*
 * cf_ctorlib.c - a shared library, built with -finstrument-functions,
 * whose constructor calls its instrumented functions: the loader runs
 * it before libcfprof's own constructor (tests/e2e/94-cf-early.t), as
 * jq's libjq runs jv_mem_uninit_setup.  ctor_init calls ctor_walk(5),
 * which calls ctor_leaf 5 times; cf_ctor's main calls ctor_walk(3).  The
 * library counts the calls itself, for the program to print.
 */
#include <stdio.h>

int ctor_walk_calls, ctor_leaf_calls;
static volatile int sink;

__attribute__((noinline)) void ctor_leaf(int i)
{
	ctor_leaf_calls++;
	sink += i;
}

__attribute__((noinline)) void ctor_walk(int n)
{
	ctor_walk_calls++;
	for (int i = 0; i < n; i++)
		ctor_leaf(i);
}

__attribute__((constructor)) static void ctor_init(void)
{
	ctor_walk(5);
}
