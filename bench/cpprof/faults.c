/*
 * faults.c - a page-fault workload for bench/cpprof/run: builds a 64 MiB
 * table in fresh memory (every page a minor fault), sums it, and frees it,
 * ROUNDS times.  Each page is written and read once: the cost per fault is
 * that of a program that uses the memory it faults in, not of a bare touch.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

#define SIZE (64u << 20)

__attribute__((noinline)) static uint64_t fill(uint64_t *p, size_t n, uint64_t seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = seed = seed * 6364136223846793005ull + 1442695040888963407ull;
	return seed;
}

__attribute__((noinline)) static uint64_t sum(const uint64_t *p, size_t n)
{
	uint64_t s = 0;
	for (size_t i = 0; i < n; i++)
		s += p[i] ^ (s >> 7);
	return s;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 16;
	uint64_t total = 0;

	for (int r = 0; r < rounds; r++) {
		uint64_t *p = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return 1;
		madvise(p, SIZE, MADV_NOHUGEPAGE);
		total += fill(p, SIZE / 8, (uint64_t)r);
		total += sum(p, SIZE / 8);
		munmap(p, SIZE);
	}
	printf("%llu\n", (unsigned long long)(total & 0xff));
	return 0;
}
