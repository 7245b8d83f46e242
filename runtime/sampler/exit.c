/*
 * exit.c - owns the sampler's _exit and _Exit: a program that ends with
 * them runs no destructor, so the collector saves first (sampler.c's
 * cp_exit_now: unless a launcher's keep has the tables), then ends the
 * process as the real _exit does (exits.h).  exit_group called directly
 * (Go's runtime) and a signal's death pass no function of ours: only a
 * launcher's keep (keep.h) saves those.
 */
#include "exits.h"
#include "state.h"

CP_VIS __attribute__((noreturn)) void _exit(int status)
{
	static exits_fn *real;

	cp_exit_now(status);
	exits_next("_exit", &real, status);
}

CP_VIS __attribute__((noreturn)) void _Exit(int status)
{
	static exits_fn *real;

	cp_exit_now(status);
	exits_next("_Exit", &real, status);
}
