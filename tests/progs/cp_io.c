/* cp_io FILE: reads FILE in three functions with known byte counts, writes
 * to FILE.out, then waits 0.3 s on a pipe (io-time).  Prints the bytes. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char buf[65536];

__attribute__((noinline)) static long big_reads(int fd, int n)
{
	long got = 0;
	for (int i = 0; i < n; i++) {
		lseek(fd, 0, SEEK_SET);
		got += read(fd, buf, 10240);
	}
	return got;
}

__attribute__((noinline)) static long small_reads(int fd, int n)
{
	long got = 0;
	lseek(fd, 0, SEEK_SET);
	for (int i = 0; i < n; i++)
		got += read(fd, buf, 100);
	return got;
}

__attribute__((noinline)) static long stdio_reads(const char *path, int n)
{
	FILE *f = fopen(path, "rb");
	long got = 0;
	for (int i = 0; i < n; i++)
		got += (long)fread(buf, 1, 1000, f) * 1;
	fclose(f);
	return got;
}

__attribute__((noinline)) static long writes(const char *path, int n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	long put = 0;
	for (int i = 0; i < n; i++)
		put += write(fd, buf, 4096);
	close(fd);
	return put;
}

__attribute__((noinline)) static void wait_pipe(void)
{
	int p[2];
	char c;
	if (pipe(p) < 0)
		return;
	if (fork() == 0) {
		usleep(300000);
		(void)!write(p[1], "x", 1);
		_exit(0);
	}
	(void)!read(p[0], &c, 1);
}

int main(int argc, char **argv)
{
	char out[4096];
	int fd = open(argv[1], O_RDONLY);
	long a, b, c, w;

	if (fd < 0)
		return 1;
	a = big_reads(fd, 300);
	b = small_reads(fd, 20000);
	c = stdio_reads(argv[1], 1000);
	snprintf(out, sizeof out, "%s.out", argv[1]);
	w = writes(out, 500);
	wait_pipe();
	printf("big_reads %ld\nsmall_reads %ld\nstdio_reads %ld\nwrites %ld\n", a, b, c, w);
	return 0;
}
