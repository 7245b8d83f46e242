/* tl_late_peak.c - the heap peaks (150000 bytes) after the timeline's last
 * stored point, then a free: 86-timeline.t checks the peak's allocated. */
#include <stdlib.h>
#include <unistd.h>
int main(void)
{
	char *a = malloc(100000), *b = malloc(50000);
	a[0] = b[0] = 1;
	usleep(200000);
	free(b);
	usleep(100000);
	return a[0] - 1;
}
