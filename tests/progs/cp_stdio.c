/*
 * cpprof's read-bytes and write-bytes through stdio's line and formatted
 * calls (tests/e2e/51-cp-io.t): by_fgets and by_getline read the file
 * named by argv[1] whole, out_printf and out_fputs write 100,000 lines
 * each to /dev/null; it prints the bytes each moved.  fputs is given a
 * string the compiler cannot see (it makes fputs of a constant an fwrite).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *volatile text;

__attribute__((noinline)) static long by_fgets(const char *path)
{
	FILE *f = fopen(path, "r");
	char b[256];
	long n = 0;

	while (f && fgets(b, sizeof b, f))
		n += (long)strlen(b);
	if (f)
		fclose(f);
	return n;
}

__attribute__((noinline)) static long by_getline(const char *path)
{
	FILE *f = fopen(path, "r");
	char *l = NULL;
	size_t cap = 0;
	ssize_t r;
	long n = 0;

	while (f && (r = getline(&l, &cap, f)) > 0)
		n += r;
	free(l);
	if (f)
		fclose(f);
	return n;
}

__attribute__((noinline)) static long out_printf(FILE *o, int k)
{
	long n = 0;

	for (int i = 0; i < k; i++)
		n += fprintf(o, "line %08d of the output\n", i);
	return n;
}

__attribute__((noinline)) static long out_fputs(FILE *o, int k)
{
	long n = 0;

	for (int i = 0; i < k; i++)
		if (fputs(text, o) >= 0)
			n += (long)strlen(text);
	return n;
}

int main(int argc, char **argv)
{
	FILE *o = fopen("/dev/null", "w");
	long a, b, c, d;

	if (argc < 2 || !o)
		return 2;
	text = strdup("a line of text, not a constant\n");
	a = by_fgets(argv[1]);
	b = by_getline(argv[1]);
	c = out_printf(o, 100000);
	d = out_fputs(o, 100000);
	fclose(o);
	printf("%ld %ld %ld %ld\n", a, b, c, d);
	return 0;
}
