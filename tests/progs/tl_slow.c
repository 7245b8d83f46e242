/* tl_slow.c - a heap that stays small (200 KB in 2000-byte steps every
 * 3 ms, then freed): 86-timeline.t checks the timeline has points on
 * the way up, by time, though it never moves by 512 KiB. */
#include <stdlib.h>
#include <unistd.h>
int main(void)
{
	static char *p[100];
	for (int i = 0; i < 100; i++) {
		p[i] = malloc(2000);
		p[i][0] = 1;
		usleep(3000);
	}
	for (int i = 0; i < 100; i++)
		free(p[i]);
	usleep(100000);
	return 0;
}
