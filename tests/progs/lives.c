/*
 * lives.c - lifetimes (issue 24, item 4): shortlived makes 80 MB of
 * objects each freed at once, longlived 4 MB kept to the end, in four
 * rounds: every lifetime sample of shortlived's lived under 10 us with
 * less than 4 KiB allocated meanwhile, every one of longlived's is live.
 */
#include <stdlib.h>
#include <string.h>
static void *kept[4096];
__attribute__((noinline)) static void shortlived(void) { for (int i = 0; i < 20000; i++) { char *p = malloc(1000); __asm__ volatile("" : "+r"(p) :: "memory"); p[0] = 1; free(p); } }
__attribute__((noinline)) static void longlived(int k) { for (int i = 0; i < 1000; i++) { char *p = malloc(1000); memset(p, 1, 1000); kept[(k * 1000 + i) % 4096] = p; } }
int main(void) { for (int r = 0; r < 4; r++) { shortlived(); longlived(r); } return 0; }
