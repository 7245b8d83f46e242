/*
 * sample.h - the sampled monitor's arithmetic (sample.c): where the next
 * sample falls, and what a sample is worth (issue 23).
 *
 * Sampling by bytes, as tcmalloc, Go's runtime and jemalloc do: each
 * thread counts down the bytes it allocates from a distance drawn from an
 * exponential distribution of mean R (MPROF_SAMPLE); the allocation that
 * takes it to zero or below is recorded, with its whole stack, and a new
 * distance drawn.  Bytes then arrive as a Poisson process of rate 1/R, so
 * an allocation of n bytes is sampled with probability 1 - exp(-n/R)
 * whatever came before it, and counting it 1 / (1 - exp(-n/R)) times (n
 * bytes each time) is an unbiased estimate of its count and bytes
 * (pprof's "unsampling" of heap profiles).
 *
 * The counters are integers: a sample counts floor(w) or floor(w) + 1
 * times, the one with probability w - floor(w), and its free takes back
 * exactly what its allocation added.  An object of 255 bytes or more
 * (where w is small enough for the choice to matter: below R / 255) draws
 * it from the thread's random numbers, and the address map keeps it
 * (addrmap.h's ADDRMAP_UP); a smaller one from a hash of its address (the
 * map keeps only its stack and size).  By the address alone, a block
 * freed and allocated again at one address rounded the same way every
 * time: a loop of 1 MiB blocks at R = 512 KiB estimated 1,720 or 3,470
 * allocations of 2,000, nothing between.
 *
 * No libm: the logarithm and exponential are computed here (a preloaded
 * library should not make a program load libm), to about 1e-12.
 */
#ifndef SAMPLE_H
#define SAMPLE_H

#include <stddef.h>
#include <stdint.h>

/* MPROF_SAMPLE_SEED, or 0: the random distances' seed (for tests: the
 * same samples every run of a program with one thread). */
extern uint64_t sample_seed __attribute__((visibility("hidden")));
/* The next distance, in bytes (>= 1), for mean R; rng is the thread's
 * state (seeded when 0). */
int64_t sample_next(uint64_t *rng, uint64_t r);
/* How many allocations of n bytes at p a sample stands for, for mean R:
 * the fraction by p's hash (n < SAMPLE_DRAWN). */
uint64_t sample_count(uint64_t n, uint64_t r, uintptr_t p);
/* From this size on, the fraction is drawn (sample_count_draw) and kept:
 * addrmap.h's ADDRMAP_SMALL, the sizes with room for it. */
#define SAMPLE_DRAWN 255
/* The same, the fraction drawn from the thread's rng: *up is whether the
 * count is the whole part's plus one; sample_count_up gives it again. */
uint64_t sample_count_draw(uint64_t n, uint64_t r, uint64_t *rng, int *up);
uint64_t sample_count_up(uint64_t n, uint64_t r, int up);

/* The same arithmetic for tests and the tools: ln(x) for x > 0, and
 * 1 - exp(-x) for x >= 0. */
double sample_ln(double x);
double sample_one_minus_exp(double x);

#endif
