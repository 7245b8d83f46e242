/*
 * vdso_dump.c - writes this process's vDSO image (an ELF shared object the
 * kernel maps into every process) to stdout, so a test can read its call
 * frame information with readelf.
 */
#include <stdio.h>
#include <string.h>

int main(void)
{
	FILE *maps = fopen("/proc/self/maps", "r");
	char line[512];
	unsigned long lo, hi;

	if (!maps)
		return 1;
	while (fgets(line, sizeof line, maps))
		if (strstr(line, "[vdso]") && sscanf(line, "%lx-%lx", &lo, &hi) == 2)
			return fwrite((const void *)lo, 1, hi - lo, stdout) == hi - lo ? 0 : 1;
	return 1;
}
